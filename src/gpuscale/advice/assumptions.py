"""What the advice assumed, said: every term of the step and of convergence it did not
measure, with the value it used, where that came from and the one command or option that
would measure it (the bench run said from what the file holds: ``advice/remeasure.py``).

The terms: the fixed per-step cost (``advice/model/fixed_cost.py``), the share of
communication backward hides (overlap), DDP's own work per step, the wait for the slowest
device, the samples to converge at a larger global batch, and the input pipeline (never
modelled: the bench makes its data on the device). ``source`` is ``measured`` (by the
bench, from these results), ``entered`` (given as an option), ``fitted`` (from other
models' measurements) or ``assumed`` (a default, a prior).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from gpuscale.advice.assumed import Assumption, Quantity
from gpuscale.advice.model.parameters import PRIORS
from gpuscale.advice.model.wording import strategy_name
from gpuscale.advice.remeasure import again, bench_run
from gpuscale.advice.types import BenchRun, Measure, Source, TermId, maybe
from gpuscale.bench.config import STRATEGIES as BENCHED
from gpuscale.bench.evidence import FIRM_STEPS
from gpuscale.bench.support import Support
from gpuscale.hardware.links import ASSUMED_CLASS_SAID, PRESETS
from gpuscale.quantities import filled, joined

if TYPE_CHECKING:
    from gpuscale.advice.model.fixed_cost import FixedCost

PER_STEP = "ms per step"
SAME_SAMPLES = "factor: samples to converge at a larger global batch over those at the batch given"

STEP_SPREAD = "share of the step: the N = 1 steps' standard deviation over their mean"
NOISE_SCALE = "samples: the noise scale B_noise of E(B) = E_min (1 + B / B_noise)"


def fixed_quantity(fixed: FixedCost) -> Quantity:
    """The fixed per-step cost as a number, with its range where it is uncertain."""
    if not fixed.uncertain:
        return Quantity(fixed.ms, PER_STEP)
    return Quantity(fixed.ms, PER_STEP, fixed.low_ms, fixed.high_ms)


def overlap(
    value: float | None,
    *,
    measured: bool,
    given: bool,
    model: str | None,
    unmeasured: str = "nothing measured it",
    host_devices: int | None = None,
) -> Assumption:
    """The share of communication backward hides (``unmeasured``: why nothing measured
    it, e.g. the bench's multi-device run is flagged)."""
    # no value: the prior's, all but the last bucket
    shown, share = "0.5, all but the last bucket", PRIORS["overlap"].point
    why = "half the communication, never the last bucket (ready only when backward ends)"
    if value is not None:
        shown, share, why = f"{value:.2f}", value, unmeasured
    if given:
        source, basis = Source.GIVEN, "--overlap"
    elif measured:
        source, basis = Source.MEASURED, "1 - exposed / comm of the bench's multi-device runs"
    else:
        source, basis = Source.ASSUMED, why
    return Assumption(
        term=TermId.OVERLAP,
        value=shown,
        quantity=Quantity(share, "share of communication hidden behind backward"),
        source=source,
        basis=basis,
        measure=Measure() if measured or given else bench_run(model, (1, 2), host_devices),
    )


def link_class_assumed(link_name: str) -> Assumption | None:
    """The link class (``advice.model.step_terms.CLASSES``) a preset is taken as where no
    published row was judged on it (an xGMI mesh: ``nvlink``), as an assumption: the class
    the step's fitted terms and the speedup's interval read; None for a preset whose name
    says its class, or a link of no preset (custom, measured)."""
    preset = PRESETS.get(link_name.split(" ")[0].lower())
    if preset is None or preset.assumed_class is None:
        return None
    said = ASSUMED_CLASS_SAID[preset.name]
    return Assumption(
        term=TermId.LINK_CLASS,
        value=f"{preset.assumed_class} for {preset.name}, the class the step's fitted terms "
        "and the speedup's 80% interval read",
        source=Source.ASSUMED,
        basis=f"{said['source']}; {said['note']}",
        measure=Measure(
            "`gpuscale collectives` on the node, then --collectives (a measured "
            "link takes no class: the terms every class shares)"
        ),
    )


def strategy_taken(model: str, benched: str, asked: str | None) -> tuple[Assumption, ...]:
    """The strategy predicted where none was asked for: the one ``model`` was benched with,
    said with the option that predicts the other (tf-30m benched with FSDP: FSDP predicted,
    ``--strategy ddp`` for DDP)."""
    if asked is not None:
        return ()
    other = "ddp" if benched == "fsdp" else "fsdp"
    said = Assumption(
        term=TermId.STRATEGY,
        value=benched.upper(),
        source=Source.MEASURED,
        basis=f"{model} was benched with --strategy {benched}, and this predicts what was "
        f"benched; --strategy {other} predicts {other.upper()}",
    )
    return (said,)


def own_work(
    ms: float, benched: str, asked: str, model: str | None, prior: tuple[float, str], of: str = ""
) -> Assumption:
    """The strategy's own work per step (``ms``), by ``calibration.for_strategy``'s rule:
    measured where the runs were the strategy predicted (fitted where carried from the
    family member ``of`` to a model given by its size), else DDP's ``prior``, FSDP's none."""
    spec = shlex.quote(model or "MODEL")
    command = Measure(f"gpuscale bench --models {spec} --strategy {asked} --nproc 1")
    if asked not in BENCHED:  # a command bench would refuse is no way to measure it
        command = Measure(
            f"none: gpuscale bench runs --strategy {joined(list(BENCHED), 'or')} only"
        )
    value, source, measure = f"{ms:.3g} ms per step", Source.ASSUMED, command
    quantity: Quantity | None = Quantity(ms, PER_STEP)
    if benched == asked == "ddp":
        source, measure = (Source.FITTED, command) if of else (Source.MEASURED, Measure())
        carried = filled(" of {}, its bucket copies at this size", of)
        basis = f"synchronised minus no-sync step at N = 1{carried}"
    elif asked == "ddp":
        basis = (
            f"prior: {prior[0]:.3g} ms a step plus its bucket copies at an H100 SXM's memory "
            f"bandwidth, the median of {prior[1]}; "
            "the runs were FSDP's, which measure no DDP copies"
        )
    elif benched == asked:
        value, source, measure = "in the fixed per-step cost", Source.MEASURED, Measure()
        quantity = None  # a part of the fixed cost, not a term of its own
        basis = (
            "FSDP's synchronised minus no-sync step at N = 1, or its step less its plain "
            "one where that is larger (the calibration note gives the numbers); not "
            "spread over the devices' smaller batches"
        )
    else:
        value, quantity = "0 ms per step", Quantity(0.0, PER_STEP)
        basis = (
            f"the runs were {strategy_name(benched)}'s, which measure none of "
            f"{strategy_name(asked)}'s; the steps price the bare module's compute "
            f"({strategy_name(benched)}'s own work measured left out) and "
            f"{strategy_name(asked)}'s communication"
        )
    return Assumption(
        term=TermId.DDP,
        strategy=asked,
        value=value,
        quantity=quantity,
        source=source,
        basis=basis,
        measure=measure,
    )


def other_strategy(model: str, benched: str, asked: str) -> tuple[str, ...]:
    """A warning where the runs measured another strategy than the one predicted (a
    walk: tf-30m benched with FSDP was advised as DDP without a word, its FSDP
    synchronised-minus-no-sync gap charged as "DDP's own copies")."""
    if benched == asked:
        return ()
    added = "DDP's own work from its prior (assumed)"
    if asked != "ddp":
        added = f"no own work of {strategy_name(asked)}'s (unmeasured, taken as 0)"
    settle = f", or bench with --strategy {asked} to measure it"
    if asked not in BENCHED:
        settle = (
            f" (gpuscale bench runs --strategy {joined(list(BENCHED), 'or')} only: none measures "
            f"{strategy_name(asked)}'s own work)"
        )
    return (
        f"STRATEGY: {model} was benched with --strategy {benched}; this advice predicts "
        f"{asked} (--strategy {asked}) from the bare module's compute its runs measured, "
        f"{benched}'s own work left out, plus {strategy_name(asked)}'s communication and {added}: "
        f"give --strategy {benched} to predict what was benched{settle}.",
    )


def wait(
    slowdown: dict[int, float],
    jitter: bool,
    *,
    model: str | None,
    held: dict[int, float] | None = None,
    host_devices: int | None = None,
    spread: float | None = None,
) -> Assumption:
    """The wait for the slowest device (and contention) at N > 1; ``held``: the slowdowns
    as the step takes them (no lower than at fewer devices), said where they differ;
    ``spread``: the N = 1 steps' standard deviation as a share of the step, where
    ``jitter``."""
    if slowdown:
        held = held or {}

        def one(n: int, f: float) -> str:
            taken = held.get(n, f)
            return f"x{f:.2f} at N = {n}" + (
                f" held at the x{taken:.2f} of fewer devices" if taken > f + 5e-3 else ""
            )

        shown = ", ".join(one(n, f) for n, f in sorted(slowdown.items()))
        largest = max(slowdown)
        return Assumption(
            term=TermId.WAIT,
            value=f"no-sync step {shown}",
            quantity=Quantity(
                slowdown[largest],
                "factor: the no-sync step at N over N = 1, at the largest N measured",
                at=tuple(sorted(slowdown.items())),
            ),
            source=Source.MEASURED,
            basis="the bench's no-sync steps at N > 1 over N = 1: compute slowed by contention "
            "for shared cores and by the slowest device, not the bench table's sync_wait_ms "
            "(a wait inside the synchronised step)",
        )
    if jitter:
        return Assumption(
            term=TermId.WAIT,
            value="E[max of N] - mean of the N = 1 step times",
            quantity=maybe(Quantity, spread, STEP_SPREAD),
            source=Source.FITTED,
            basis="the spread of the bench's N = 1 steps (Chen et al. 2016)",
            measure=bench_run(model, (1, 2), host_devices),
        )
    return Assumption(  # nothing measured it: taken as 0 ms, said
        term=TermId.WAIT,
        value="0 ms",
        quantity=Quantity(0.0, PER_STEP),
        source=Source.ASSUMED,
        basis="nothing measured the steps' spread",
        measure=bench_run(model, (1, 2), host_devices),
    )


def input_pipeline(rate: str | None = None, samples_per_s: float | None = None) -> Assumption:
    """The data loader: never modelled; ``rate`` says what it must deliver
    (``samples_per_s`` in all, at the largest count predicted)."""
    needed = maybe(Quantity, samples_per_s, "samples/s needed")
    return Assumption(
        term=TermId.INPUT,
        value="never the bottleneck" + filled(" while it delivers {}", rate),
        quantity=needed,
        source=Source.ASSUMED,
        basis="gpuscale's bench makes its data on the device; loading, decoding and "
        "augmenting are not in any step it times",
        measure=Measure(
            "time your data loader alone (samples/s per process) and compare it with "
            "the samples/s per device predicted here"
        ),
    )


def convergence(
    source: str | None,
    *,
    model: str | None,
    same_samples: bool = False,
    host_devices: int | None = None,
    thin: str = "",
    found: Support | None = None,
    given: bool = False,
    noise_scale: float | None = None,
) -> Assumption:
    """The samples to converge at a larger global batch (``same_samples``: the bench's
    N > 1 runs of ``model`` saw the same samples on every rank, so their gradient norms
    measure no noise scale; ``thin``: why the noise scale the bench measured is not used,
    ``convergence.thin_noise``; ``found``: what the runs advised on rest on, whose steps
    the rerun times, ``bench.evidence.steps_needed``, and where the file holds runs of
    the model at 1 and 2 devices already, what to bench them again with
    (:func:`again`), never the run it holds; ``given``: the model is a workload's or a
    noise scale's given as options, not measured; ``noise_scale``: the model's B_noise)."""
    if source is not None:
        scale = maybe(Quantity, noise_scale, NOISE_SCALE)
        return Assumption(
            term=TermId.CONVERGENCE,
            value="E(B) = E_min (1 + B / B_noise)",
            quantity=scale,
            source=Source.GIVEN if given else Source.MEASURED,
            basis=source,
        )
    why = thin or "no noise scale, workload or gradient norms"
    if same_samples:
        why = (
            "no noise scale: the bench's N > 1 runs of this model saw the same samples on "
            "every rank, so their gradient norms measure none"
        )
        before = (
            "draw each rank's batch from torch's default generator (gpuscale seeds it per "
            "rank), then "
        )
        after = ""
    else:
        before, after = "--noise-scale, --workload, or ", " (B_simple from the gradient norms)"
    held = again(found, (1, 2), host_devices)
    steps = getattr(found, "steps_needed", FIRM_STEPS)
    more = filled("--steps {}", thin and steps)
    run = BenchRun(model, (1, 2), more=more, host_devices=host_devices)
    return Assumption(
        term=TermId.CONVERGENCE,
        value="the same as at the batch given",
        quantity=Quantity(1.0, SAME_SAMPLES),
        source=Source.ASSUMED,
        basis=f"{why} (optimistic past the critical batch: at a batch far above it, "
        "doubling the batch doubles the samples)",
        measure=Measure(f"{before}{held}", None, after) if held else Measure(before, run, after),
    )
