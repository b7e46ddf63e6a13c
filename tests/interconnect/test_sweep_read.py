"""How `advise --collectives` reads a sweep: each size's median call, the sweep of the most
timed calls per size, the noise and the lines it could not read said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.types import Finding
from gpuscale.advice.types import FindingKind as K
from gpuscale.cli import app
from gpuscale.interconnect.measured import fit_link
from gpuscale.interconnect.records import read_collectives, read_sweeps
from gpuscale.quantities import number

from ..golden import Golden

SCHEMA = "gpuscale.collectives/2"
BUSBW, LATENCY = 6.0, 40.0  # GB/s and us of the ring model the medians follow
NUMBERS = ["--params", "7M", "--step-ms", "20", "--batch", "64"]


def _ring_us(size: int, busbw_gbs: float = BUSBW, latency_us: float = LATENCY) -> float:
    """An all-reduce's call on 2 ranks by the ring model (2(n-1) latencies, 2(n-1)/n x the
    message over the bus bandwidth), in us."""
    return 2 * latency_us + size / (busbw_gbs * 1e9) * 1e6


def _sweep(
    sweep_id: str, iters: int, slow: int = 0, host: dict | None = None, **link: float
) -> list[dict]:
    """A sweep of 18 sizes (8 B to 1 MiB) on 2 GPUs: its header, then each size's row whose
    median call follows the ring model and whose mean is 3x it at the first ``slow`` sizes
    (a few calls far slower than the rest)."""
    header = {"kind": "sweep", "device": "cuda", "ranks": 2, "nodes": 1}
    rows = [{**header, "settings": {"iters": iters}, "host": host}]
    for k, power in enumerate(range(3, 21)):
        median = _ring_us(2**power, **link)
        rows.append(
            {
                "kind": "result",
                "op": "all_reduce",
                "placement": "in-place",
                "status": "ok",
                "size_bytes": 2**power,
                "ranks": 2,
                "time_us": median * (3.0 if k < slow else 1.0),
                "time_us_p50": median,
                "time_us_p99": median * 4,
            }
        )
    return [{"schema": SCHEMA, "sweep_id": sweep_id, **row} for row in rows]


def _wrong_at(rows: list[dict], smallest: int, elements: int = 5) -> list[dict]:
    """``rows`` whose sizes from ``smallest`` up came back with ``elements`` wrong elements
    each (nccl-tests' #wrong) and calls 10x faster than the link's: no collective ran."""
    for row in rows:
        if row["kind"] == "result" and row["size_bytes"] >= smallest:
            row["wrong"], row["time_us"] = elements, row["time_us"] / 10
            row["time_us_p50"] /= 10
    return rows


def _write(path: Path, *sweeps: list[dict], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for s in sweeps for r in s) + tail)
    return path


def test_a_noisy_sweep_is_fitted_on_its_medians_and_said_so(tmp_path: Path) -> None:
    """A walk: at 14 of 18 sizes the mean call was over 1.5x the median, and the link fitted
    on the means (nccl-tests' time_us) came out 1.89 GB/s and 1,127 us where the medians
    give 6.33 GB/s and 789 us. The medians are fitted, and the noise is said with the
    link the means would give, in the explanation and in -f json's warnings."""
    path = _write(tmp_path / "noisy.jsonl", _sweep("s1", 20, slow=14))
    read = read_collectives(path)
    link = fit_link(read.curves[0], "measured")
    assert link.busbw_gbs == pytest.approx(BUSBW, rel=1e-6)
    assert link.latency_us == pytest.approx(LATENCY, rel=1e-6)
    (how,) = read.read
    assert (how.times, how.noisy, how.sizes) == ("median", 14, 18)
    means = fit_link(how.means, "means")
    assert means.latency_us > 2 * LATENCY  # what the means would have given
    advice = gpuscale.advise(params=7e6, step_ms=20, batch=64, collectives=str(path))
    text = "\n".join(advice.explanation)
    assert "WARNING: noisy sweep: at 14 of 18 sizes of sweep s1" in text, text
    assert f"the means nccl-tests prints would give {number(means.busbw_gbs)} GB/s" in text
    assert "each size's median call (time_us_p50" in text
    result = CliRunner().invoke(app, ["advise", *NUMBERS, "--collectives", str(path), "-f", "json"])
    assert result.exit_code == 0, result.output
    warnings = json.loads(result.stdout)["decision"]["warnings"]
    assert any(w.startswith("WARNING: noisy sweep: at 14 of 18 sizes") for w in warnings)


def test_sizes_whose_check_found_wrong_elements_are_left_out_of_the_fit(
    tmp_path: Path, golden: Golden
) -> None:
    """A walk: a sweep whose check found 5 wrong elements at each of its 3 largest sizes,
    timed 10x faster than the link there, was fitted whole: 165 GB/s where its right sizes
    give what a sweep that stopped at 128 KiB gives. Those sizes are left out of the fit,
    and the advice warns of them first, with the sizes and the elements."""
    path = _write(tmp_path / "wrong.jsonl", _wrong_at(_sweep("s1", 20), 1 << 18))
    read = read_collectives(path)
    (how,) = read.read
    assert (how.wrong, how.wrong_sizes, how.sizes) == (15, (2.0**18, 2.0**19, 2.0**20), 15)
    short = [r for r in _sweep("s1", 20) if r.get("size_bytes", 0) < 1 << 18]
    right = fit_link(read_collectives(_write(tmp_path / "short.jsonl", short)).curves[0], "m")
    assert fit_link(read.curves[0], "m").busbw_gbs == pytest.approx(right.busbw_gbs, rel=1e-9)
    advice = gpuscale.advise(params=7e6, step_ms=20, batch=64, collectives=str(path))
    first = advice.calibration.said.warnings[0]
    assert isinstance(first, Finding) and first.kind == K.SWEEP_WRONG
    assert (first["wrong"], first["sizes"], first["kept"], first["fitted"]) == (
        15,
        how.wrong_sizes,
        15,
        True,
    )
    said = next(line for line in advice.explanation if "wrong elements" in line)
    golden.check("advice/sweep_wrong", "3 sizes left out", said, paths={str(path): "<file>"})


def test_a_sweep_left_under_4_right_sizes_is_no_curve(tmp_path: Path, golden: Golden) -> None:
    """Wrong elements at all but 3 sizes: the all-reduce has no curve to fit, refused
    naming the wrong elements (not "need 4 or more sizes" alone); an all_gather so left
    beside a right all-reduce is not used, and said so."""
    path = _write(tmp_path / "wrong.jsonl", _wrong_at(_sweep("s1", 20), 1 << 6))
    with pytest.raises(ValueError) as refused:
        read_collectives(path)
    golden.check("advice/sweep_wrong", "refused", str(refused.value), paths={str(path): "<file>"})
    gather = [{**r, "op": "all_gather"} for r in _wrong_at(_sweep("s1", 20)[1:], 1 << 6)]
    path = _write(tmp_path / "both.jsonl", _sweep("s1", 20), gather)
    read = read_collectives(path)
    assert [c.op for c in read.curves] == ["all_reduce"]
    (left,) = read.unfitted
    assert (left.op, left.sizes, left.wrong) == ("all_gather", 3, 75)
    advice = gpuscale.advise(params=7e6, step_ms=20, batch=64, collectives=str(path))
    first = advice.calibration.said.warnings[0]
    assert (first.kind, first["op"], first["fitted"]) == (K.SWEEP_WRONG, "all_gather", False)


def test_a_quiet_sweep_warns_of_no_noise_and_a_file_without_medians_says_means(
    tmp_path: Path,
) -> None:
    quiet = _write(tmp_path / "quiet.jsonl", _sweep("s1", 20))
    text = "\n".join(
        gpuscale.advise(params=7e6, step_ms=20, batch=64, collectives=str(quiet)).explanation
    )
    assert "noisy sweep" not in text
    rows = _sweep("s1", 20)
    for row in rows:
        row.pop("time_us_p50", None)  # as a version 1 file or one made by hand
    bare = _write(tmp_path / "bare.jsonl", rows)
    assert read_collectives(bare).read[0].times == "mean"
    text = "\n".join(
        gpuscale.advise(params=7e6, step_ms=20, batch=64, collectives=str(bare)).explanation
    )
    assert "each size's mean call (time_us: the file records no median)" in text, text


def test_the_sweep_of_most_calls_is_read_and_said_where_not_the_latest(tmp_path: Path) -> None:
    """A walk: the latest sweep of a rank count was read even with 5 timed calls per size
    where an earlier one had 20. The most calls per size is read, the latest of those, and
    the explanation names the sweep read and the latest."""
    older = _sweep("s20", 20)
    newer = _sweep("s5", 5, busbw_gbs=1.0)
    path = _write(tmp_path / "two.jsonl", older, newer)
    read = read_collectives(path)
    assert (read.read[0].sweep_id, read.read[0].latest_id) == ("s20", "s5")
    assert fit_link(read.curves[0], "m").busbw_gbs == pytest.approx(BUSBW, rel=1e-6)
    text = "\n".join(
        gpuscale.advise(params=7e6, step_ms=20, batch=64, collectives=str(path)).explanation
    )
    said = (
        "read off sweep s20 (20 timed calls per size), not the file's latest of that count, s5 (5)"
    )
    assert said in text, text
    # of equal calls the latest is read, and nothing more is said
    again = _write(tmp_path / "again.jsonl", older, _sweep("s20b", 20, busbw_gbs=1.0))
    read = read_collectives(again)
    assert read.read[0].sweep_id == "s20b"
    assert fit_link(read.curves[0], "m").busbw_gbs == pytest.approx(1.0, rel=1e-6)
    text = "\n".join(
        gpuscale.advise(params=7e6, step_ms=20, batch=64, collectives=str(again)).explanation
    )
    assert "read off sweep" not in text


def test_lines_not_read_are_said_one_each(tmp_path: Path) -> None:
    """A truncated last line was collected in the file's problems and never said by
    `advise`: each is a warning, as `analyze --bench` says a bench file's."""
    cut = json.dumps(_sweep("s1", 20)[-1])[:40]
    path = _write(tmp_path / "cut.jsonl", _sweep("s1", 20), tail=cut)
    text = "\n".join(
        gpuscale.advise(params=7e6, step_ms=20, batch=64, collectives=str(path)).explanation
    )
    assert f"warning: {path}:20: not a JSON record" in text, text
    result = CliRunner().invoke(app, ["advise", *NUMBERS, "--collectives", str(path)])
    said = " ".join(result.output.split())  # the answer's lines folded at its width
    assert result.exit_code == 0 and f"warning: {path}:20: not a JSON record" in said, said


def test_a_sweep_on_a_busy_host_is_warned_of(tmp_path: Path) -> None:
    """The host load its header records (as bench records a run's) above the bench's
    threshold: the curves may be slower than the link, said as bench flags a run."""
    busy = {"other_load_share": 0.63, "steal_share": 0.0}
    path = _write(tmp_path / "busy.jsonl", _sweep("s1", 20, host=busy))
    advice = gpuscale.advise(params=7e6, step_ms=20, batch=64, collectives=str(path))
    text = "\n".join(advice.explanation)
    said = "WARNING: sweep s1 in {} ran on a busy host: other processes used 63% of its CPU time"
    assert said.format(path) in text, text
    for quiet in ({"other_load_share": 0.05, "steal_share": 0.0}, None):
        path = _write(tmp_path / "quiet.jsonl", _sweep("s1", 20, host=quiet))
        advice = gpuscale.advise(params=7e6, step_ms=20, batch=64, collectives=str(path))
        assert "busy host" not in "\n".join(advice.explanation)


def test_a_file_of_a_later_schema_says_so_not_that_it_holds_no_measurement(
    tmp_path: Path,
) -> None:
    """A sweep whose rows name ``gpuscale.collectives/9`` is no file of this gpuscale's
    versions: refused naming its schema and the ones read, not as "no measurement"."""
    rows = [{**row, "schema": "gpuscale.collectives/9"} for row in _sweep("s9", 20)]
    path = _write(tmp_path / "later.jsonl", rows)
    with pytest.raises(ValueError) as refused:
        read_collectives(path)
    said = str(refused.value)
    assert "gpuscale.collectives/9" in said and "gpuscale.collectives/2" in said
    assert "holds the all_reduce times" not in said
    assert read_collectives(_write(tmp_path / "now.jsonl", _sweep("s2", 20))).curves


def test_json_true_is_no_number_in_a_sweep_header(tmp_path: Path) -> None:
    """JSON's ``true`` is Python's 1: a header's timed calls or host share of ``true`` is
    unrecorded, and its ranks of ``true`` no count (the row skipped)."""
    rows = _sweep("s1", 20, host={"other_load_share": True})
    rows[0]["settings"]["iters"] = True
    read = read_collectives(_write(tmp_path / "true.jsonl", rows))
    assert (read.read[0].iters, read.other_load_share) == (None, None)
    rows[0]["ranks"] = True
    sweeps = read_sweeps(_write(tmp_path / "ranks.jsonl", rows))
    assert (len(sweeps.bad_rows), len(sweeps.problems), sweeps.headers) == (1, 1, {})
