"""The network as a ``gpuscale collectives`` sweep measured it: the curves, and the link read
off them for the device counts the sweep did not cover (``fit_link``). Pure: the file is
read by ``records.read_collectives`` before the advice, which names the link read off
the sweep as its sentences say it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from gpuscale.interconnect.cost import ring_factor
from gpuscale.interconnect.network import CommCurve, Link, Network


@dataclass(frozen=True, slots=True)
class CurveRead:
    """How one curve (a collective on a rank count) was read off its file: the sweep
    chosen (``iters``: its timed calls per size, None unrecorded) and the file's latest of
    that collective and count; the time per size fitted (``median``: the slowest rank's
    median call, ``time_us_p50``; ``mean``: nccl-tests' ``time_us``, where a size records
    no median); ``noisy``: of its ``sizes``, those whose mean call is over
    ``NOISY_P95_OVER_P50`` x its median (the bench's noise rule); ``means``: the curve of
    the mean calls where the medians were fitted (what nccl-tests prints); ``sizes``: those
    fitted, less any whose check found wrong elements (a result that is no measurement)."""

    op: str
    ranks: int
    sweep_id: str
    iters: int | None
    latest_id: str
    latest_iters: int | None
    times: str
    noisy: int
    sizes: int
    means: CommCurve | None = None
    wrong: int = 0  # elements the check found wrong (nccl-tests' #wrong) at ``wrong_sizes``
    wrong_sizes: tuple[float, ...] = ()  # bytes: left out of the fit


@dataclass(frozen=True, slots=True)
class MeasuredCurves:
    """A sweep's curves (per collective and rank count, the sweep of the most timed calls
    per size, the latest of those; each size's median call) and what the header of the
    latest sweep read says: ``nodes``, ``ranks``, whether it ran under compute load, its
    host's load; ``source``: the file as given;
    ``read``: how each curve was read; ``skipped``: the file's lines not read, one
    sentence each."""

    curves: tuple[CommCurve, ...]
    source: str
    nodes: int = 1
    ranks: int = 0
    under_load: bool = False
    device: str = ""  # the header's: "cpu" (gloo processes) or "cuda"; "" unsaid
    sweep_id: str = ""  # the sweep whose header this is
    # its host's CPU time other processes used while it ran (None: not measured)
    other_load_share: float | None = None
    read: tuple[CurveRead, ...] = ()
    # curves not fitted: under 4 sizes left once those whose check found wrong elements
    # were left out
    unfitted: tuple[CurveRead, ...] = ()
    skipped: tuple[str, ...] = ()

    def read_of(self, curve: CommCurve) -> CurveRead | None:
        """How ``curve`` was read (None: a curve this file did not give)."""
        return next((r for r in self.read if (r.op, r.ranks) == (curve.op, curve.ranks)), None)


def fit_link(curve: CommCurve, name: str) -> Link:
    """An alpha-beta link read off a curve where each constant decides: the bus bandwidth
    from the slope through the large sizes (the largest sixteenth of the range, three
    sizes at least; one line through every size lets the many small ones pull the slope),
    the latency from the small sizes' median time less their bandwidth term."""
    size, time_s = np.asarray(curve.sizes), np.asarray(curve.times_s)
    large = size >= size.max() / 16
    if large.sum() < 3:
        large = np.arange(len(size)) >= len(size) - 3
    # a noisy sweep can give a slope near zero: never more than 4x the best bus
    # bandwidth the sweep actually reached
    observed = float(np.max(ring_factor(curve.ranks) * size / time_s))
    slope = max(
        float(np.polyfit(size[large], time_s[large], 1)[0]),
        ring_factor(curve.ranks) / (4 * observed),
    )
    small = np.arange(len(size)) < max(1, len(size) // 4)
    fixed_s = max(float(np.median(time_s[small] - slope * size[small])), 0.0)
    return Link(
        busbw_gbs=ring_factor(curve.ranks) / slope / 1e9,
        latency_us=fixed_s / (2 * (curve.ranks - 1)) * 1e6,
        name=name,
    )


def network_from_collectives(
    measured: MeasuredCurves, base: Network, name: Callable[[int], str]
) -> Network:
    """``base`` with the measured curves; the intra-node link is read off the largest
    single-node all-reduce (for device counts the sweep did not cover), named ``name`` of
    that all-reduce's ranks."""
    per_node = base.per_node
    if measured.nodes > 1 and not per_node:
        per_node = measured.ranks // measured.nodes or None
    network = replace(base, per_node=per_node, curves=measured.curves)
    inside = network.inside_curves()
    if inside:
        widest = max(inside, key=lambda c: c.ranks)
        network = replace(network, intra=fit_link(widest, name(widest.ranks)))
    return network
