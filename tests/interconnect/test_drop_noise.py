"""A sweep compared with an earlier one: only sweeps that ran alike are compared, over the
sizes both measured, with enough calls (two-call CPU sweeps are no evidence of a drop), and
a difference within the calls' own spread is noise; a rise is a rise (by its ratio), "within"
only within 15% either way; gloo is never told to check NCCL. The
changes are records (:class:`SweepChange`); their words are the golden view
``interconnect/sweep_changes``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.interconnect.changes import ChangeKind, FewCalls, SweepChange
from gpuscale.interconnect.records import read_sweeps
from gpuscale.interconnect.verdict import judge

SCHEMA = "gpuscale.collectives/2"


def sweep(
    sweep_id: str,
    busbw: float,
    *,
    iters: int = 20,
    backend: str = "gloo",
    device: str = "cpu",
    spread: float = 1.05,
    sizes: tuple[int, ...] = (1 << 20,),
) -> list[dict]:
    header = {
        "schema": SCHEMA,
        "kind": "sweep",
        "sweep_id": sweep_id,
        "backend": backend,
        "device": device,
        "nodes": 1,
        "settings": {"iters": iters, "warmup": 5, "check": True, "load": False, "gap_ms": 0.0},
    }
    rows = [
        {
            "schema": SCHEMA,
            "kind": "result",
            "sweep_id": sweep_id,
            "op": "all_reduce",
            "placement": "in-place",
            "status": "ok",
            "size_bytes": size,
            "ranks": 2,
            "busbw_gbs": busbw * size / sizes[-1],
            "time_us": 100.0,
            "time_us_p50": 100.0,
            "time_us_p99": 100.0 * spread,
        }
        for size in sizes
    ]
    return [header, *rows]


VIEW = "interconnect/sweep_changes"


def change(tmp_path: Path, *sweeps: list[dict]) -> SweepChange | None:
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for s in sweeps for r in s))
    (verdict,) = judge(read_sweeps(path))
    return verdict.change


def test_two_call_sweeps_are_not_compared(tmp_path: Path, golden) -> None:
    found = change(tmp_path, sweep("a", 1.0, iters=2), sweep("b", 0.22, iters=2))
    # against: the earlier sweep's id (it held the word "this"); too_few: which sweep
    assert found == SweepChange(ChangeKind.TOO_FEW_CALLS, "a", iters=2, too_few=FewCalls.LATEST)
    assert (found.to_dict()["against"], found.to_dict()["too_few"]) == ("a", "latest")
    golden.check(VIEW, "this sweep timed too few calls", found.sentence())
    # an earlier two-call sweep is no baseline for a good one either
    found = change(tmp_path, sweep("a", 1.0, iters=2), sweep("b", 0.22))
    assert found == SweepChange(ChangeKind.TOO_FEW_CALLS, "a", iters=2, too_few=FewCalls.EARLIER)
    assert found.to_dict()["too_few"] == "earlier"
    golden.check(VIEW, "the earlier sweep timed too few calls", found.sentence())
    compared = change(tmp_path, sweep("a", 1.0), sweep("b", 0.22))
    assert compared is not None and compared.to_dict()["too_few"] is None


def test_a_difference_within_the_spread_of_the_calls_is_noise(tmp_path: Path, golden) -> None:
    found = change(tmp_path, sweep("a", 1.0, spread=3.0), sweep("b", 0.5, spread=3.0))
    assert found is not None and found.kind is ChangeKind.NOISE and found.against == "a"
    assert (found.before_gbs, found.now_gbs, found.lower_share) == (1.0, 0.5, 0.5)
    assert found.noise_share == pytest.approx(1 - 1 / 3)  # p50 a third of p99
    golden.check(VIEW, "lower, within the calls' spread", found.sentence())


def test_a_drop_beyond_the_noise_on_gloo_never_blames_nccl(tmp_path: Path, golden) -> None:
    found = change(tmp_path, sweep("a", 1.0), sweep("b", 0.22))
    assert found is not None and found.kind is ChangeKind.DROPPED and found.against == "a"
    assert found.lower_share == pytest.approx(0.78)
    assert "NCCL" not in found.suspects and "host" in found.suspects
    golden.check(VIEW, "dropped, on gloo", found.sentence())
    gpu = change(
        tmp_path,
        sweep("a", 300.0, backend="nccl", device="cuda"),
        sweep("b", 100.0, backend="nccl", device="cuda"),
    )
    assert gpu is not None and gpu.kind is ChangeKind.DROPPED
    assert gpu.lower_share == pytest.approx(2 / 3) and "NCCL" in gpu.suspects
    golden.check(VIEW, "dropped, on nccl", gpu.sentence())


def test_only_sweeps_that_ran_alike_over_the_same_sizes_are_compared(
    tmp_path: Path, golden
) -> None:
    other_backend = sweep("a", 300.0, backend="nccl", device="cuda")
    assert change(tmp_path, other_backend, sweep("b", 0.2)) is None
    # the earlier sweep reached 64 MiB, this one 1 MiB: compared at 1 MiB only
    big = sweep("a", 1.0, sizes=(1 << 20, 64 << 20))
    found = change(tmp_path, big, sweep("b", 1.0 / 64, sizes=(1 << 20,)))
    assert found is not None and found.kind is ChangeKind.WITHIN
    assert found.before_gbs == found.now_gbs == 1.0 / 64
    golden.check(VIEW, "within the drop share", found.sentence())


def test_a_rise_is_said_as_a_rise_and_within_only_within(tmp_path: Path, golden) -> None:
    found = change(tmp_path, sweep("a", 0.428), sweep("b", 0.907))
    assert found is not None and found.kind is ChangeKind.ROSE and found.against == "a"
    assert found.ratio == pytest.approx(0.907 / 0.428)
    golden.check(VIEW, "rose, on gloo", found.sentence())
    found = change(tmp_path, sweep("a", 1.0, spread=3.0), sweep("b", 1.5, spread=3.0))
    assert found is not None and found.kind is ChangeKind.NOISE
    assert found.ratio == pytest.approx(1.5)
    golden.check(VIEW, "higher, within the calls' spread", found.sentence())
    edges = ((1.15, ChangeKind.WITHIN), (0.85, ChangeKind.WITHIN), (1.16, ChangeKind.ROSE))
    for now, kind in edges:
        found = change(tmp_path, sweep("a", 1.0), sweep("b", now))
        assert found is not None and (found.kind, found.ratio) == (kind, pytest.approx(now))


def test_a_sweep_is_compared_only_with_sweeps_written_before_it(tmp_path: Path) -> None:
    """Two sweeps run side by side into one file: the one written first is judged against
    no sweep (the other was written after it), the one written second against the first;
    a third written later is never the first's baseline."""
    path = tmp_path / "c.jsonl"
    path.write_text(
        "".join(json.dumps(r) + "\n" for s in (sweep("a", 1.0), sweep("b", 0.22)) for r in s)
    )
    sweeps = read_sweeps(path)
    (first,) = judge(sweeps, sweep_id="a")
    (second,) = judge(sweeps, sweep_id="b")
    assert first.change is None
    assert second.change is not None and second.change.against == "a"
    assert (second.change.before_gbs, second.change.now_gbs) == (1.0, 0.22)
    path.write_text(
        "".join(
            json.dumps(r) + "\n"
            for s in (sweep("a", 1.0), sweep("b", 0.9), sweep("c", 0.22))
            for r in s
        )
    )
    (middle,) = judge(read_sweeps(path), sweep_id="b")
    assert middle.change is not None and middle.change.against == "a"
    assert middle.change.kind is ChangeKind.WITHIN and middle.change.now_gbs == 0.9


@pytest.mark.parametrize(
    "key, value, said",
    [
        ("settings", 5, "settings 5 is not an object"),
        ("nodes", "one", 'nodes "one" is not a whole count of 1 or more'),
        ("ranks", 2.5, "ranks 2.5 is not a whole count of 1 or more"),
    ],
)
def test_an_earlier_sweep_header_no_sweep_writes_is_skipped_by_line(
    tmp_path: Path, key, value, said
) -> None:
    """An earlier sweep's header edited by hand (settings not an object, a count as text
    or a fraction) is skipped and said by line: the latest sweep is judged against no
    baseline instead of the comparison ending in a traceback (`'int' object has no
    attribute 'get'`)."""
    earlier = sweep("a", 1.0)
    earlier[0] = {**earlier[0], key: value}
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for s in (earlier, sweep("b", 0.22)) for r in s))
    sweeps = read_sweeps(path)
    assert list(sweeps.headers) == ["b"]
    assert sweeps.bad_rows == [f"{path}:1: sweep header {said}; skipped"]
    (verdict,) = judge(sweeps)
    assert verdict.change is None


def test_sweeps_of_other_hosts_are_not_compared(tmp_path: Path) -> None:
    """Nodes appending their own sweeps to one shared file: node02's sweep at a third of
    node01's is no drop of node02's link (no change at all), a later sweep of node01 at
    a third is; headers written before hosts were recorded are compared as before."""

    def on(hosts: list[str] | None, sweep_id: str, busbw: float) -> list[dict]:
        header, *rows = sweep(sweep_id, busbw)
        return [{**header, **({"hosts": hosts} if hosts else {})}, *rows]

    assert change(tmp_path, on(["node01"], "a", 3.0), on(["node02"], "b", 1.0)) is None
    found = change(tmp_path, on(["node01"], "a", 3.0), on(["node01"], "b", 1.0))
    assert found is not None and found.kind is ChangeKind.DROPPED and found.against == "a"
    found = change(
        tmp_path, on(["node01"], "a", 3.0), on(["node02"], "b", 2.0), on(["node01"], "c", 1.0)
    )
    assert found is not None and (found.kind, found.against) == (ChangeKind.DROPPED, "a")
    assert found.before_gbs == 3.0 and found.now_gbs == 1.0
    found = change(tmp_path, on(None, "a", 3.0), on(None, "b", 1.0))
    assert found is not None and found.kind is ChangeKind.DROPPED
