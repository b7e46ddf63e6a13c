"""Inputs that cannot be true, named where they are found: an achieved rate under 1% of
the device's peak or above it (the device catalogue), a predicted time to train below the
fastest MLPerf system with at least as many accelerators on the workload (the bundled
scores, ``gpuscale.load_round()``), and a device count above the GPUs of the topology.

The house's plausibility rules are ``gpuscale/plausibility.py`` (bottom floor: a run's
own numbers); these limits need the hardware and MLPerf's results, floors above it.
"""

from __future__ import annotations

from typing import Any

from gpuscale.hardware.links import LINK_DEVICE as _LINK_DEVICE
from gpuscale.hardware.peaks import PEAKS, peak_for
from gpuscale.mlperf.bundled import load_round
from gpuscale.quantities import fixed_apart, number, numbers_apart

MIN_MFU = 0.01
MARGIN = 2.0  # mlperf_floor's allowance for convergence at a smaller batch


def implied_device(link_name: str) -> str | None:
    """The device a link preset's name implies (``nvlink4`` -> H100 SXM), else None."""
    for prefix, device in _LINK_DEVICE.items():
        if link_name.startswith(prefix):
            return device
    return None


def rate_warnings(
    tflops: float,
    device: str | None,
    precision: str,
    *,
    low: bool = True,
    low_note: str = "",
    flops_assumed: bool = False,
) -> list[str]:
    """A warning when the achieved TFLOP/s per device is above the device's highest
    (bf16) peak or (with ``low``) under 1% of its peak at ``precision`` (``low_note``: the
    other reading of a low rate; ``flops_assumed``: the FLOPs per sample were not given but
    taken as 6 x parameters, a transformer's, which a low rate is said to rest on); for an
    unknown device, only a rate above every known
    device's peak (64,000,000 TFLOP/s passed unflagged without --device-name)."""
    peak = peak_for(device)
    if peak is None:
        fastest = max((p for _, p in PEAKS), key=lambda p: p.bf16)
        if tflops > fastest.bf16:
            rate, top = numbers_apart(tflops, fastest.bf16)  # above it as printed too
            return [
                f"IMPLAUSIBLE: {rate} TFLOP/s per device is above the peak of every "
                f"accelerator gpuscale knows (the fastest, {fastest.device}: "
                f"{top} TFLOP/s bf16): check the step time, batch and FLOPs"
            ]
        return []
    at = peak.tflops(precision)
    if tflops > peak.bf16:
        rate, top = numbers_apart(tflops, peak.bf16)  # above it as printed too
        return [
            f"IMPLAUSIBLE: {rate} TFLOP/s per device is above the {peak.device} "
            f"peak ({top} TFLOP/s bf16): check the step time, batch and FLOPs"
        ]
    if low and tflops < MIN_MFU * at:
        check = "check the step time, batch and FLOPs per sample"
        if flops_assumed:  # the assumption is what the rate rests on: name it and its fix
            check = (
                "no FLOPs per sample were given, so 6 x parameters was assumed (a "
                "transformer's); a CNN does far more per parameter (each weight is reused "
                "across the image), which makes this rate look implausible: give "
                "--flops-per-sample (in Python: flops_per_sample=), e.g. from "
                "torch.utils.flop_counter; else check the step time and batch"
            )
        return [
            f"IMPLAUSIBLE: the inputs imply {number(tflops)} TFLOP/s per device, "
            # the share to the digits that show it under the floor (0.9996%, never 1.00%)
            f"{fixed_apart(100 * tflops / at, 100 * MIN_MFU)}% of the {peak.device} "
            f"{precision} peak ({number(at)} TFLOP/s; "
            f"under {MIN_MFU:.0%}): {check}" + (f", {low_note}" if low_note else "")
        ]
    return []


def unchecked_note(
    tflops: float, device: str | None, precision: str, what: str = "the inputs imply"
) -> str:
    """Where a device is named but the device catalogue has no peak for it (an A10G, a
    TPU), the sentence saying the rate (``what`` gives it) could not be checked against
    its peak, and why; "" where there is no device or its peak is known (the check was
    made). A walk's ``--device-name L4``, then without a peak, skipped it without a word."""
    if not device or peak_for(device) is not None:
        return ""
    fastest = max((p for _, p in PEAKS), key=lambda p: p.bf16)
    return (
        f"Plausibility: not checked against the device's peak: gpuscale records no peak "
        f"FLOP/s for {device!r} (the device catalogue), so the {number(tflops)} TFLOP/s per "
        f"device {what} would be flagged only above the fastest accelerator it knows "
        f"({fastest.device}, {number(fastest.bf16)} TFLOP/s bf16); compare it with the "
        f"device's datasheet ({precision} dense peak)."
    )


def mlperf_floor(workload: str, largest: int = 1024) -> tuple[tuple[int, float, str], ...]:
    """(N, minutes, why) for N = 1..``largest``: the least time to train N accelerators
    could need on ``workload`` by the bundled MLPerf results: the fastest system with M >= N
    accelerators, scaled to N ideally and then halved (``T_M M / N / 2``: a margin for a
    smaller global batch converging in fewer samples). Below it the inputs cannot be true."""
    scores = load_round().scores
    rows = scores[scores["workload"] == workload].dropna(subset=["time_to_train_min"])
    if rows.empty:
        return ()
    fastest = rows.loc[rows.groupby("accelerators")["time_to_train_min"].idxmin()]
    out = []
    for n in range(1, largest + 1):
        above = fastest[fastest["accelerators"] >= n]
        if above.empty:
            break
        bound = above["time_to_train_min"] * above["accelerators"] / n / MARGIN
        best = above.loc[bound.idxmin()]
        out.append(
            (
                n,
                float(bound.min()),
                f"MLPerf {best['round']}: {best['submitter']}, {int(best['accelerators'])} x "
                f"{best['accelerator_model']}, {number(best['time_to_train_min'])} min",
            )
        )
    return tuple(out)


def topology_cap(topology: Any, nodes: int, max_devices: int) -> tuple[int, str | None]:
    """The largest device count the topology allows on one node, and a sentence when it
    caps ``max_devices`` (a one-GPU topology: nothing to compare)."""
    if topology is None or nodes > 1:
        return max_devices, None
    gpus = len(topology.gpus)
    if gpus <= 1:
        return 1, "The topology has one GPU: there is nothing to compare; 1 device only."
    if max_devices > gpus:
        return gpus, f"Device count capped at the topology's {gpus} GPUs (asked: {max_devices})."
    return max_devices, None
