"""What training to the target takes: ``E(B) = E_min (1 + B / B_noise)`` samples at global
batch ``B`` (``analysis.critical_batch``), from an MLPerf workload's reference convergence
points, a noise scale given or the bench's; and MLPerf's least time to train."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuscale.advice.model.priors import FEW_NOISE_STEPS, phrase
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.analysis.critical_batch import ConvergenceModel, NoiseScale
from gpuscale.mlperf.bundled import load_round
from gpuscale.mlperf.rcp import WorkloadRcps
from gpuscale.tables.requests import NamedError, ref
from gpuscale.tables.workloads import Unit


@dataclass(frozen=True, slots=True)
class Convergence:
    """The convergence ``model`` (None: none prices a larger batch), whether the samples to
    train are its scale, the bench's noise scale measured over too few steps (``thin``),
    MLPerf's ``floor``, and the bench noise scale's steps where it prices the batch."""

    model: ConvergenceModel | None
    samples_used: bool
    thin: NoiseScale | None
    floor: tuple[tuple[int, float, Finding], ...]
    noise_steps: int | None


def resolved(
    found: WorkloadRcps | None,
    fitted: ConvergenceModel | None,
    *,
    workload: str | None,
    noise_scale: float | None,
    samples: float,
    samples_given: bool,
    reference_batch: float,
    measured: NoiseScale | None,
    max_devices: int,
) -> Convergence:
    """``convergence_for`` (the bench's noise scale only from ``FEW_NOISE_STEPS`` steps) and
    MLPerf's least time to train up to ``max_devices`` (none where ``samples_given``)."""
    given = noise_scale is not None or workload is not None
    few = measured is not None and measured.steps < FEW_NOISE_STEPS
    thin = measured if few and not given else None
    kept = measured if thin is None else None
    model, samples_used = convergence_for(
        noise_scale=noise_scale,
        rcps=found,
        fitted=fitted,
        samples=samples,
        reference_batch=reference_batch,
        measured=kept,
        samples_given=samples_given,
    )
    # MLPerf's times are of the workload's own samples to train: where --samples replaces
    # them (an epoch-counted workload's), a time to train is no longer comparable with them
    floor = mlperf_floor(workload, max_devices) if workload and not samples_given else ()
    bench_priced = kept is not None and noise_scale is None and not workload
    steps = kept.steps if bench_priced else None
    return Convergence(model, samples_used, thin, floor, steps)


def convergence_for(
    *,
    noise_scale: float | None,
    rcps: WorkloadRcps | None,
    samples: float,
    reference_batch: float,
    measured: NoiseScale | None = None,
    samples_given: bool = False,
    fitted: ConvergenceModel | None = None,
) -> tuple[ConvergenceModel | None, bool]:
    """The convergence model, and whether ``samples`` are its scale: an MLPerf workload's RCP
    fit (``fitted``, of ``rcps``; where its RCPs count samples, its own, ``samples_given``
    refused; where they count epochs of a known size, its own unless ``samples_given``; RCPs
    without a fit are refused by ``calibrate/build.py``), else a given noise
    scale, else the bench's, with ``E_min`` such that ``samples`` are needed at
    ``reference_batch``; None without any."""
    if rcps is not None and fitted is not None:
        if rcps.unit is Unit.SAMPLES:
            if samples_given:
                workload = ref("workload", rcps.workload)
                raise NamedError(
                    phrase("samples_with_rcps", samples=ref("samples"), workload=workload)
                )
            return fitted, False
        epoch = rcps.samples_per_epoch if rcps.unit is Unit.EPOCHS else None
        if epoch is not None and not samples_given:  # epochs x the samples an epoch holds
            source = f"{fitted.source}, {epoch:,} samples an epoch"
            return ConvergenceModel(fitted.e_min * epoch, fitted.b_noise, source), False
        # RCPs in epochs of unknown size, steps or tokens: the shape (B_noise, a global batch
        # in samples, whatever E counts) from them, the scale from ``samples`` (GPT-3's tokens
        # are 2,048 a sample at its reference's sequence length, not the model's asked about)
        b_noise, source = fitted.b_noise, fitted.source + ", scaled"
    elif noise_scale is not None:
        if not noise_scale > 0:
            raise ValueError(f"noise scale must be positive, got {noise_scale}")
        b_noise, source = noise_scale, "noise scale as given"
    elif measured is not None:  # the bench's: its numbers said by ``explain.explanation.worded``
        b_noise, source = measured.b_simple, ""
    else:
        return None, True
    e_min = samples / (1 + reference_batch / b_noise)
    return ConvergenceModel(e_min, b_noise, source), True


MARGIN = 2.0  # mlperf_floor's allowance for convergence at a smaller batch


def mlperf_floor(workload: str, largest: int = 1024) -> tuple[tuple[int, float, Finding], ...]:
    """(N, minutes, the system) for N = 1..``largest``: the least time to train N accelerators
    could need on ``workload`` by the bundled MLPerf results: the fastest system with M >= N,
    scaled ideally to N and halved (``T_M M / N / 2``: a margin for a smaller global batch).
    Below it the inputs cannot be true."""
    scores = load_round().scores
    rows = scores[scores["workload"] == workload].dropna(subset=["time_to_train_min"])
    if rows.empty:
        return ()
    fastest = rows.loc[rows.groupby("accelerators")["time_to_train_min"].idxmin()]
    counts = fastest["accelerators"].to_numpy()  # ascending: groupby sorts its keys
    work = fastest["time_to_train_min"].to_numpy() * counts  # T_M M, minutes x accelerators
    why: dict[int, Finding] = {}  # the system behind each bound, made once per system
    out = []
    for n in range(1, min(largest, int(counts[-1])) + 1):
        first = int(np.searchsorted(counts, n))  # the systems with M >= n
        bound = work[first:] / n / MARGIN
        at = first + int(np.argmin(bound))  # the first of equal bounds, as idxmin picks
        if at not in why:
            best = fastest.iloc[at]
            why[at] = Finding.of(
                FindingKind.MLPERF_SYSTEM,
                round=str(best["round"]),
                submitter=str(best["submitter"]),
                devices=int(best["accelerators"]),
                accelerator=str(best["accelerator_model"]),
                minutes=float(best["time_to_train_min"]),
            )
        out.append((n, float(bound.min()), why[at]))
    return tuple(out)
