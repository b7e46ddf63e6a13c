"""The parsers documented as never raising do not raise, on any input (bounded fuzzing).

``GPUSCALE_FUZZ_EXAMPLES`` raises the number of examples per test (CI: 200).
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.mlperf.mllog import find_payloads, select_records
from gpuscale.mlperf.parse import read_result_file
from gpuscale.mlperf.power import read_power_log
from gpuscale.mlperf.runlog import read_run_log
from gpuscale.mlperf.systems import SystemDescriptionError, parse_system

from .logbuilder import result_log

EXAMPLES = int(os.environ.get("GPUSCALE_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# JSON values that break naive code: huge and non-finite numbers, deep nesting, odd text.
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["1e999", "-1", "0", "NaN", "$x$", "[/]", "\u00e9"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_keys = st.sampled_from(
    [
        "run_start",
        "run_stop",
        "init_start",
        "init_stop",
        "eval_accuracy",
        "submission_benchmark",
        "submission_division",
        "global_batch_size",
        "tracked_stats",
        "power_reading",
        "power_measurement_start",
        "power_measurement_stop",
        "conversion_eff",
        "interconnect_power_est",
        "block_start",
    ]
)


def _record_line(key: str, value, metadata, time_ms) -> bytes:
    payload = {"time_ms": time_ms, "key": key, "value": value, "metadata": metadata}
    return b":::MLLOG " + json.dumps(payload, allow_nan=True).encode()


_lines = st.builds(
    _record_line,
    _keys,
    _values,
    st.one_of(
        st.dictionaries(
            st.sampled_from(["status", "samples_count", "epoch_num", "metric"]), _scalars
        ),
        _values,
    ),
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(10**30), 10**30),
        st.text(max_size=5),
    ),
)
_junk = st.one_of(st.binary(max_size=60), st.just(b"\xff\xfe:::MLLOG {"), st.just(b"[" * 3000))
_logs = st.lists(st.one_of(_lines, _junk), max_size=25).map(lambda parts: b"\n".join(parts))
# A real compliant log with fuzzed lines spliced in: the paths past the first checks.
_spliced = st.builds(
    lambda extra, at: (lambda lines: b"\n".join(lines[:at] + extra + lines[at:]))(
        result_log().encode().split(b"\n")
    ),
    st.lists(st.one_of(_lines, _junk), max_size=6),
    st.integers(0, 30),
)


@FUZZ
@given(st.one_of(_logs, _spliced, st.binary(max_size=2000)))
def test_log_parsers_never_raise(data: bytes) -> None:
    select_records(find_payloads(data))
    read_run_log(data)
    for round_name in ("v4.1", "v3.0", "v9.9"):
        row = read_result_file(data, round_name)
        minutes = row["time_to_train_min"]
        assert minutes is None or 0 < minutes < float("inf")


@FUZZ
@given(st.one_of(_logs, st.binary(max_size=500)), st.sampled_from(["node", "switch"]))
def test_power_parser_never_raises(data: bytes, kind: str) -> None:
    log = read_power_log(data, kind)
    assert log.mean_power_w is None or 0 <= log.mean_power_w <= 200_000


_system = st.one_of(
    st.binary(max_size=300),
    st.dictionaries(
        st.sampled_from(
            [
                "number_of_nodes",
                "accelerators_per_node",
                "accelerator_model_name",
                "system_name",
                "submitter",
                "division",
                "status",
                "host_processors_per_node",
            ]
        ),
        _values,
        max_size=8,
    ).map(lambda d: json.dumps(d, allow_nan=True).encode()),
    st.integers(1, 5000).map(lambda n: b"[" * n + b"]" * n),
)


@FUZZ
@given(_system)
def test_system_parser_raises_only_its_own_error(data: bytes) -> None:
    try:
        record = parse_system(data, round_name="v4.1", org="o", system_id="s")
    except SystemDescriptionError:
        return
    n = record.row["accelerators"]
    assert n is None or 1 <= n <= 100_000 * 4_096


@pytest.mark.parametrize("metadata", [b"25386091460", b"-1", b"[123, 34]", b"{}"])
def test_metadata_that_is_no_object_is_read_not_allocated(metadata: bytes) -> None:
    """Found by the fuzz above: a line the fallback parser read holds Python objects, and
    ``bytes(25386091460)`` made 25 GB of zeros (MemoryError), ``bytes(-1)`` raised."""
    start = b':::MLLOG {"time_ms": 0.0, "key": "run_start", "value": null, "metadata": {}}'
    stop = b':::MLLOG {"time_ms": 0.0, "key": "run_stop", "value": [Infinity], "metadata": '
    row = read_result_file(b"\n".join([start, start, stop + metadata + b"}"]), "v4.1")
    assert not row["counted"] and row["time_to_train_min"] is None
