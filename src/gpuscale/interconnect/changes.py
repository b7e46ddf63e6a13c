"""Has this interconnect changed? The latest sweep's peak bus bandwidth against the best
earlier sweep of the same collective and ranks that ran alike (backend, device kind, nodes,
settings), over the sizes both measured, with at least 10 timed calls per size each.

A peak more than 15% below it is a drop, more than 15% above it a rise, each only beyond
the spread of either sweep's calls (p50 to p99 of the slowest rank): within it, noise is
said to be noise; "within" is said only within 15% either way. The comparison is a record
(:class:`SweepChange`: its kind, both peaks, their ratio) whose words are its sentence;
:mod:`gpuscale.interconnect.verdict` adds it to each collective's verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.interconnect.expected import Header
from gpuscale.interconnect.nccl import backend_for
from gpuscale.quantities import number
from gpuscale.tables.codes import Code
from gpuscale.tables.json_depth import JSON

if TYPE_CHECKING:
    import pandas as pd

DROP_SHARE = 0.15
MIN_ITERS = 10  # timed calls per size below which two sweeps' peaks are not compared
# What two sweeps compared share (header fields): ``hosts``, the machines the ranks ran
# on, so one node's sweep is never read as a change of another's in a file several
# nodes append to (headers written before it have none: compared as before).
ALIKE = ("backend", "device", "nodes", "hosts")
ALIKE_SETTINGS = ("gap_ms", "load")


class ChangeKind(Code):
    """How the latest sweep's peak compares with the best earlier sweep that ran alike."""

    DROPPED = "dropped"  # lower beyond DROP_SHARE and beyond the calls' own spread
    ROSE = "rose"  # higher beyond DROP_SHARE and beyond the calls' own spread
    NOISE = "noise"  # lower or higher beyond DROP_SHARE, within the calls' own spread
    WITHIN = "within"  # within DROP_SHARE either way
    TOO_FEW_CALLS = "too few calls"  # one sweep timed fewer than MIN_ITERS calls per size


class FewCalls(Code):
    """Which of two sweeps timed too few calls per size to be compared (``TOO_FEW_CALLS``)."""

    LATEST = "latest"  # the sweep judged
    EARLIER = "earlier"  # the earlier sweep it is set against (``SweepChange.against``)


@dataclass(frozen=True, slots=True)
class SweepChange:
    """The latest sweep's peak against ``against``, the id of the best earlier sweep that
    ran alike, over the sizes both measured: both peaks (GB/s) and the larger of
    ``DROP_SHARE`` and either peak's call-to-call spread (``noise_share``); for
    ``TOO_FEW_CALLS``, ``against`` is the latest earlier sweep that ran alike, ``too_few``
    which of the two timed too few calls and ``iters`` how many; ``suspects``: what may
    have changed, by the backend."""

    kind: ChangeKind
    against: str
    before_gbs: float = math.nan
    now_gbs: float = math.nan
    noise_share: float = math.nan
    iters: int | None = None
    suspects: str = ""
    too_few: FewCalls | None = None

    @property
    def ratio(self) -> float:
        """The latest peak over the earlier one (1: the same; NaN: not compared)."""
        return self.now_gbs / self.before_gbs

    @property
    def lower_share(self) -> float:
        """How much lower the latest peak is (negative: higher)."""
        return 1 - self.ratio

    def to_dict(self) -> dict[str, JSON]:
        """The change as JSON: its kind, the sweep compared with, both peaks (GB/s; NaN,
        null in JSON, where not compared), the noise share, the calls, which sweep timed too
        few (``latest``, ``earlier``; null where compared) and the sentence."""
        return {
            "kind": str(self.kind),
            "against": self.against,
            "before_gbs": self.before_gbs,
            "now_gbs": self.now_gbs,
            "noise_share": self.noise_share,
            "iters": self.iters,
            "suspects": self.suspects,
            "too_few": None if self.too_few is None else str(self.too_few),
            "sentence": self.sentence(),
        }

    def sentence(self) -> str:
        return _CHANGE_WORDS[self.kind].format(
            c=self,
            share=abs(self.lower_share),
            way="lower" if self.lower_share > 0 else "higher",
            drop_or_rise="drop" if self.lower_share > 0 else "rise",
            whose="this sweep's" if self.too_few is FewCalls.LATEST else f"sweep {self.against}'s",
            before=number(self.before_gbs),
            now=number(self.now_gbs),
            min_iters=MIN_ITERS,
            drop=DROP_SHARE,
        )


_CHANGE_WORDS = {
    ChangeKind.DROPPED: "DROPPED {c.lower_share:.0%} since sweep {c.against} ({before} -> {now} "
    "GB/s, beyond its noise): something changed ({c.suspects})",
    ChangeKind.ROSE: "ROSE {share:.0%} since sweep {c.against} ({before} -> {now} GB/s, beyond "
    "its noise): something changed ({c.suspects})",
    ChangeKind.NOISE: "{share:.0%} {way} than sweep {c.against} ({before} -> {now} GB/s), within "
    "the calls' own spread ({c.noise_share:.0%}, p50 to p99): noise, not a {drop_or_rise}",
    ChangeKind.WITHIN: "Within {drop:.0%} of the best earlier sweep ({c.against}: {before} GB/s)",
    ChangeKind.TOO_FEW_CALLS: "Not compared with earlier sweeps: {whose} {c.iters} timed calls "
    "per size are too few to tell a change from noise (--iters {min_iters} or more)",
}


def _alike(a: Header, b: Header) -> bool:
    """Whether two sweeps' headers say they ran alike: the same backend (its transport),
    device kind, nodes and hosts, the same compute between calls and load."""
    settings_a, settings_b = a.get("settings") or {}, b.get("settings") or {}
    return all(a.get(k) == b.get(k) for k in ALIKE) and all(
        settings_a.get(k) == settings_b.get(k) for k in ALIKE_SETTINGS
    )


def _noise(row: pd.Series) -> float:
    """The share by which one call's bus bandwidth at a size varies: 1 - p50/p99 of the
    slowest rank's per-call time (0 where the file has no percentiles)."""
    p50, p99 = row.get("time_us_p50"), row.get("time_us_p99")
    if not (isinstance(p50, float | int) and isinstance(p99, float | int)):
        return 0.0
    if not (p50 > 0 and p99 > 0):  # NaN compares false too
        return 0.0
    return max(0.0, 1 - p50 / p99)


def _suspects(header: Header) -> str:
    """What may have changed between two sweeps that ran alike, by their backend."""
    backend = header.get("backend") or backend_for(header.get("device"))
    if backend == "nccl":
        return "driver, P2P, a link, NCCL settings"
    return "other work on the host, CPU frequency, threads per process"


def _iters(header: Header) -> int | None:
    """The timed calls per size a sweep's header says it ran (None: not written)."""
    iters = (header.get("settings") or {}).get("iters")
    return iters if isinstance(iters, int) else None


def _too_few(header: Header) -> bool:
    iters = _iters(header)
    return iters is not None and iters < MIN_ITERS


def sweep_change(
    ok: pd.DataFrame, headers: Mapping[str, Header], op: str, latest: str, ranks: int
) -> SweepChange | None:
    """The latest sweep's peak against the best earlier sweep (written before it) that
    ran alike (same collective, ranks, backend, device kind, nodes and settings), over the
    sizes both measured: a drop (a rise) only more than :data:`DROP_SHARE` below (above) it and
    beyond either peak's call-to-call noise, and only where both timed at least
    :data:`MIN_ITERS` calls per size."""
    header = headers.get(latest) or {}
    same = ok[(ok["op"] == op) & (ok["ranks"] == ranks)]
    mine = same[same["sweep_id"] == latest]
    # earlier: written before it (``headers`` keep the file's order); a sweep run beside
    # it and written after it is not compared
    order = list(headers)
    later = set(order[order.index(latest) + 1 :]) if latest in order else set()
    others = same[(same["sweep_id"] != latest) & ~same["sweep_id"].isin(later)]
    found = []  # (their peak row, my peak row over the same sizes, their sweep id)
    for sweep_id, theirs in others.groupby("sweep_id", sort=False):
        if not _alike(headers.get(sweep_id) or {}, header):
            continue
        sizes = set(theirs["size_bytes"]) & set(mine["size_bytes"])
        if sizes:
            their_peak = theirs.loc[theirs[theirs["size_bytes"].isin(sizes)]["busbw_gbs"].idxmax()]
            my_peak = mine.loc[mine[mine["size_bytes"].isin(sizes)]["busbw_gbs"].idxmax()]
            found.append((their_peak, my_peak, str(sweep_id)))
    enough = [f for f in found if not _too_few(headers.get(f[2]) or {})]
    if not found:
        return None
    earlier = found[-1][2]  # the latest earlier sweep that ran alike
    if _too_few(header):
        few = FewCalls.LATEST
        return SweepChange(ChangeKind.TOO_FEW_CALLS, earlier, iters=_iters(header), too_few=few)
    if not enough:
        iters, few = _iters(headers.get(earlier) or {}), FewCalls.EARLIER
        return SweepChange(ChangeKind.TOO_FEW_CALLS, earlier, iters=iters, too_few=few)
    their_peak, my_peak, best_id = max(enough, key=lambda f: float(f[0]["busbw_gbs"]))
    before, now = float(their_peak["busbw_gbs"]), float(my_peak["busbw_gbs"])
    noise = max(DROP_SHARE, _noise(their_peak), _noise(my_peak))
    kind = ChangeKind.WITHIN
    if now < (1 - noise) * before:
        kind = ChangeKind.DROPPED
    elif now > (1 + noise) * before:
        kind = ChangeKind.ROSE
    elif not (1 - DROP_SHARE) * before <= now <= (1 + DROP_SHARE) * before:
        kind = ChangeKind.NOISE
    return SweepChange(kind, best_id, before, now, noise, suspects=_suspects(header))
