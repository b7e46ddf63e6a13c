"""The checks of ``benchmarks/gpu_validate.py`` as tests (the script's own functions,
imported from it): on a GPU (marked ``gpu``, skipped without CUDA) each check must not
fail; everywhere, the FLOP check on the CPU and the thresholds and arithmetic the
verdicts rest on."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

torch = pytest.importorskip("torch")

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_validate.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_validate", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass resolves its module by name
    spec.loader.exec_module(module)
    return module


gv = _script()


def _passed(verdict) -> None:  # type: ignore[no-untyped-def]
    """A check that ran must pass; one that could not run here skips, saying why."""
    if verdict.ok is None:
        pytest.skip(f"{verdict.check}: {verdict.detail}")
    assert verdict.ok, f"{verdict.check}: {verdict.detail}"


# ---- everywhere: the CPU check and the thresholds ----


def test_the_flop_counter_meets_the_palm_formula_on_the_cpu() -> None:
    verdict, _ = gv.check_flops(torch.device("cpu"))
    _passed(verdict)


@pytest.mark.parametrize(
    ("ratio", "tolerance", "ok"),
    [(1.009, 0.01, True), (0.991, 0.01, True), (1.011, 0.01, False), (0.95, 0.05, False)],
)
def test_a_ratio_passes_only_within_its_tolerance(ratio: float, tolerance: float, ok: bool) -> None:
    assert gv.within(ratio, tolerance) is ok


def test_a_ratio_that_could_not_be_measured_fails() -> None:
    assert not gv.within(math.nan, gv.ENERGY_TOLERANCE)


@pytest.mark.parametrize(("mfu", "ok"), [(0.35, True), (0.0, False), (1.2, False), (-0.1, False)])
def test_mfu_must_lie_between_zero_and_one(mfu: float, ok: bool) -> None:
    assert gv.plausible_mfu(mfu) is ok


def test_sampled_power_integrates_by_trapezoids() -> None:
    # 100 W for a second, then a ramp to 200 W over the next: 100 J + 150 J
    assert gv.integrated_j([(0.0, 100.0), (1.0, 100.0), (2.0, 200.0)]) == pytest.approx(250.0)
    assert gv.integrated_j([(0.0, 100.0)]) == 0.0


def test_the_ladder_passes_only_with_an_ok_row_per_model() -> None:
    rows = [{"status": "ok"}, {"status": "ok"}]
    assert gv.ladder_ok(0, rows, ["a", "b"])
    assert not gv.ladder_ok(1, rows, ["a", "b"])
    assert not gv.ladder_ok(0, rows[:1], ["a", "b"])
    assert not gv.ladder_ok(0, [{"status": "ok"}, {"status": "oom"}], ["a", "b"])


def test_a_failed_check_fails_the_run_and_a_skipped_one_does_not() -> None:
    passed, skipped = gv.Verdict("a", True, ""), gv.Verdict("b", None, "")
    assert gv.exit_status([passed, skipped]) == 0
    assert gv.exit_status([passed, gv.Verdict("c", False, "")]) == 1
    assert [v.word for v in (passed, skipped, gv.Verdict("c", False, ""))] == [
        "PASS",
        "SKIP",
        "FAIL",
    ]


# ---- on a GPU ----


@pytest.fixture(scope="module")
def cuda() -> torch.device:
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    return device


@pytest.mark.gpu
@pytest.mark.slow
def test_flops_and_mfu_on_a_gpu(cuda: torch.device) -> None:
    verdict, model = gv.check_flops(cuda)
    _passed(verdict)
    _passed(gv.check_mfu(model, cuda, steps=20))


@pytest.mark.gpu
@pytest.mark.slow
def test_event_times_match_the_wall_clock_and_the_ladder_runs(cuda: torch.device) -> None:
    verdict, names = gv.check_timing(cuda, "30M", steps=20)
    _passed(verdict)
    _passed(gv.run_ladder(names, steps=20))


@pytest.mark.gpu
@pytest.mark.slow
def test_the_energy_counter_matches_sampled_power(cuda: torch.device) -> None:
    _passed(gv.check_energy(cuda, seconds=10.0))


@pytest.mark.gpu
def test_topo_runs_on_a_gpu_host() -> None:
    _passed(gv.check_topo())
