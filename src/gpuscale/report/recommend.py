"""The report's first answer: per workload, one recommended accelerator count, like with
like, why not more, and the range its 95% intervals allow.

Within the workload's accelerator family that ran the most counts (every system against the
family's own reference, the study's rule within the family), the recommendation is the
E' threshold pick of ``gpuscale.analysis.equilibrium``: the largest count whose fastest
system keeps ``E' >= threshold x`` the family's best. Within one family
``E'_i / E'_best = (T_best N_best) / (T_i N_i)`` (accelerator-hours), so the choice does
not depend on the reference rule.

* **Range** (95%): the counts of the family's fastest-per-count systems whose 95% interval
  of time to train keeps (low end: at its upper bound) or could keep (high end: at its
  lower bound) ``T_i N_i <= T_best N_best / threshold``, the best at its point.
* **Edge**: the smallest and largest counts the family ran (``fewest_measured``,
  ``most_measured``); a pick or range reaching one rests on the edge of the data (no
  fewer, or no more, was measured), said with the answer.
* **Why not more**: at the next larger count the family ran, E' (against the family's own
  reference) = throughput efficiency x convergence factor (``gpuscale.analysis.decompose``);
  each factor's ratio to the recommended count's, and the one further below 1 decides.
  Like with like includes the software: the factors compare one submitter's own systems
  at the two counts where a submitter ran both (``compared`` names one submitter), else
  the picked system and the next count's fastest (two: the comparison crosses
  submitters, said). Outliers (``gpuscale.analysis.outliers``: far from the family's
  others at their count, or alone at a count beside such a submitter's) set no E' and
  decide nothing: counts only they ran are passed over (``passed_over``, with why), and
  where no other count is above the pick, "why not more" is not decided; where they
  leave the family's others at fewer than two counts, nothing is picked and the reason
  names them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from gpuscale.analysis.analyze import WorkloadAnalysis, WorkloadTable
from gpuscale.analysis.crossing import FEWEST, MOST, scaling_family
from gpuscale.analysis.decompose import decompose, table_basis
from gpuscale.analysis.equilibrium import Equilibrium, equilibrium_by_family
from gpuscale.analysis.frontier import fastest_per_count
from gpuscale.analysis.metrics import within_own_family
from gpuscale.analysis.outliers import outlier_column
from gpuscale.analysis.pick import Pick
from gpuscale.quantities import counted, joined, named
from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD
from gpuscale.tables.analysis import CI_COLUMNS, SYSTEM_COLUMNS, root_reason


@dataclass(frozen=True, slots=True)
class Recommendation:
    """One workload's recommended count within ``family`` (times in minutes)."""

    round: str
    workload: str
    family: str
    threshold: float
    accelerators: int | None  # None: no count keeps the threshold (``why_none`` says)
    submitter: str = ""
    system_name: str = ""
    time_min: float = float("nan")
    count_low: int | None = None  # the 95% range of the recommended count
    count_high: int | None = None
    # the smallest and largest counts the family's systems ran (outliers too): a pick or
    # range that reaches one rests on the edge of the data (no fewer, or no more, measured)
    fewest_measured: int | None = None
    most_measured: int | None = None
    next_accelerators: int | None = None  # the next larger count the family ran
    next_e_ratio: float = float("nan")  # E' there over the family's best
    throughput_ratio: float = float("nan")  # throughput efficiency there / at the pick
    convergence_ratio: float = float("nan")  # convergence factor there / at the pick
    decides: str = ""  # "throughput", "convergence" or "" (no larger count, or unknown)
    why_none: str = ""
    # the factors of E' at the next count that could not be read: said, never a stop; and
    # why, from the two compared systems' fields: the flag of a count read but impossible
    # (``samples_to_converge_flag``) with (flagged, all) of the workload's results, what
    # their logs lack ("samples to converge", "global batch"), and whether neither has an
    # expected count at its batch (the round's RCPs: v0.7 has none)
    unread: tuple[str, ...] = ()
    unread_flag: str = ""
    flagged_results: tuple[int, int] = (0, 0)
    unread_lacking: tuple[str, ...] = ()
    no_expected: bool = False
    # the submitters whose systems the factors compare: at the pick's count and at the
    # next; one name where a submitter's own systems ran both (like with like), which
    # need not be the picked system's submitter (Lambda's 32 picked, Dell's own 32 and 64
    # compared); and those two systems' names, at the pick's count and at the next
    compared: tuple[str, ...] = ()
    compared_systems: tuple[str, ...] = ()
    # counts above the pick that only outliers ran (``gpuscale.analysis.outliers``): no
    # count is decided on them; (count, submitter, the outlier its software rests on)
    passed_over: tuple[tuple[int, str, str], ...] = ()
    outliers: tuple[str, ...] = ()  # the family's outliers, "submitter system: why"

    @property
    def edge(self) -> str:
        """``FEWEST`` or ``MOST`` where the pick is the smallest or largest count the
        family measured (``gpuscale.analysis.crossing.measured_edge``), "" between."""
        if self.accelerators is None or self.fewest_measured == self.most_measured:
            return ""
        ends = {self.fewest_measured: FEWEST, self.most_measured: MOST}
        return ends.get(self.accelerators, "")

    @property
    def range_edges(self) -> tuple[str, ...]:
        """The ends of the family's counts its 95% range reaches (``FEWEST``, ``MOST``)."""
        if self.accelerators is None or self.fewest_measured == self.most_measured:
            return ()
        low = (FEWEST,) * (self.count_low == self.fewest_measured)
        return low + (MOST,) * (self.count_high == self.most_measured)

    @property
    def crosses_submitters(self) -> bool:
        """Whether the comparison at the next count sets one submitter against another."""
        return len(self.compared) > 1

    @property
    def own_comparison(self) -> str:
        """The submitter whose own systems the comparison at the next count is between;
        "" where it crosses submitters or there is none."""
        return self.compared[0] if len(self.compared) == 1 else ""


# What the decomposition of a family reads (the other columns left out: it copies).
READ = (
    "round",
    "benchmark",
    "workload",
    *SYSTEM_COLUMNS[:-1],  # who ran it on how many (its time follows its convergence)
    "global_batch_size",
    "samples_to_converge",
    "samples_to_converge_flag",
    "convergence_unit",
    "time_to_train_min",
    *CI_COLUMNS[:2],
    "outlier",
)


def family_systems(table: pd.DataFrame, family: str) -> pd.DataFrame:
    """``family``'s systems against the family's own reference (the study's rule within
    it, outliers left out: ``metrics.family_reference``), decomposed (E' = throughput
    efficiency x convergence factor) on the basis ``table`` was decomposed on."""
    group = table.loc[table["accelerator_family"] == family, [c for c in READ if c in table]]
    if group.empty:
        return group
    if "outlier" not in group:
        group = group.assign(outlier=outlier_column(group))
    return decompose(within_own_family(group), table_basis(table))


def clean(systems: pd.DataFrame) -> pd.DataFrame:
    """The systems that are no outliers."""
    return systems[systems["outlier"].fillna("").astype(str).to_numpy() == ""]


def clean_frontier(systems: pd.DataFrame) -> pd.DataFrame:
    """The fastest system per count of ``systems`` (:func:`family_systems`) that are no
    outliers; ``systems`` as they are where there are none (no columns to read)."""
    return fastest_per_count(clean(systems)) if len(systems) else systems


def recommend(
    result: WorkloadTable | WorkloadAnalysis,
    own: pd.DataFrame | None = None,
    threshold: float | None = None,
) -> Recommendation:
    """The recommendation of one workload's analysis (see the module docstring);
    ``own``: the family of the most counts' :func:`family_systems`, where already made.
    From the first half of an analysis (a :class:`WorkloadTable`, which a figure is drawn
    from while the second half runs) the family's criteria are computed here, by the
    analysis' own ``equilibrium`` at ``threshold`` (default: the analysis' default)."""
    table = result.table
    family = scaling_family(table)
    if isinstance(result, WorkloadAnalysis):
        threshold = result.equilibrium.threshold
        found = [e for e in result.by_family if e.scope == family]
    else:
        threshold = DEFAULT_EFFICIENCY_THRESHOLD if threshold is None else threshold
        found = equilibrium_by_family(
            table[table["accelerator_family"] == family], threshold=threshold
        )
    # a family without criteria (fewer than two clean systems) picks nothing
    eq = next(iter(found), Equilibrium(result.workload, family, threshold))
    threshold = eq.threshold
    systems = own if own is not None else family_systems(table, family)
    named_outliers = tuple(
        f"{named(r.submitter, r.system_name)}: {r.outlier}"
        for r in systems.itertuples(index=False)
        if r.outlier
    )
    base = Recommendation(
        result.round, result.workload, family, threshold, None, outliers=named_outliers
    )
    pick = eq.efficiency_threshold
    if pick is None:  # one reason for all criteria (one accelerator count) said once
        why = eq.why_none or "; ".join(eq.unpicked.values())
        why = why or _why_no_scaling(table, family, systems)
        return replace(base, why_none=why)
    frontier = fastest_per_count(clean(systems))
    low, high = _count_range(frontier, threshold, pick.accelerators)
    rec = replace(
        base,
        accelerators=pick.accelerators,
        submitter=pick.submitter,
        system_name=pick.system_name,
        time_min=pick.time_to_train_min,
        count_low=low,
        count_high=high,
        fewest_measured=int(systems["accelerators"].min()),
        most_measured=int(systems["accelerators"].max()),
    )
    larger = frontier[frontier["accelerators"] > pick.accelerators]
    beyond = systems[systems["accelerators"] > pick.accelerators]
    stop = next((int(n) for n in larger["accelerators"]), None)
    passed = beyond[beyond["accelerators"] < (stop or np.inf)]
    rec = replace(rec, passed_over=_passed_over(passed))
    if larger.empty:
        return rec
    at, nxt = _pair(clean(systems), pick, stop)
    ratios = {name: _ratio(nxt, at, column) for name, column in FACTORS.items()}
    known = [(np.log(v), name) for name, v in ratios.items() if np.isfinite(v) and v > 0]
    decides = next((name for v, name in sorted(known) if v < 0), "")  # falls most, if any
    best = np.nanmax(_numbers(frontier["normalized_efficiency"]))
    unread = tuple(name for name, v in ratios.items() if not np.isfinite(v))
    if unread:
        rec = replace(rec, unread=unread, **_why_unread((nxt, at), table))
    return replace(
        rec,
        next_accelerators=stop,
        next_e_ratio=_number(larger["normalized_efficiency"].iloc[0]) / best,
        throughput_ratio=ratios["throughput"],
        convergence_ratio=ratios["convergence"],
        decides=decides,
        compared=tuple(dict.fromkeys((str(at["submitter"]), str(nxt["submitter"])))),
        compared_systems=(str(at["system_name"]), str(nxt["system_name"])),
    )


# What a compared system's logs may lack for the factors: its column, in words
_LACKING = {"samples_to_converge": "samples to converge", "global_batch_size": "global batch"}


def _text(value: object) -> str:
    """A text cell: "" where it is missing."""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _why_unread(pair: tuple[pd.Series, pd.Series], table: pd.DataFrame) -> dict[str, object]:
    """Why the factors of the ``pair`` compared (at the next count, at the pick) are
    unread, as :class:`Recommendation`'s ``unread_*`` fields; ``table``: the workload's
    results, whose flagged counts are counted."""
    flag = next((f for f in (_text(r.get("samples_to_converge_flag")) for r in pair) if f), "")
    flags = table.get("samples_to_converge_flag", pd.Series("", index=table.index))
    flagged = int((flags.map(_text) != "").sum())
    lacking = tuple(
        words
        for column, words in _LACKING.items()
        if any(not math.isfinite(_number(r.get(column))) for r in pair)
    )
    expected = [_number(r.get("expected_samples_to_converge")) for r in pair]
    return {
        "unread_flag": flag,
        "flagged_results": (flagged, len(table)) if flag else (0, 0),
        "unread_lacking": lacking,
        "no_expected": not any(math.isfinite(v) for v in expected),
    }


def _why_no_scaling(table: pd.DataFrame, family: str, systems: pd.DataFrame) -> str:
    """Why ``family`` has no scaling to read: no system, one count only, or outliers
    leaving the rest at fewer than two counts (said, with how many they are)."""
    count = int((table["accelerator_family"] == family).sum())
    if not count:
        return f"no {family} system"
    far = systems[systems["outlier"].fillna("").astype(str).to_numpy() != ""]
    if far.empty or systems["accelerators"].nunique() < 2:
        return f"{counted(count, f'{family} system')} only: no scaling to read"
    left = sorted(int(n) for n in clean(systems)["accelerators"].unique())
    rest = f"the rest at {joined(f'{n:,}' for n in left)} only" if left else "none left"
    return (
        f"outliers: {len(far):,} of {counted(count, f'{family} system')} (far from the "
        f"family's others at their count), {rest}: no scaling to read"
    )


def _pair(systems: pd.DataFrame, pick: Pick, stop: int) -> tuple[pd.Series, pd.Series]:
    """(the system at the pick's count, the one at the next count) whose factors are
    compared: one submitter's own fastest at both where a submitter ran both (the
    fastest such at the next count), like with like; else the picked system and the
    fastest at the next count, across submitters."""
    at = systems[systems["accelerators"] == pick.accelerators]
    nxt = systems[systems["accelerators"] == stop].sort_values("time_to_train_min")
    both = nxt[nxt["submitter"].isin(set(at["submitter"]))]
    if len(both):
        later = both.iloc[0]
        mine = at[at["submitter"] == later["submitter"]].sort_values("time_to_train_min")
        return mine.iloc[0], later
    picked = at[(at["org"] == pick.org) & (at["system_id"] == pick.system_id)]
    return (picked.iloc[0] if len(picked) else at.iloc[0]), nxt.iloc[0]


def _passed_over(systems: pd.DataFrame) -> tuple[tuple[int, str, str], ...]:
    """Each count of ``systems`` (above the pick, below the next count decided on) with
    its first outlier's submitter and the outlier that rests on."""
    out = []
    for n, group in systems.groupby("accelerators", sort=True):
        first = group.iloc[0]
        out.append((int(n), str(first["submitter"]), root_reason(str(first["outlier"]))))
    return tuple(out)


# E' = throughput efficiency x convergence factor: each factor and its column
FACTORS = {"throughput": "throughput_efficiency", "convergence": "convergence_factor"}


def _number(value: object) -> float:
    """A cell as a float: NaN where it is missing (NaN, None, pandas' <NA>) or no number."""
    number = pd.to_numeric(value, errors="coerce")
    return math.nan if pd.isna(number) else float(number)


def _numbers(column: pd.Series) -> np.ndarray:
    """A column as floats, NaN where a cell is missing."""
    return pd.to_numeric(column, errors="coerce").to_numpy(float, na_value=np.nan)


def _ratio(nxt: pd.Series, at: pd.Series, column: str) -> float:
    """``column`` at the next count over at the pick; NaN where either is unread."""
    return _number(nxt.get(column)) / _number(at.get(column))


def _count_range(frontier: pd.DataFrame, threshold: float, picked: int) -> tuple[int, int]:
    """(low, high): the largest counts that surely / possibly keep the threshold at the
    95% bounds of their time to train (the pick where a bound is missing)."""
    hours = frontier["time_to_train_min"] * frontier["accelerators"]
    bound = float(hours.min()) / threshold  # T_best N_best / threshold
    n = frontier["accelerators"].to_numpy(float)
    t = frontier["time_to_train_min"].to_numpy(float)
    t_high = frontier["time_to_train_min_ci_high"].to_numpy(float)
    t_low = frontier["time_to_train_min_ci_low"].to_numpy(float)
    t_high = np.where(np.isfinite(t_high), t_high, t)
    t_low = np.where(np.isfinite(t_low), t_low, t)
    sure = n[t_high * n <= bound]
    maybe = n[t_low * n <= bound]
    # the counts are the frontier's, never missing: an empty bound falls back to the fewest
    low = int(sure.max(initial=n.min()))
    return min(low, picked), int(maybe.max(initial=picked))
