"""The search, once, and what qualifies its answer: ``search(calibrated, request)`` ->
:class:`Advice`: the predictions and the decision (``recommend``), the count at each end
of every assumed term's range (where one moves it, the count is withheld and said first),
and the caveats.

What makes an advice's headline less firm than it reads, said before it: inputs the
user never gave (the default samples to train, a noise scale from a few steps of random
data), a step interval too wide to decide on, and a measured speedup at a count the
advice predicts that falls outside the predicted interval (the measurement is what this
machine did: the advice says so beside its prediction, never silently contradicts it).

Pure functions over the request's facts, the predictions and the bench's measured
speedups; the advice carries the sentences (``Advice.caveats``) and puts them first.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from gpuscale.advice.explain.answer import said as disagreement_said
from gpuscale.advice.explain.weak_first import again
from gpuscale.advice.inputs import Calibrated
from gpuscale.advice.model.priors import FEW_NOISE_STEPS
from gpuscale.advice.request import DEFAULT_BATCH, DEFAULT_SAMPLES, AdviceRequest
from gpuscale.advice.search import decision as readings
from gpuscale.advice.search.decision import decide
from gpuscale.advice.search.derive import applied
from gpuscale.advice.search.recommend import Advice, predictions, recommend
from gpuscale.advice.types import Decision, Disagreement, Measured
from gpuscale.bench.evidence import FIRM_STEPS
from gpuscale.quantities import (
    counted,
    factor_interval,
    format_count,
    format_ms,
    joined,
    number,
)
from gpuscale.tables.advice import (
    TOO_WIDE_TO_TEST,
    as_throughput,
    on_advice_baseline,
    same_configuration,
)
from gpuscale.tables.bench import on_a_larger_host

WIDE_STEP_INTERVAL = math.log(
    1.5
)  # a step interval wider than a factor of 1.5 cannot decide a count


def defaults_used(
    request: AdviceRequest,
    *,
    samples_used: bool,
    link_assumed: bool,
    link: str,
    from_bench: bool = False,
) -> list[str]:
    """The inputs the user never gave that the times to a trained model rest on, each
    with what to give instead: the samples to train (``samples_used``: the time rests on
    them, not on a workload's RCPs), the batch of a step time given alone, and a link
    neither given, detected nor measured (``link``: the one assumed)."""
    said = []
    if request.samples is None and samples_used:
        said.append(
            f"--samples {format_count(DEFAULT_SAMPLES)}, the default, not your model's samples "
            "to train (give --samples)"
        )
    if not from_bench and request.step_ms is not None and request.batch is None:
        said.append(
            f"--step-ms taken at batch {DEFAULT_BATCH}, the default (give --batch: the "
            "per-device batch of that step)"
        )
    if link_assumed:
        said.append(
            f"an assumed link, {link} (none given, detected or measured: give --interconnect "
            "or --collectives)"
        )
    return said


def headline(
    *,
    defaults: list[str],
    noise_steps: int | None,
    step_width_log: float,
    devices: int,
    host_devices: int | None = None,
    steps: int = FIRM_STEPS,
    again: str = "",
) -> list[str]:
    """The sentences that qualify the recommendation (empty when nothing does):
    ``defaults``: what :func:`defaults_used` found; ``noise_steps``: the steps the bench's
    noise scale was measured over, when used; ``steps``: the steps a run asked for needs
    (``bench.evidence.steps_needed``); ``again``: where the bench file holds runs at 1 and
    ``devices`` already, what to bench them again with (``advice.weak_first.again``), said
    in place of a run it holds."""
    rests = list(defaults)
    if noise_steps is not None and noise_steps < FEW_NOISE_STEPS:
        rests.append(
            f"a noise scale measured over {counted(noise_steps, 'step')} of the bench's "
            f"random data (give --noise-scale or --workload, or bench with --steps {steps} or "
            "more on your data)"
        )
    lines = []
    if rests:
        lines.append(
            "Provisional: the times to a trained model here rest on what you did not give: "
            + "; ".join(rests)
            + "."
        )
    if devices > 1 and step_width_log > WIDE_STEP_INTERVAL:
        first = f"measure {devices} devices first (gpuscale bench --nproc 1,{devices} --steps "
        first += f"{steps}{on_a_larger_host(devices, host_devices)})"
        lines.append(
            f"Not a firm choice: the step's 80% interval is {factor_interval(step_width_log)}"
            f"; {again or first} and advise again on those rows."
        )
    return lines


def _grouped(measured: list[Measured]) -> dict[tuple, list[Measured]]:
    """The runs by the configuration they measured: count, per-device batch, accumulation
    and the one-device run they are against (every run of a count compared together)."""
    groups: dict[tuple, list[Measured]] = {}
    for m in measured:
        key = (m.devices, m.batch_per_device, m.accum, m.base or (m.batch_per_device, m.accum))
        groups.setdefault(key, []).append(m)
    return groups


def _spread(values: list[float]) -> str:
    """``0.199`` (one value) or ``median 0.2 (spread 0.18-0.22)``, of ``values``."""
    if len(values) == 1:
        return number(values[0])
    ordered = sorted(values)
    middle = float(pd.Series(ordered).median())
    return f"median {number(middle)} (spread {number(ordered[0])}-{number(ordered[-1])})"


def median(runs: list[Measured]) -> float:
    """The runs' median speedup (against the bench's own N = 1 run)."""
    return float(pd.Series([m.speedup for m in runs]).median())


def against_measured(
    predictions: pd.DataFrame,
    measured: list[Measured],
    alternative: pd.DataFrame | None = None,
    disagreeing: tuple[Disagreement, ...] = (),
) -> list[str]:
    """One sentence for each count the bench measured in a configuration the advice
    predicts (the same per-device batch and accumulation against the same one-device run,
    ``tables.advice.same_configuration``: in its predictions or, where those keep the
    global batch, in the weak-scaling ``alternative``): the trusted runs there (unflagged,
    or flagged and used with --allow-flagged), all of them, how many and their spread,
    set against the predicted speedup and its interval, inside or outside; the flagged runs
    left out said apart. A count in ``disagreeing`` (``advice.reconcile``) is said there,
    its row resting on the measurement, not here."""
    lines = []
    said_apart = {(d.accelerators, d.batch_per_device, d.accum) for d in disagreeing}
    throughput = [None if f is None else as_throughput(f) for f in (predictions, alternative)]
    for (devices, batch, accum, base), runs in _grouped(measured).items():
        # the prediction of the configuration measured, its one-device run too: a speedup
        # is a ratio of two runs (never another configuration's interval)
        row = same_configuration(throughput, devices, batch, accum, base)
        if row is None or (devices, batch, accum) in said_apart:
            continue
        low, high = float(row["speedup_low"]), float(row["speedup_high"])
        # the weak-scaling alternative's row where the advice's own keep the global batch
        weak = same_configuration(throughput[:1], devices, batch, accum, base) is None
        predicted = (
            f"the predicted {number(float(row['speedup']))} "
            f"({number(low)}-{number(high)}x, 80% interval"
            + (f"; weak scaling, per-device batch {batch} kept)" if weak else ")")
        )
        trusted = [m for m in runs if not m.flagged or m.allowed]
        left = [m for m in runs if m.flagged and not m.allowed]
        apart = (
            f"; {counted(len(left), 'flagged run')} left out (not trusted: "
            f"{joined([number(m.speedup) for m in left])})"
            if left
            else ""
        )
        if not trusted:
            lines.append(
                f"Measured on {devices} devices: throughput speedup "
                f"{joined([number(m.speedup) for m in left])} from "
                f"{counted(len(left), 'run')}, all flagged (not trusted), "
                f"{'inside' if low <= median(left) <= high else 'outside'} {predicted}."
            )
            continue
        # on the predictions' baseline (one device without DDP), not the bench's bare step
        ons = [on_advice_baseline(throughput, base, m.samples_per_s) for m in trusted]
        own = [m.speedup for m in trusted]
        runs_said = counted(len(trusted), "trusted run")
        if all(ons):
            values = [on[0] for on in ons if on]
            said = (
                f"{_spread(values)} against the advice's one device without DDP "
                f"({format_ms(ons[0][1])} a step predicted, the baseline of the interval; "
                f"{_spread(own)} against the bench's own N = 1 run)"
            )
        else:
            values = own
            said = _spread(own)
        speedup = float(pd.Series(values).median())
        said = f"Measured on {devices} devices: throughput speedup {said}, from {runs_said}"
        remedy = next((m.weak_remedy for m in trusted if m.weak_remedy), "")
        allowed = any(m.allowed for m in trusted)
        if low <= speedup <= high:
            # inside an interval too wide to test the prediction is no agreement (the
            # report's check says the same, report.bench_checks)
            wide = low <= 0 or high / low > TOO_WIDE_TO_TEST
            span = number(high / low) if low > 0 else "infinity"
            lines.append(
                f"{said}, inside {predicted}"
                + (
                    f", an interval spanning a factor of {span}: too wide to test the "
                    f"prediction (a test needs one within a factor of {TOO_WIDE_TO_TEST:g})"
                    if wide
                    else ""
                )
                + f"{apart}."
            )
        elif remedy:
            # a weak run's speedup is a measurement to repeat: never trusted over the
            # advice's before it is measured again
            lines.append(
                f"{said}, outside {predicted}, from weak runs (the bench table's evidence): "
                "they disagree, and the measurement is not yet firm enough to say which to "
                f"trust; {remedy} and advise again"
                + (" (flagged too, used with --allow-flagged)" if allowed else "")
                + f"{apart}."
            )
        else:
            lines.append(
                f"{said}, outside {predicted}: the measurement is what this machine did; "
                f"trust it over the prediction at {devices} devices (the model missed "
                "something it measured)"
                + (" - though flagged, used with --allow-flagged" if allowed else "")
                + f"{apart}."
            )
    return lines


def search(calibrated: Calibrated, request: AdviceRequest) -> Advice:
    """The advice on ``calibrated``'s inputs: predictions, decision, the count at each
    end of every assumed term's range (``decision.readings``; where one moves it, the
    count is withheld and said first), the caveats said first."""
    inputs = calibrated.inputs
    advice = qualify(
        recommend(inputs),
        request,
        samples_used=calibrated.samples_used,
        noise_steps=calibrated.noise_steps,
        link_assumed=calibrated.link_assumed,
        from_bench=calibrated.from_bench,
    )
    counts = {m.devices for m in inputs.measured}  # measured counts: as said

    def decide_at(changes: dict[str, object]) -> Decision:
        at = replace(inputs, **changes)
        frame = applied(predictions(at), advice.disagreements, counts)
        return decide(frame, at.target_efficiency, at.warnings, at.implausible)

    decision = readings.with_readings(advice.decision, readings.read(calibrated.ends, decide_at))
    first = tuple(filter(None, (calibrated.model_note, readings.withheld(decision))))
    advice = replace(
        advice,
        decision=decision,
        caveats=(*first, *advice.caveats),
        explanation=[*first, *advice.explanation],
    )
    if not calibrated.chosen or calibrated.model_note:
        return advice
    lines, at = advice.explanation, advice.decision_line  # said after the decision
    return replace(advice, explanation=[*lines[: at + 1], calibrated.chosen, *lines[at + 1 :]])


def qualify(
    advice: Advice,
    request: AdviceRequest,
    *,
    samples_used: bool = True,
    noise_steps: int | None = None,
    link_assumed: bool = False,
    from_bench: bool = False,
) -> Advice:
    """The advice with what qualifies its headline said first (``caveats``, and the
    explanation's first lines). ``samples_used``: the request's samples to train are
    (not the reference convergence points'); ``noise_steps``: the steps of the bench's noise scale
    where it is used (None: not measured or not used);
    ``link_assumed``: the link is the default, neither given, detected nor measured."""
    inputs = advice.inputs
    defaults = defaults_used(
        request,
        samples_used=samples_used,
        link_assumed=link_assumed,
        link=inputs.network.intra.name if inputs else "",
        from_bench=from_bench,
    )
    found = advice.disagreements
    measured = list(inputs.measured) if inputs else []
    beside = against_measured(advice.predictions, measured, advice.alternative, found)
    lines = headline(
        defaults=defaults,
        noise_steps=noise_steps,
        step_width_log=inputs.error.width_log if inputs else 0.0,
        devices=advice.decision.accelerators,
        host_devices=inputs.host_devices if inputs else None,
        steps=inputs.evidence.steps_needed if inputs and inputs.evidence else FIRM_STEPS,
        again=again(
            inputs.evidence if inputs else None,
            (1, advice.decision.accelerators),
            inputs.host_devices if inputs else None,
        ),
    )
    # a count its runs contradict, said first: the advice there rests on them
    lines = [disagreement_said(d) for d in found] + lines + beside
    return replace(advice, caveats=tuple(lines), explanation=[*lines, *advice.explanation])
