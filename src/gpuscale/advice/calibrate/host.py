"""The bench host and the calibrated model's runs, as the bench's rows record them, read
after the calibration (they are its model's and its configuration's): the host's link and
cores by ``family.on_bench_host``, then the model's runs by ``bench_basis.from_bench``.

The host the bench runs were measured on: the advice from a bench file predicts scaling on
the machine benched, which need not be this one (rows from an 8-GPU H100 host read on a
laptop). Its link (``host_link``: the preset its topology records) stands where none is
given, measured or detected here, and where this machine's detected topology is another;
its cores (``host_cpu_count``) cap the CPU processes (gloo) one host runs. This machine's
cores only where the rows record none.

The model's runs (:func:`of_model`): its N > 1 runs like the one advised on, and which
bench model an advice is on when none was asked for, and why the larger ones were not
used (``rows.why_this_model``): the largest model with a trustworthy N = 1 run is advised
on (``calibrate.default_model``); a walk's file whose largest model (tf-1.5m) was all
flagged advised mlp-1m, and its headline said only "1.06M parameters". Then what the runs
used give as evidence: weak runs said, in short and in full (:func:`weak_said`), and a
per-device batch advised far beyond the one timed (:func:`far_beyond_the_batch_timed`).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.calibrate.link import DEFAULT_LINK, implied_device
from gpuscale.advice.calibrate.rows import Usable, model_sizes, on_hardware, why_this_model
from gpuscale.advice.inputs import Basis
from gpuscale.advice.model.network import Link
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Measured, Source, TermId, words
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.evidence import labels, remedy
from gpuscale.bench.support import Support, support
from gpuscale.bench.support import weak as too_short
from gpuscale.hardware.links import NVLINK, PRESETS
from gpuscale.plausibility import FlagKind
from gpuscale.quantities import counted, format_count, joined, number, of_the
from gpuscale.tables.bench import most_host_devices, one_device
from gpuscale.tables.bench_runs import bench_options, runs_like


def _recorded(table: pd.DataFrame, cal: Any, column: str) -> pd.Series:
    """The values ``column`` records for the runs calibrated on (its configuration at
    every device count), missing ones dropped (none in a table made before the column)."""
    if column not in table:
        return pd.Series(dtype=object)
    rows = table[table["config_group"] == cal.config_group]
    values = rows[column].dropna()
    return values[values.astype(str).str.len() > 0]


def host_link(table: pd.DataFrame, cal: Any) -> str | None:
    """The link preset the bench host's topology records for the runs calibrated on, None
    where they record none, or several (runs of different hosts)."""
    links = set(_recorded(table, cal, "host_link").astype(str))
    return links.pop() if len(links) == 1 and next(iter(links)) in PRESETS else None


def on_bench_host_link(basis: Basis, req: AdviceRequest, table: pd.DataFrame, cal: Any) -> Basis:
    """``basis`` on the link the bench host recorded, said, where no link was given or
    measured and this machine detected none or another; else ``basis`` itself. A host of
    one GPU records no link between GPUs: its link is said as assumed (``inferred``)."""
    recorded = host_link(table, cal)
    detected = basis.link_detected
    if recorded is None or not (basis.link_assumed or (detected and detected != recorded)):
        return basis
    link = Link.from_preset(recorded)
    network = replace(basis.network, intra=link)
    gpus = pd.to_numeric(_recorded(table, cal, "host_devices"), errors="coerce").dropna()
    if not len(gpus) or gpus.max() < 2:  # no pair of GPUs: the link is inferred
        said = inferred(recorded, link, int(gpus.max()) if len(gpus) else None, cal, detected)
        return replace(
            basis, network=network, sources=basis.sources[1:], assumed=(*basis.assumed, said)
        )
    what = ", ".join(filter(None, (implied_device(recorded), f"{number(link.busbw_gbs)} GB/s")))
    said = f"Link: {recorded}, as the bench host's topology records it ({what})"
    if detected:  # this machine has GPUs of another link: the bench host's is predicted
        said += (
            f", not this machine's detected {detected}: the advice predicts the machine "
            f"benched, whose runs it is calibrated on; --interconnect {detected} to predict "
            "this one."
        )
    else:
        said += "; --interconnect to predict another."
    sources = (said, *basis.sources[1:])
    return replace(basis, network=network, sources=sources, link_assumed=False)


def inferred(
    preset: str, link: Link, gpus: int | None, cal: Any, detected: str | None
) -> Assumption:
    """The link of a bench host whose topology holds fewer than 2 GPUs (``gpus``; None: not
    recorded), as an assumption: ``preset`` is what its GPU's model implies, no link it
    measured, with the command that measures one."""
    board = implied_device(preset)
    generation = NVLINK.get(preset)
    what = f"{preset}, the NVLink of its GPU's model ({cal.device_name or 'not recorded'})"
    if generation is not None:
        article = "an" if board and board[0] in "AEFHILMNORSX" else "a"  # an H100, a B200
        whose = f"{article} {board} board's" if board else f"a {generation.architecture} GPU's"
        what += f": {generation.links_per_gpu} NVLinks per GPU, as {whose}"
        what += " on an HGX host" if board else ""
    host = "its topology" if gpus is None else f"it had {counted(gpus, 'GPU')}"
    here = (
        f" (not this machine's detected {detected}: --interconnect {detected} to predict this one)"
        if detected
        else ""
    )
    return Assumption(
        term=TermId.LINK,
        value=f"{preset}, {number(link.busbw_gbs)} GB/s",
        source=Source.ASSUMED,
        basis=f"the bench host measured no link between GPUs ({host}, recording none); "
        f"taken as {what}",
        measure=words(
            "`gpuscale collectives` on a host of 2 or more GPUs, then advise with "
            f"--collectives on its results; or --interconnect to choose a link{here}"
        ),
    )


def cpu_processes(basis: Basis, req: AdviceRequest, table: pd.DataFrame, cal: Any) -> Basis:
    """On CPU (gloo) the devices are processes of one host: their count is capped at the
    bench host's cores (as its rows record them; this machine's where they record none)
    // threads per process (at least 1; on one node), and their link is no GPU preset: an
    assumed one is named and said as such."""
    sources, network = list(basis.sources), basis.network
    if basis.link_assumed:
        intra = network.intra
        network = replace(network, intra=replace(intra, name="CPU processes"))
        sources[0] = (
            "Link: CPU processes on one host (gloo); no preset describes their link, so it "
            f"is unknown: assumed {DEFAULT_LINK}'s host-memory figures "
            f"({number(intra.busbw_gbs)} GB/s, {number(intra.latency_us)} us): measure it "
            "with `gpuscale collectives` on gloo and give --collectives, or give --busbw-gbs."
        )
    max_devices = basis.max_devices
    recorded = pd.to_numeric(_recorded(table, cal, "host_cpu_count"), errors="coerce").dropna()
    cores = int(recorded.max()) if len(recorded) else (os.cpu_count() or 1)
    per_process = max(1, cal.threads or 1)
    host = max(1, cores // per_process)
    whose = "the bench host's" if len(recorded) else "this host's (the runs record none)"
    why = (
        f"on CPU each device is a process of one host: {whose} {counted(cores, 'core')} / "
        f"{counted(per_process, 'thread')} per process as benched"
    )
    one_node = req.nodes == 1  # processes of one host: several nodes are not capped
    if one_node and req.max_devices is None and host < max_devices:
        sources.append(f"Device count capped at {host}: {why} (--max-devices to change).")
        max_devices = host
    elif one_node and host < max_devices:
        runs = "The bench host runs" if len(recorded) else "This host runs"
        sources.append(
            f"{runs} at most {host} such process{'' if host == 1 else 'es'} ({why}); counts "
            "above it, asked with --max-devices, are for a larger host."
        )
    return replace(basis, network=network, sources=tuple(sources), max_devices=max_devices)


def models_benched(table: pd.DataFrame, chosen: str) -> str:
    """Where the model advised on is the largest of several benched: which, and the others
    ``--model`` chooses (a walk: six models in a file, one advised without a word why);
    "" where the table holds one model, or a larger one was passed over
    (:func:`~gpuscale.advice.calibrate.rows.why_this_model` says it)."""
    sizes = model_sizes(table)
    if chosen not in sizes or len(sizes) < 2 or (sizes > sizes[chosen]).any():
        return ""
    others = [str(name) for name in sizes.sort_values(ascending=False).index if name != chosen]
    return (
        f"Advised on {chosen} ({format_count(sizes[chosen])} parameters), the largest of the "
        f"{len(sizes)} models benched (--model to choose another: {joined(others)})."
    )


def same_samples(table: pd.DataFrame, model: str) -> bool:
    """Whether a run of ``model`` at N > 1 was flagged for ranks that saw the same
    samples (flagged or allowed, its gradient norms measure no noise scale)."""
    rows = table[(table["model"] == model) & (table["accelerators"] > 1)]
    return any(FlagKind.SAME_SAMPLES in kinds for kinds in rows["flag_kinds"])


def measured_runs(
    table: pd.DataFrame,
    model: str,
    allow_flagged: bool,
    like: tuple[str, str | None, str | None] | None = None,
) -> list[Measured]:
    """The model's N > 1 throughput speedups in the bench table, flagged as the bench
    flags them (``allowed`` where ``--allow-flagged`` let the advice use them); with
    ``like`` (the calibrated run's configuration group, device name and the strategy
    predicted), only the runs of that configuration on that device
    (``tables.bench.runs_like``): a CPU run of the model is no measurement of its advice on
    a GPU."""
    scaling = bench_scaling(table)
    base_batch = one_device(scaling, "batch_per_device")
    base_accum = one_device(scaling, "accum")
    of = (scaling["model"] == model) & (scaling["accelerators"] > 1)
    if like is not None and len(scaling):
        of &= runs_like(scaling, *like)
    rows = scaling[of].dropna(subset=["speedup"])
    at = pd.Series(range(len(scaling)), index=scaling.index, dtype=float)
    base_at = one_device(scaling.assign(_at=at), "_at")

    def weak_remedy(index: object) -> str:
        """What to bench where the run at ``index`` or its N = 1 run is weak evidence."""
        both = [index] + ([scaling.index[int(base_at[index])]] if pd.notna(base_at[index]) else [])
        pair = scaling.loc[both]
        found = support(pair)
        # weak: notes say why (a flagged run's too, graded flagged: ``bench.evidence``)
        weak = bool(pair.get("evidence_notes", pd.Series(dtype=str)).fillna("").ne("").any())
        return found.remedy() if weak and found is not None else ""

    return [
        Measured(
            devices=int(r.accelerators),
            speedup=float(r.speedup),
            flagged=bool(r.flagged),
            batch_per_device=int(r.batch_per_device),
            allowed=bool(r.flagged) and allow_flagged,
            accum=int(r.accum),
            base=(int(base_batch[i]), int(base_accum[i])),
            weak_remedy=weak_remedy(i),
            samples_per_s=float(r.samples_per_s),
            flags=str(r.flags) if bool(r.flagged) and isinstance(r.flags, str) else "",
        )
        for i, r in zip(rows.index, rows.itertuples(), strict=True)
    ]


# The command that prints a bench table's evidence_notes (``-f csv`` alone leaves them out).
NOTES_COMMAND = (
    "gpuscale analyze --bench {} --columns configuration,accelerators,evidence_notes -f csv"
)


def weak_said(
    table: pd.DataFrame, model: str, source: Any = None
) -> tuple[str | None, str | None, Support | None]:
    """The warning when runs of ``model`` the advice uses (``ok``, not flagged, or
    allowed) are weak evidence (``bench.evidence``: few steps timed, steps spread, busy
    share not measured): short, with the kinds of why and what to bench (the default
    view's line); then the same in full, with the steps' basis and the command that
    prints the runs' notes (on ``source``, the results file, where given: a source line
    of ``--explain``); then what they give. (None, None, support) when none is weak."""
    ok = table[(table["model"] == model) & (table["status"] == "ok")]
    rows = ok[~ok["flagged"].fillna(False).astype(bool)]
    weak = rows[rows["evidence"] == "weak"]
    found = support(rows, table)
    if weak.empty or found is None:
        return None, None, found
    kinds = labels(weak["evidence_kinds"])
    counts = [int(n) for n in sorted(weak["accelerators"].unique())]
    on = f"{joined(counts)} device{'' if counts == [1] else 's'}"
    runs = of_the(len(weak), len(rows), "bench run")
    said = (
        f"WARNING: weak evidence: {runs} of {model} the advice uses (on {on}) "
        f"{'is' if len(weak) == 1 else 'are'} weak ({', '.join(kinds)})"
    )
    # runs too short to read the step's terms from: the change line says what to bench
    # (``explain.caveats.measure_first``), the warning only that they are weak
    short = (
        "" if too_short(found) else f": {remedy(found.fixes, found.steps_needed)} for firm numbers"
    )
    full = (
        f"Weak evidence: {runs} of {model} (on {on}): {', '.join(kinds)}; the bench "
        f"table's evidence_notes say more: `{NOTES_COMMAND.format(_file(source))}`; "
        f"{found.remedy(basis=True)} for firm numbers."
    )
    return f"{said}{short}", full, found


def run_options(table: pd.DataFrame, cal: Any, req: AdviceRequest) -> str:
    """The ``gpuscale bench`` options of the run advised on: the calibrated run's
    configuration in the strategy predicted, and ``--out`` the file advised on where the
    advice was given its path (``""`` where no run of it is in ``table``)."""
    like = runs_like(table, cal.config_group, cal.device_name) & (table["model"] == cal.name)
    rows = table[like]
    if rows.empty:
        return ""
    row = rows.sort_values("accelerators", kind="stable").iloc[0].copy()
    row["strategy"] = req.strategy or row.get("strategy")
    out = f" --out {_file(req.bench)}" if isinstance(req.bench, str | Path) else ""
    return f"{bench_options(row)}{out}"


def _file(source: Any) -> str:
    """The results file as a shell word (``FILE`` where the table was given, not read)."""
    return shlex.quote(str(source)) if isinstance(source, str | Path) else "FILE"


def far_beyond_the_batch_timed(cal: Any, per_device: int) -> str:
    """A warning when the advice runs a per-device batch the bench never came near: above
    the one batch it timed while the step sat on a launch-bound floor there (its work was
    never seen: priced at the device's peak, a lower bound), or more than twice that batch.
    Held out on an H100: ResNet-50 bf16 timed at batch 32 on a host whose CPU set its step
    took 116 ms at batch 256 on another host; modelled from batch 32, the step there was
    under half of that (docs/advice.md)."""
    floor = cal.compute.floor_ms > 0
    if (
        cal.shape is not None
        or per_device <= cal.batch
        or (per_device <= 2 * cal.batch and not floor)
    ):
        return ""
    how = (
        "on a launch-bound floor there, its work priced at the device's peak: a lower bound"
        if floor
        else "from the fixed cost and per-sample rate measured there"
    )
    return (
        f"UNMEASURED: per-device batch {per_device} is {per_device / cal.batch:.3g}x the "
        f"largest the bench timed ({cal.batch}); its step is modelled {how}, and the step's "
        "interval does not cover a batch that far from the one measured; measure it: "
        f"gpuscale bench --model {cal.name} --batch {per_device}"
    )


@dataclass(frozen=True, slots=True)
class ModelRuns:
    """The bench's rows on the calibrated model: its N > 1 runs like the one advised on,
    whether one saw the same samples on every rank, the most GPUs a host had, why this
    model (``rows.why_this_model``, else :func:`models_benched`; "" where asked), the runs
    used as evidence (:func:`weak_said`: ``evidence`` with the advised run's options) and
    the batch advised beyond the one timed (:func:`far_beyond_the_batch_timed`)."""

    runs: tuple[Measured, ...]
    same_samples: bool
    host_devices: int | None
    passed_over: str
    others: str
    weak: str | None
    weak_in_full: str | None
    evidence: Support | None
    beyond: str


def of_model(
    bench: pd.DataFrame, found: Usable, cal: Any, req: AdviceRequest, per_device: int
) -> ModelRuns:
    """:class:`ModelRuns` of ``cal``'s model (a ``Calibration``) in ``bench``, read once,
    advised at ``per_device`` samples per device."""
    table = found.table
    weak, weak_in_full, evidence = weak_said(table[on_hardware(table, cal)], cal.name, req.bench)
    if evidence is not None:  # the bench command of the advised run, on the file advised on
        evidence = replace(evidence, run=run_options(table, cal, req))
    params_given = req.params is not None
    passed_over = "" if req.model or params_given else why_this_model(bench, cal.name, found.broken)
    others = (
        ""
        if passed_over or req.model
        else models_benched(bench, None if params_given else cal.name)
    )
    beyond = far_beyond_the_batch_timed(cal, per_device)
    like = (cal.config_group, cal.device_name, req.strategy)
    return ModelRuns(
        runs=tuple(measured_runs(bench, cal.name, req.allow_flagged, like)),
        same_samples=same_samples(bench, cal.name),
        host_devices=most_host_devices(table),
        passed_over=passed_over,
        others=others,
        weak=weak,
        weak_in_full=weak_in_full,
        evidence=evidence,
        beyond=beyond,
    )
