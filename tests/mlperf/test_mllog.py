"""The MLLOG scanner against hand-made lines and against the official parser."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.mlperf.mllog import (
    SCANNER,
    Payloads,
    find_payloads,
    payloads_python,
    select_records,
)
from gpuscale.mlperf.parse import read_result_file
from gpuscale.mlperf.runlog import read_run_log

from .logbuilder import line, result_log


def scan_mllog(data: bytes):
    """Every record of a log in file order, and the lines that failed."""
    by_key, failures = select_records(find_payloads(data))
    events = sorted((pair for group in by_key.values() for pair in group), key=lambda p: p[0])
    return [record for _, record in events], failures


def mllog_payloads(data: bytes) -> list[bytes]:
    return find_payloads(data).lines()


def test_rank_prefix_and_noise_are_ignored() -> None:
    data = (
        "noise\n0: "
        + line("run_start", None, 5)
        + "\n1: "
        + line("run_stop", None, 65005, status="success")
    ).encode()
    events, failures = scan_mllog(data)
    assert failures == []
    assert [e.key for e in events] == ["run_start", "run_stop"]
    assert [e.time_ms for e in events] == [5.0, 65005.0]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_line_endings(newline: bytes) -> None:
    data = newline.join([line("a", 1, 1).encode(), b"junk", line("b", 2, 2).encode()])
    events, failures = scan_mllog(data)
    assert [e.key for e in events] == ["a", "b"] and failures == []


def test_last_token_on_a_line_wins() -> None:
    data = ("garbage :::MLLOG {broken " + line("kept", 1, 3)).encode()
    events, failures = scan_mllog(data)
    assert [e.key for e in events] == ["kept"] and failures == []


def test_truncated_last_line_is_a_failure_not_an_exception() -> None:
    data = (line("a", 1, 1) + "\n" + line("b", 2, 2)[:-7]).encode()
    events, failures = scan_mllog(data)
    assert [e.key for e in events] == ["a"]
    assert len(failures) == 1 and failures[0].index == 1


@pytest.mark.parametrize(
    "payload, ok",
    [
        (b'{"time_ms": "12", "key": "k", "value": 1, "metadata": {}}', True),
        (b'{"time_ms": "1.2.3", "key": "k", "value": 1, "metadata": {}}', False),
        (b'{"time_ms": 1, "key": "k", "value": NaN, "metadata": {}}', True),
        (b'{"time_ms": 1, "key": "k", "metadata": {}}', False),
        (b"[1, 2]", False),
        (b'{"time_ms": 1, "key": "k", "value": "\xe9", "metadata": {}}', True),
        (b'{"time_ms": 1, "key": "k", "value": 1, "metadata": {}}\x0c', True),
        (b"", False),
    ],
)
def test_payload_rules(payload: bytes, ok: bool) -> None:
    selected, failures = select_records(Payloads.of([payload]))
    assert (len(selected) == 1) is ok
    assert len(failures) == (0 if ok else 1)


def test_run_start_stop_selection_matches_official_walk() -> None:
    # run_stop before any run_start: the last such run_stop and the first run_start count.
    lines = [
        line("run_stop", None, 10, status="success"),
        line("run_stop", None, 20, status="aborted"),
        line("run_start", None, 5),
        line("run_start", None, 7),
        line("run_stop", None, 99, status="success"),
    ]
    log = read_run_log("\n".join(lines).encode())
    assert (log.run_start_ms, log.run_stop_ms, log.run_stop_status) == (5.0, 20.0, "aborted")


def test_repeated_run_start_uses_last_before_first_stop() -> None:
    lines = [
        line("run_start", None, 5),
        line("run_start", None, 7),
        line("run_stop", None, 60007, status="success"),
        line("run_start", None, 9),
    ]
    log = read_run_log("\n".join(lines).encode())
    assert log.time_to_train_ms == 60000.0


def test_full_synthetic_log_is_compliant() -> None:
    data = result_log(ranks=4).encode()
    row = read_result_file(data, "v4.1")
    assert (row["status"], row["problem"], row["counted"]) == ("success", "", True)
    log = read_run_log(data)
    assert log.parse_failures == 0
    assert log.benchmark == "bert" and log.global_batch_size == 256


_line_text = st.one_of(
    st.text(max_size=80),
    st.builds(
        lambda k, v, t: line(k, v, t),
        st.sampled_from(["run_start", "run_stop", "x"]),
        st.one_of(st.none(), st.integers(), st.floats(allow_nan=True), st.text(max_size=5)),
        st.floats(allow_nan=True, allow_infinity=True),
    ),
    st.builds(lambda s: ":::MLLOG " + s, st.text(max_size=60)),
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_scanner_never_raises_on_bytes(data: bytes) -> None:
    scan_mllog(data)
    read_run_log(data)


@settings(max_examples=300, deadline=None)
@given(st.lists(_line_text, max_size=12), st.sampled_from(["\n", "\r\n", "\r"]))
def test_scanner_agrees_with_official_parser(lines: list[str], newline: str) -> None:
    mlp_parser = pytest.importorskip("mlperf_logging.compliance_checker.mlp_parser.ruleset_410")
    data = newline.join(lines).encode("utf-8", errors="surrogatepass")
    read_run_log(data)  # never raises
    # Read the bytes the way the official parser reads a file: latin-1, universal newlines.
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="latin-1", newline=None)
    try:
        official, failed = mlp_parser.parse_generator(stream)
    except (KeyError, TypeError):
        return  # the official parser crashes on such records; gpuscale reports them
    events, failures = scan_mllog(data)
    assert len(failures) == len(failed)
    assert [(e.key, repr(e.time_ms)) for e in events] == [
        (str(o.key), repr(o.timestamp)) for o in official
    ]


def test_payloads_are_json_texts() -> None:
    data = (line("a", {"x": 1}, 1) + "\n").encode()
    assert json.loads(mllog_payloads(data)[0])["value"] == {"x": 1}


def test_bad_time_on_any_line_invalidates_the_run() -> None:
    # The official parser rejects float("x") on every line, whatever its key.
    bad = line("weights_initialization", None, 0).replace('"time_ms": 0', '"time_ms": "x"')
    log = read_run_log((result_log() + bad + "\n").encode())
    assert log.parse_failures == 1


def test_record_without_metadata_outside_read_keys_is_ignored() -> None:
    # The official parser crashes on it (KeyError); nothing gpuscale reads depends on it.
    odd = '{"time_ms": 5, "key": "weights_initialization", "value": null}'
    data = (result_log() + ":::MLLOG " + odd + "\n").encode()
    assert read_run_log(data).parse_failures == 0
    assert read_result_file(data, "v4.1")["problem"] == ""


# Pieces that make the scanner's edge cases likely: tokens split, doubled, at line ends.
_scan_pieces = st.lists(
    st.one_of(
        st.sampled_from(
            [b":::MLLOG ", b":::MLLOG", b"::", b":", b"\n", b"\r", b"\r\n", b" ", b"{}", b"\x00"]
        ),
        st.binary(max_size=12),
    ),
    max_size=40,
).map(b"".join)


def _c_scanner():
    return pytest.importorskip(
        "gpuscale.mlperf._scan", reason="C scanner not built (no compiler at install)"
    )


@settings(max_examples=1000, deadline=None)
@given(st.one_of(_scan_pieces, st.binary(max_size=300)))
def test_c_scanner_gives_the_regex_path_bytes(data: bytes) -> None:
    assert _c_scanner().payloads(data) == payloads_python(data)


def test_c_scanner_on_a_whole_log_and_on_edges() -> None:
    scan = _c_scanner().payloads
    data = result_log(ranks=8).encode()
    for variant in (data, data.replace(b"\n", b"\r\n"), data.replace(b"\n", b"\r"), data[:-5]):
        assert scan(variant) == payloads_python(variant)
    assert scan(b"") == (0, b"")
    assert scan(b":::MLLOG ") == (1, b"")
    assert scan(b"a:::MLLOG x:::MLLOG y\r\n:::MLLOG z") == (2, b"y\nz")
    assert scan(memoryview(b"\n:::MLLOG {}")) == (1, b"{}")
    with pytest.raises(TypeError):
        scan("text, not bytes")


def test_c_scanner_is_built_where_a_compiler_is() -> None:
    import shutil
    import sysconfig
    from pathlib import Path

    header = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not (shutil.which("cc") or shutil.which("gcc")) or not header.exists():
        pytest.skip("no C compiler or Python headers: the regex path is the one used")
    assert SCANNER == "C", "a compiler is here but the install did not build the scanner"


def test_without_the_c_scanner_a_log_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuscale.mlperf import mllog

    data = (result_log(ranks=4) + "noise\r\n" + line("x", 1, 1) + "\r").encode()
    with_c = read_run_log(data)
    monkeypatch.setattr(mllog, "_payloads_c", None)
    assert mllog.find_payloads(data) == Payloads(*payloads_python(data))
    assert read_run_log(data) == with_c


def test_a_line_is_judged_by_each_rulesets_own_checks() -> None:
    # v3.0's block_start wants epoch_count, v4.1's epoch_count or samples_count: the
    # memoised verdicts of one ruleset must not leak into the other.
    from gpuscale.mlperf import compliance

    # A block_start with samples_count and no epoch_count (the builder writes both).
    data = result_log().replace(', "epoch_count": 1', "").encode()
    compliance._VERDICTS.clear()
    fresh = {r: read_result_file(data, r)["problem"] for r in ("v3.0", "v4.1")}
    for order in (("v4.1", "v3.0"), ("v3.0", "v4.1")):
        compliance._VERDICTS.clear()
        for round_name in order:
            assert read_result_file(data, round_name)["problem"] == fresh[round_name]
    assert "block_start" in fresh["v3.0"] and "block_start" not in fresh["v4.1"]
