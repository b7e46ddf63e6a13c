"""The bench's terms, said: the step's terms as the bench measured them, or as assumed
where it did not (``bench_assumed``), the strategy's own work by the strategy's rules
(``strategy_taken``, ``own_work``), and the warning where the runs measured another
strategy than the one predicted (``other_strategy``). ``bench_basis.from_bench`` calls them once,
after the numbers; a model given by its numbers says its terms in ``basis.from_numbers``.
"""

from __future__ import annotations

from gpuscale.advice import assumptions
from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.calibrate.calibration import Calibration
from gpuscale.advice.model.priors import DDP_WORK
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Measure, Measured, Source, TermId, words


def bench_assumed(
    cal: Calibration,
    req: AdviceRequest,
    overlap: float | None,
    model: str | None,
    measured: tuple[Measured, ...],
    host_devices: int | None,
) -> list[Assumption]:
    """The step's terms as the bench measured them, or said as assumed (``model``: the
    bench model that measures them, None for a model given by its numbers; on a host of
    ``host_devices`` GPUs)."""
    fixed = cal.fixed
    span = f" ({fixed.low_ms:.3g}-{fixed.high_ms:.3g} ms)" if fixed.uncertain else ""
    compute = cal.compute
    # the strategy's terms, by this module's rules, then the terms said as assumptions.py
    # says them
    taken = strategy_taken(cal.name, cal.strategy, req.strategy)
    own = own_work(
        compute.ddp_ms_per_mparam,
        cal.model.params,
        cal.strategy,
        req.strategy or cal.strategy,
        model,
    )
    return [
        Assumption(
            term=TermId.FIXED,
            value=f"{fixed.ms:.3g} ms{span}",
            source=fixed.source,
            basis=fixed.basis,
            measure=Measure() if fixed.source == Source.MEASURED else fixed.measure,
        ),
        assumptions.overlap(
            overlap,
            measured=cal.overlap is not None and req.overlap is None,
            given=req.overlap is not None,
            model=model,
            unmeasured=_overlap_unmeasured(measured),
            host_devices=host_devices,
        ),
        *taken,
        own,
        assumptions.wait(
            dict(compute.slowdown),
            bool(compute.jitter_ms),
            model=model,
            held=dict(compute.held_slowdown()),
            host_devices=host_devices,
        ),
    ]


def _overlap_unmeasured(measured: tuple[Measured, ...]) -> str:
    """Why the bench did not measure the overlap: its multi-device run of the model is
    flagged (left out), timed no communication, or there is none."""
    left_out = [m.devices for m in measured if m.flagged and not m.allowed]
    if left_out:
        return (
            f"the run on {left_out[0]} devices exists but is flagged (reasons in the bench "
            "table), so it was not used"
        )
    if measured:
        return "the multi-device run timed no communication"
    return "no multi-device run"


def strategy_taken(model: str, benched: str, asked: str | None) -> tuple[Assumption, ...]:
    """The strategy predicted where none was asked for: the one ``model`` was benched
    with, said with the option that predicts the other (a walk: tf-30m benched with FSDP
    was predicted as DDP by default, the report with no way to ask otherwise)."""
    if asked is not None:
        return ()
    other = "ddp" if benched == "fsdp" else "fsdp"
    return (
        Assumption(
            term=TermId.STRATEGY,
            value=benched.upper(),
            source=Source.MEASURED,
            basis=f"{model} was benched with --strategy {benched}, and this predicts what was "
            f"benched; --strategy {other} predicts {other.upper()}",
        ),
    )


def own_work(
    ms_per_mparam: float, params: float, benched: str, asked: str, model: str | None
) -> Assumption:
    """The strategy's own work, by ``calibration.for_strategy``'s rule: measured where the runs
    were the strategy predicted, else DDP's from its prior or FSDP's unmeasured."""
    command = words(f"gpuscale bench --models {model or 'MODEL'} --strategy {asked} --nproc 1")
    if benched == asked == "ddp":
        return assumptions.ddp_overhead(
            per_step_ms(ms_per_mparam, params), measured=True, model=model
        )
    if asked == "fsdp" and benched == "fsdp":
        return _fsdp_work(
            "in the fixed per-step cost",
            Source.MEASURED,
            "FSDP's step at N = 1 less the bare module's, at least 0, where the bare "
            "module ran (the calibration note gives the numbers), else its synchronised "
            "minus no-sync step; not spread over the devices' smaller batches",
        )
    if asked == "fsdp":
        return _fsdp_work(
            "0 ms per step",
            Source.ASSUMED,
            "the runs were DDP's, which measure none of FSDP's; the steps price the "
            "bare module's compute (DDP's own work measured left out) and FSDP's "
            "communication",
            command,
        )
    return Assumption(
        term=TermId.DDP,
        value=f"{per_step_ms(ms_per_mparam, params):.3g} ms per step",
        source=Source.ASSUMED,
        basis=f"prior: {DDP_WORK.point:g} ms per million parameters, the median of "
        f"{DDP_WORK.source}; the runs were FSDP's, which measure no DDP copies",
        measure=command,
    )


def _fsdp_work(
    value: str, source: Source, basis: str, measure: Measure | None = None
) -> Assumption:
    """FSDP's own work as an assumption (``TermId.DDP``: the strategy's own work)."""
    return Assumption(
        term=TermId.DDP,
        strategy="fsdp",
        value=value,
        source=source,
        basis=basis,
        measure=measure or Measure(),
    )


def other_strategy(model: str, benched: str, asked: str) -> tuple[str, ...]:
    """A warning where the runs measured another strategy than the one predicted (a
    walk: tf-30m benched with FSDP was advised as DDP without a word, its FSDP
    synchronised-minus-no-sync gap charged as "DDP's own copies")."""
    if benched == asked:
        return ()
    added = (
        "DDP's own work from its prior (assumed)"
        if asked == "ddp"
        else "no own work of FSDP's (unmeasured, taken as 0)"
    )
    return (
        f"STRATEGY: {model} was benched with --strategy {benched}; this advice predicts "
        f"{asked} (--strategy {asked}) from the bare module's compute its runs measured, "
        f"{benched}'s own work left out, plus {asked.upper()}'s communication and {added}: "
        f"give --strategy {benched} to predict what was benched, or bench with "
        f"--strategy {asked} to measure it.",
    )
