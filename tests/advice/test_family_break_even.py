"""The break-even size of a model family is one answer whichever member is advised. On
the H100 ladder rows, advised on tf-300m: "For this model's family (762 FLOPs per
parameter per sample ...), 2 devices beat 1 from 49.1M parameters"; on tf-30m, the same
family and rows: "at no size up to 10T parameters". Each member carried its own
per-parameter optimizer and DDP times to every size; a step's optimizer and DDP work is
a fixed part (per tensor, per launch) plus a part per parameter, so a small member's
per-parameter figures are large and a large member's small. The family's basis is now
fitted over its members; where a member's own measured step says otherwise at its size,
the sentence says both."""

from __future__ import annotations

import math

import pytest

import gpuscale
from gpuscale.bench.results import bench_table
from gpuscale.quantities import number

from ..builders import bench_record
from ..golden import Golden

VIEW = "advice/family_break_even"

# the family's truth: optimizer 2 ms + 0.03 ms per million parameters, DDP's own work
# 1 ms + 0.02 ms per million, forward + backward 5 ms + the work at 0.2 TFLOP/s
OPT, DDP, FLOPS_PER_PARAM, BATCH = (2.0, 0.03), (1.0, 0.02), 600.0, 8


MEMBERS = (("m-a", 1), ("m-b", 10), ("m-c", 100), ("m-d", 1000))


def _rows(outlier_ddp_ms: float | None = None, members=MEMBERS) -> list[dict]:
    """N = 1 runs of the ``members`` ((name, million parameters)); ``outlier_ddp_ms``:
    the smallest's DDP work measured at that instead of on the family's line."""
    rows = []
    for name, mparams in members:
        params = mparams * 10**6
        fb = 5.0 + BATCH * FLOPS_PER_PARAM * params / 0.2e12 * 1e3
        opt = OPT[0] + OPT[1] * mparams
        ddp = DDP[0] + DDP[1] * mparams
        if outlier_ddp_ms is not None and name == "m-a":
            ddp = outlier_ddp_ms
        step = fb + opt + ddp
        rows.append(
            bench_record(
                name, params, 1, BATCH / step * 1e3, batch=BATCH,
                flops_per_sample=FLOPS_PER_PARAM * params, forward_ms=fb / 3,
                backward_ms=2 * fb / 3, optimizer_ms=opt, sync_overhead_ms=ddp,
            )
        )  # fmt: skip
    return rows


def _family_line(advice) -> str:
    (line,) = [s for s in advice.explanation if s.startswith("For this model's family")]
    return line


def test_every_member_gives_its_family_one_break_even(golden: Golden) -> None:
    table = bench_table(_rows())
    sizes = set()
    for name in ("m-a", "m-b", "m-c", "m-d"):
        advice = gpuscale.advise(bench=table, model=name)
        assert (
            advice.break_even.params is not None
            and advice.break_even.target_efficiency_params is not None
        )
        sizes.add(
            (round(advice.break_even.params), round(advice.break_even.target_efficiency_params))
        )
        # the family's lines, as the rows were made, fitted over the 4 members
        basis = advice.calibration.model.family
        assert basis is not None and basis.members == tuple(m for m, _ in MEMBERS)
        assert basis.opt_ms == pytest.approx(OPT) and basis.ddp_ms == pytest.approx(DDP)
        assert basis.flops_per_param == pytest.approx(FLOPS_PER_PARAM)
        line = _family_line(advice)
        assert "2 ms + 0.03 ms" in line and "1 ms + 0.02 ms" in line, line
        golden.check(VIEW, f"the family's break-even advised on {name}", line)
    assert len(sizes) == 1, sizes


def test_a_member_off_the_familys_line_says_both_bases(golden: Golden) -> None:
    """The smallest member's DDP work measured at 60 ms (on the line: 1.02 ms): its own
    table loses on 2 devices where the family's size says 2 beat 1 from below it; the
    family's size stays the others', and the sentence gives both and why."""
    more = (("m-e", 3), ("m-f", 30), ("m-g", 300), ("m-h", 3000))
    table = bench_table(_rows(outlier_ddp_ms=60.0, members=MEMBERS + more))
    advice = gpuscale.advise(bench=table, model="m-a")
    others = gpuscale.advise(bench=table, model="m-b")
    assert advice.break_even.params == pytest.approx(others.break_even.params, rel=1e-9)
    two = advice.predictions[advice.predictions["accelerators"] == 2].iloc[0]
    own = 2 * float(two["throughput_efficiency"])
    size = advice.break_even.params
    assert own < 1 and size is not None and size < 1e6  # the premise: the two disagree
    line = _family_line(advice)
    assert f"gives {number(own)}x" in line and "60 ms" in line, line
    golden.check(VIEW, "a member off the family's line", line)


@pytest.mark.shared
def test_the_h100_ladder_gives_each_family_one_break_even(h100) -> None:
    """Every member of the ladder advised in turn: the members of one family and
    configuration share one break-even, and each member's own table agrees with it at
    its size or the sentence says both."""
    ladder = h100("ladder.jsonl")
    models = ["tf-7m", "tf-30m", "tf-100m", "tf-300m", "mlp-0.2m", "mlp-4m", "mlp-17m"]
    models += ["mlp-67m", "cnn-4.7m", "cnn-19m"]
    by_family: dict[tuple, set] = {}
    for name in models:
        advice = gpuscale.advise(bench=ladder, model=name)
        basis = advice.calibration.model.family
        assert basis is not None and name in basis.members, name
        key = (basis.family, basis.members)
        size, target = advice.break_even.params, advice.break_even.target_efficiency_params
        by_family.setdefault(key, set()).add((size, target))
        line = _family_line(advice)
        two = advice.predictions[advice.predictions["accelerators"] == 2].iloc[0]
        own = 2 * float(two["throughput_efficiency"])
        params = advice.calibration.model.spec.params
        family_says = size is not None and not math.isnan(size) and params >= size
        if family_says != (own > 1):
            assert "own measured step" in line, (name, line)
    # tf-30m, tf-100m and tf-300m in bf16 (one configuration): one answer
    bf16 = [k for k in by_family if k[1] == ("tf-30m", "tf-100m", "tf-300m")]
    assert bf16, by_family
    assert all(len(v) == 1 for v in by_family.values()), by_family
