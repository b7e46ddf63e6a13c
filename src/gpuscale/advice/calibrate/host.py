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
used: the largest model with a trustworthy N = 1 run is advised on
(``calibrate.default_model``); a walk's file whose largest model (tf-1.5m) was all flagged
advised mlp-1m, and its headline said only "1.06M parameters".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.calibrate.link import DEFAULT_LINK, implied_device
from gpuscale.advice.inputs import Basis
from gpuscale.advice.model.network import Link
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Measured, Source, TermId, words
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.support import support
from gpuscale.hardware.links import NVLINK, PRESETS
from gpuscale.plausibility import FlagKind
from gpuscale.quantities import counted, format_count, joined, noun_for, number
from gpuscale.tables.bench import most_host_devices, one_device
from gpuscale.tables.bench_runs import runs_like

if TYPE_CHECKING:  # the usable runs' record, read for its tables
    from gpuscale.advice.calibrate.rows import Usable


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


def _why_not(runs: pd.DataFrame, broken: list[int] | None = None) -> str:
    """Why a model's runs give no trustworthy N = 1 run (``broken``: the counts whose loss
    was not finite, where it is broken: then none of its runs is used)."""
    if broken:
        return (
            f"loss not finite on {joined(broken)} {noun_for(broken[-1], 'device')}, "
            "a broken model: none of its runs used, --allow-flagged or not"
        )
    single = runs[runs["accelerators"] == 1]
    if single.empty:
        return "no N = 1 run"
    ok = single[single["status"] == "ok"]
    if ok.empty:
        return f"its N = 1 {noun_for(len(single), 'run')} failed ({single['status'].iloc[-1]})"
    kinds = dict.fromkeys(k for row in ok["flag_kinds"] for k in row)
    return f"its N = 1 {noun_for(len(ok), 'run')} flagged ({joined(kinds) or 'untrusted'})"


def why_this_model(
    table: pd.DataFrame, chosen: str, broken: dict[str, list[int]] | None = None
) -> str:
    """The sentence naming the model advised on and, where larger models of the table were
    passed over, each and why (``broken``: the models whose loss was not finite, with the
    counts, ``flag_remedy.broken_models``); "" when the chosen model is the largest."""
    broken = broken or {}
    sizes = _sizes(table)
    if chosen not in sizes:
        return ""
    larger = sizes[sizes > sizes[chosen]].sort_values(ascending=False)
    if larger.empty:
        return ""
    passed = "; ".join(
        f"{name} ({format_count(size)}): "
        f"{_why_not(table[table['model'] == name], broken.get(str(name)))}"
        for name, size in larger.items()
    )
    return (
        f"Advised on {chosen} ({format_count(sizes[chosen])} parameters), the largest model "
        f"with a trustworthy N = 1 run; not used: {passed} (--model to choose one)."
    )


def _sizes(table: pd.DataFrame) -> pd.Series:
    """Each model's parameters, by name."""
    return table.dropna(subset=["params"]).groupby("model")["params"].max()


def models_benched(table: pd.DataFrame, chosen: str) -> str:
    """Where the model advised on is the largest of several benched: which, and the others
    ``--model`` chooses (a walk: six models in a file, one advised without a word why);
    "" where the table holds one model, or a larger one was passed over
    (:func:`why_this_model` says it)."""
    sizes = _sizes(table)
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


@dataclass(frozen=True, slots=True)
class ModelRuns:
    """The bench's rows on the calibrated model: its N > 1 runs like the one advised on,
    whether one saw the same samples on every rank, the most GPUs a host had, and why
    this model (:func:`why_this_model`, else :func:`models_benched`; "" where asked)."""

    runs: tuple[Measured, ...]
    same_samples: bool
    host_devices: int | None
    passed_over: str
    others: str


def of_model(bench: pd.DataFrame, found: Usable, cal: Any, req: AdviceRequest) -> ModelRuns:
    """:class:`ModelRuns` of ``cal``'s model (a ``Calibration``) in ``bench``, read once."""
    params_given = req.params is not None
    passed_over = "" if req.model or params_given else why_this_model(bench, cal.name, found.broken)
    others = (
        ""
        if passed_over or req.model
        else models_benched(bench, None if params_given else cal.name)
    )
    like = (cal.config_group, cal.device_name, req.strategy)
    return ModelRuns(
        runs=tuple(measured_runs(bench, cal.name, req.allow_flagged, like)),
        same_samples=same_samples(bench, cal.name),
        host_devices=most_host_devices(found.table),
        passed_over=passed_over,
        others=others,
    )
