"""``advise(request, bench=, topology=, collectives=)`` reads no file: the files a request
names are read first by ``advice.api.load_advice_data`` (typed errors naming the file),
and the report's bench section is given the advice, it computes none."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gpuscale.advice.api import advise, load_advice_data
from gpuscale.advice.request import AdviceRequest
from gpuscale.bench.results import ResultsError, load_bench
from gpuscale.bench.results_file import append_result

from ..builders import bench_record


def test_advise_reads_no_file_the_loader_does(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.txt"
    request = AdviceRequest(
        params=7e6, step_ms=20, batch=64, interconnect="pcie-phb", topo=str(missing)
    )
    advice = advise(request)  # the topology file is the loader's to read, not advise's
    assert list(advice.predictions["accelerators"]) == [1, 2, 4, 8]
    with pytest.raises(ValueError, match=r"nowhere\.txt"):
        load_advice_data(request)
    (tmp_path / "empty.jsonl").write_text("{}\n")
    with pytest.raises(ResultsError, match=r"empty\.jsonl"):
        load_advice_data(AdviceRequest(bench=str(tmp_path / "empty.jsonl")))


def test_advise_takes_a_request_and_a_table_only() -> None:
    with pytest.raises(TypeError, match="bench table"):
        advise(AdviceRequest(params=7e6, step_ms=20), bench="results.jsonl")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="AdviceRequest"):
        advise({"params": 7e6, "step_ms": 20})  # type: ignore[arg-type]


@pytest.mark.parametrize("typed", ["no", 0, 1, None])
def test_a_yes_no_field_takes_a_bool_only(typed: object) -> None:
    """``explain="no"`` and ``allow_flagged="no"`` were kept as given, read as yes."""
    for name in ("explain", "allow_flagged"):
        with pytest.raises(TypeError, match=f"^{name} must be True or False, not "):
            AdviceRequest(params=7e6, step_ms=20, batch=64, **{name: typed})
    request = AdviceRequest(params=7e6, step_ms=20, batch=64, explain=np.True_)
    assert request.explain and not request.allow_flagged  # numpy's bool_, as a table gives


def test_the_request_resolves_names_as_the_command_line_does() -> None:
    """A Python call gets what ``gpuscale advise`` gets: a misspelt workload is a
    did-you-mean (it was 'no reference convergence points for bret'), a ruleset typed
    ``5.0`` is 5.0.0 (it was refused, with a hint to give ``--ruleset 5.1.0``)."""
    import gpuscale
    from gpuscale.names import UnknownNameError

    with pytest.raises(UnknownNameError, match=r"did you mean 'bert'"):
        AdviceRequest(params=7e6, step_ms=20, workload="bret")
    request = AdviceRequest(params=7e6, step_ms=20, workload="BERT", ruleset="v5.0")
    assert (request.workload, request.ruleset) == ("bert", "5.0.0")
    advice = gpuscale.advise(params=7e6, step_ms=20, batch=64, workload="bert", ruleset="5.0")
    assert advice.calibration is not None and advice.calibration.search.convergence is not None


def test_what_bench_results_make_unused_is_refused_never_ignored(tmp_path: Path) -> None:
    """`advise --bench F --step-ms 5` and `--device-name H100` ran with rc 0 and the
    value unused (a user walk); and a step faster at a larger batch was split into a fixed
    cost above the step (2.5 ms fixed, 0 ms per sample)."""
    import json

    from ..builders import bench_record

    path = tmp_path / "b.jsonl"
    rows = [bench_record("m", 10**6, n, rate) for n, rate in ((1, 100.0), (2, 150.0))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for extra, option in (
        (dict(step_ms=5.0), "step_ms="),
        (dict(device_name="H100"), "device_name="),
    ):
        request = AdviceRequest(bench=str(path), **extra)
        data = load_advice_data(request)
        with pytest.raises(ValueError, match=f"^{option}: for a model given by numbers"):
            advise(request, bench=data.bench)
    with pytest.raises(ValueError, match=r"step_ms=2 at batch=64 is faster than 3 at batch=8"):
        AdviceRequest(params=7e6, step_ms=(3.0, 2.0), batch=(8, 64))
    AdviceRequest(params=7e6, step_ms=(3.0, 5.0), batch=(8, 64))  # more work, more time


def test_the_overlap_is_said_once(tmp_path: Path) -> None:
    """The overlap was said twice, among the sources ("Overlap 0.00 measured by the
    bench") and the assumptions ("Overlap: 0.00 (measured: ...)"; a user walk); once,
    with its source and how to measure it."""
    import json

    import gpuscale

    from ..builders import bench_record

    path = tmp_path / "b.jsonl"
    rows = [
        bench_record("m", 10**6, n, r, comm_ms=c) for n, r, c in ((1, 100.0, None), (2, 150.0, 2.0))
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    said = gpuscale.advise(bench=str(path)).explanation
    assert [line for line in said if line.startswith("Overlap")] == [
        line for line in said if line.startswith("Overlap: ")
    ] and sum(line.startswith("Overlap") for line in said) == 1, said


def test_a_whole_float_is_a_count() -> None:
    """``advise(max_devices=8.0)`` (or ``batch=64.0``, a count read from a table as a
    float) passed the range check as whole and then failed inside the search with
    "'float' object cannot be interpreted as an integer"; numpy's ``int64`` made the
    request's JSON fail. Each is now the count it equals, with the same advice."""
    import gpuscale

    ints = gpuscale.advise(params=7e6, step_ms=2, batch=64, max_devices=8, nodes=2)
    floats = gpuscale.advise(
        params=7e6, step_ms=2, batch=np.float64(64.0), max_devices=8.0, nodes=2.0
    )
    assert list(floats.predictions["accelerators"]) == [1, 2, 4, 8]
    assert floats.predictions["step_ms"].tolist() == ints.predictions["step_ms"].tolist()
    request = AdviceRequest(params=7e6, step_ms=(2, 3), batch=(8.0, np.int64(64)), nodes=2.0)
    assert (request.batch, request.nodes) == ((8, 64), 2)
    assert all(type(b) is int for b in request.batch)
    assert AdviceRequest.from_json(request.to_json()) == request


def test_an_empty_list_and_a_path_as_topology_are_refused_in_words() -> None:
    """``advise(step_ms=[], batch=[])`` raised IndexError ('list index out of range') and
    ``advise(topology="topo.txt")`` AttributeError ('str' object has no attribute 'gpus')."""
    import gpuscale

    for name, empty in (("step_ms", []), ("batch", ())):
        given = {"step_ms": 2, "batch": 64, name: empty}
        with pytest.raises(ValueError, match=rf"^invalid {name} .*: none given: give a number"):
            gpuscale.advise(params=7e6, **given)
    with pytest.raises(TypeError, match=r"^topology must be a Topology, not 'topo\.txt': .* topo="):
        gpuscale.advise(params=7e6, step_ms=2, batch=64, topology="topo.txt")


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        ("samples_per_s", "x", "2 rows whose samples_per_s is text ('x', 'x')"),
        ("samples_per_s", -5.0, "2 rows whose samples_per_s is not a positive finite number"),
        ("samples_per_s", 0.0, "2 rows whose samples_per_s is not a positive finite number"),
        ("step_ms_mean", -1.0, "2 rows whose step_ms_mean is not a positive finite number"),
        ("accelerators", "2", "2 rows whose accelerators is text ('2', '2')"),
        ("accelerators", 1.5, "2 rows whose accelerators is not a whole count of at least 1"),
        ("accelerators", None, "2 rows whose accelerators is not a whole count of at least 1 "),
        ("samples_per_s", None, "2 rows whose samples_per_s is not a positive finite number "),
        ("step_ms_mean", None, "2 rows whose step_ms_mean is not a positive finite number "),
    ],
)
def test_an_edited_bench_tables_impossible_number_is_refused_by_column(
    tmp_path: Path, column: str, value: object, said: str
) -> None:
    """A bench table edited by hand (a rate as text, a negative one, 0) failed deep inside:
    pandas' "Invalid comparison between dtype=str and ndarray", "math domain error", a
    ZeroDivisionError; an accelerator count as text read as "no N = 1 run". A missing
    count failed ("'>' not supported between instances of 'float' and 'NoneType'", NaN:
    "cannot convert float NaN to integer") and a missing rate or step was advised on,
    where the reader skips an ok record lacking one."""
    path = tmp_path / "results.jsonl"
    for world, rate in ((1, 1000.0), (2, 1400.0)):
        append_result(path, bench_record("tf-7m", 6_870_000, world, rate))
    table = load_bench(path).table
    assert advise(AdviceRequest(interconnect="pcie4-x16"), bench=table).recommended == 1
    with pytest.raises(ValueError, match="^bench has " + re.escape(said)):
        advise(AdviceRequest(interconnect="pcie4-x16"), bench=table.assign(**{column: value}))
