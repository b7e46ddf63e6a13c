"""How each workload moved across rounds, per accelerator family.

Rows are (workload, accelerator family, round) for every family with scored systems:
the best time to train at the family's most common accelerator count and at the largest
count submitted, the family-reference E' of that largest system, and the equilibrium
count (largest N keeping E' >= 0.8 x best, as ``analyze``); both empty where the family
has one accelerator count in the round (one system, or peers at one count: E' would be
against itself or a peer, not scaling), the note saying so. Benchmarks renamed between
rounds are joined by workload (``ssd`` -> ``retinanet``, ``gnn`` -> ``rgat``; a folder's
workload is what its round's ruleset says it was, so v1.1's ``ssd`` is ``ssd_resnet34``)
and said so; a workload missing from later loaded rounds is "retired" only where the rules
retired it then (``last_rounds``, from ``gpuscale.mlperf.benchmarks.last_rounds``), "not
scored" where later loaded rounds hold results of it without a score, else "not in the
loaded rounds after" the round; one missing from earlier rounds is new, and
where the first loaded round is not the workload's first round in MLPerf
(``first_rounds``, from ``gpuscale.mlperf.benchmarks.first_rounds``) the note says "first
in the loaded rounds"; where the rulesets of a workload's rounds set other quality
targets (BERT: 0.712 in v0.7, 0.720 from v1.0), the later round's rows say its times do
not compare (:func:`target_moved`). Each result counts once: a result republished in a
later round (same runs, ``gpuscale.tables.republished``) is left out of the later rounds
and the note says how many were (``republished=True`` keeps them).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import pandas as pd

from gpuscale.analysis.critical_batch import round_rcp_model
from gpuscale.analysis.dataset import in_round_order
from gpuscale.analysis.divisions import in_division
from gpuscale.analysis.divisions import left_out as division_left_out
from gpuscale.analysis.equilibrium import equilibrium, scale_note
from gpuscale.analysis.metrics import counted_families, read_filters, workload_scaling_table
from gpuscale.analysis.software import frameworks_differ, frameworks_text, with_framework
from gpuscale.analysis.superlinear import REASONS, sentence
from gpuscale.analysis.trend_words import TimeSplit, change_cause, grouped_notes, target_moved
from gpuscale.mlperf.benchmarks import first_rounds, last_rounds
from gpuscale.names import resolve_workload
from gpuscale.quantities import (
    agreeing,
    counted,
    filled,
    fixed_apart,
    format_minutes,
    joined,
    noun_for,
)
from gpuscale.tables import (
    DEFAULT_EFFICIENCY_THRESHOLD,
    TREND_COLUMNS,
    RoundTables,
    display_name,
    round_key,
)
from gpuscale.tables.checks import check_round_tables, check_text
from gpuscale.tables.republished import is_log_flagged, is_republished, is_same_runs_copy
from gpuscale.tables.views import TREND_DROP_ORDER, TableView
from gpuscale.tables.workloads import rules_round

CALL = "trend_table({round}, ...)"  # how a caller gives another round's scores


@dataclass(frozen=True)
class _Span:
    """The rounds loaded, those in which a workload has scores, and its folders in each."""

    workload: str
    loaded: list[str]
    present: list[str]
    folders: dict[str, list[str]]
    first: str | None  # the workload's first MLPerf round, where known
    last: str | None = None  # its last MLPerf round, where the rules retired it
    listed: tuple[str, ...] = ()  # the rounds holding results of it, scored or not

    def notes(self, round_name: str) -> list[str]:
        """Renamed, new, first in the loaded rounds, retired: what the round is to it, said
        of the benchmark (the row names a family too: "first in the loaded rounds (in MLPerf
        since v0.7)" on an L40 row read as the L40's history)."""
        r, present, notes = round_name, self.present, []
        previous = [p for p in present if round_key(p) < round_key(r)]
        if previous and self.folders[previous[-1]] != self.folders[r]:
            notes.append(f"benchmark renamed from {', '.join(self.folders[previous[-1]])}")
        if previous and (moved := target_moved(self.workload, previous[-1], r)):
            notes.append(moved)
        earlier = self.first is not None and round_key(self.first) < round_key(r)
        if r == present[0] and earlier:
            notes.append(f"benchmark first in the loaded rounds (in MLPerf since {self.first})")
        elif r == present[0] and r != self.loaded[0]:
            notes.append(f"benchmark new in {r}")
        if r == present[-1] and r != self.loaded[-1]:
            notes.append(self._gone_after(r))
        return notes

    def _gone_after(self, r: str) -> str:
        """Why the workload has no scores in the loaded rounds after ``r``: retired by the
        rules right after it, or simply not in the rounds loaded."""
        if self.last == r:
            return f"benchmark retired after {r}"
        if later := [x for x in self.listed if round_key(x) > round_key(r)]:
            # v0.7 and v1.1 loaded: v1.1's BERT and MiniGo results fail today's checks
            return (
                f"benchmark not scored in the loaded rounds after {r} (its results in "
                f"{joined(later)} have no score: `gpuscale scores` gives each reason)"
            )
        note = f"benchmark not in the loaded rounds after {r}"
        if self.last is not None and round_key(self.last) > round_key(r):
            note += f" (in MLPerf until {self.last})"
        return note


def _span(
    scores: pd.DataFrame,
    rounds: list[str],
    workload: str,
    first: str | None,
    last: str | None = None,
) -> _Span:
    """The rounds (of ``rounds``) in which ``workload`` has a score, and its folders."""
    mine = scores[scores["workload"] == workload]
    scored = set(mine.loc[mine["time_to_train_min"].notna(), "round"])
    present = [r for r in rounds if r in scored]
    folders = {r: sorted(mine.loc[mine["round"] == r, "benchmark"].unique()) for r in present}
    listed = tuple(r for r in rounds if r in set(mine["round"]))
    return _Span(workload, rounds, present, folders, first, last, listed)


def _family_group(
    scores: pd.DataFrame, round_name: str, workload: str, family: str
) -> pd.DataFrame:
    """A family's rows of a workload's scaling table in a round (its own reference)."""
    table = workload_scaling_table(
        scores[scores["round"] == round_name], workload, reference="family"
    )
    return table[table["accelerator_family"] == family]


def _pick_changed(row: dict, whole: pd.DataFrame, threshold: float) -> str:
    """Where the republished results left out of a row change its equilibrium pick (the
    round's own ``analyze``, which keeps them, picks from all): ``with them the E' >= 0.8
    x best pick: 8 with them (as analyze gives it), 16 without``; "" where the same."""
    if whole["accelerators"].nunique() < 2:
        return ""
    pick = getattr(
        equilibrium(whole, threshold=threshold).efficiency_threshold, "accelerators", None
    )
    own = row["equilibrium_accelerators"]
    if pick is None or pick == own:
        return ""
    without = "none" if own is None or pd.isna(own) else f"{int(own):,}"
    return (
        f"the republished results left out change the E' >= {threshold:g} x best pick: "
        f"{int(pick):,} with them (as analyze gives it), {without} without"
    )


def _republished_note(count: int, republished: bool) -> str:
    """How many republished results of a row were kept or left out ("" for none)."""
    if not count:
        return ""
    results = f"{count} republished {noun_for(count, 'result')}"
    if republished:
        return f"{results} included"
    return f"left out {results} (counted in the round first showing it)"


def _trend_row(
    span: _Span,
    round_name: str,
    family: str,
    group: pd.DataFrame,
    threshold: float,
) -> tuple[dict, pd.Series]:
    """One trend row of a family's scaling table ``group`` in a round (its note left for
    the caller), and the family's largest system; the fastest system's ``framework`` where
    the scores carried it (``analysis.software.with_framework``), "" where not."""
    common = int(group["accelerators"].value_counts().index[0])
    largest = group.loc[group["accelerators"].idxmax()]
    eq = equilibrium(group, threshold=threshold)

    def best_at(count: float) -> float:
        return float(group.loc[group["accelerators"] == count, "time_to_train_min"].min())

    row = {
        "workload": span.workload,
        "accelerator_family": family,
        "round": round_name,
        "benchmark_folder": ", ".join(span.folders[round_name]),
        "systems": len(group),
        "common_accelerators": common,
        "best_time_at_common_min": best_at(common),
        "largest_accelerators": int(largest["accelerators"]),
        "best_time_at_largest_min": best_at(largest["accelerators"]),
        "normalized_efficiency_at_largest": float(largest["normalized_efficiency"]),
        "equilibrium_accelerators": getattr(eq.efficiency_threshold, "accelerators", None),
        **at_count(group, common),
    }
    if group["accelerators"].nunique() < 2:  # E' against itself or a peer: not scaling
        row |= {"normalized_efficiency_at_largest": None, "equilibrium_accelerators": None}
    return row, largest


def at_count(group: pd.DataFrame, count: int) -> dict[str, object]:
    """The fastest of a family's scaling table ``group`` at ``count``, as a trend row's
    ``*_at_common`` fields: its best time, ORG/SYSTEM_ID, framework, global batch, samples
    to converge (NaN where flagged) and their unit."""
    at = group[group["accelerators"] == count]
    fastest = at.loc[at["time_to_train_min"].idxmin()]
    return {
        "best_time_at_common_min": float(fastest["time_to_train_min"]),
        "system_at_common": f"{fastest['org']}/{fastest['system_id']}",
        "framework_at_common": "" if pd.isna(field := fastest.get("framework")) else str(field),
        "global_batch_at_common": _number(fastest.get("global_batch_size")),
        "samples_to_converge_at_common": _number(
            None
            if _text(fastest.get("samples_to_converge_flag"))
            else fastest.get("samples_to_converge")
        ),
        "convergence_unit_at_common": _text(fastest.get("convergence_unit")),
    }


def _number(value: object) -> float:
    """A field as a float, NaN where it is empty."""
    return float("nan") if value is None or pd.isna(value) else float(value)


def _text(value: object) -> str:
    """A field as text, "" where it is empty."""
    return "" if value is None or pd.isna(value) else str(value)


# The columns the terminal's table leaves out (the note is said under it)
TERMINAL_LEFT_OUT = (
    "note",
    "system_at_common",
    "framework_at_common",
    "global_batch_at_common",
    "samples_to_converge_at_common",
    "convergence_unit_at_common",
    "shared_with_round",
    "shared_accelerators",
    "best_time_at_shared_before_min",
    "best_time_at_shared_min",
)
# A row's note where E' at its largest count is above 1: the reason's short code
# (``analysis.superlinear.REASONS``), its words once under the table (``above_one_words``)
ABOVE_ONE = "E' {value} above 1: {code}"
# trends has no --division: where the other division is shown
TRENDS_HOW = "gpuscale analyze --division {other} shows them"


def trends(
    scores: pd.DataFrame,
    workloads: list[str] | None = None,
    threshold: float = DEFAULT_EFFICIENCY_THRESHOLD,
    *,
    republished: bool = False,
    first_rounds: dict[str, str] | None = None,
    last_rounds: dict[str, str] | None = None,
    division: str | None = "closed",
) -> pd.DataFrame:
    """The trend rows (columns: ``TREND_COLUMNS``), ordered by workload, family, round;
    of ``division`` only (``gpuscale.analysis.divisions``; None or ``all``: both), what
    the others held said in ``attrs["division_left_out"]``; ``framework_at_common``: the
    ``framework`` of each row's fastest system at its common count where ``scores`` carry
    the column (``analysis.software.with_framework``), "" where not."""
    rounds = sorted(scores["round"].unique(), key=round_key)
    asked = workloads or sorted(scores["workload"].dropna().unique())
    pairs = [(r, w) for r in rounds for w in asked]
    other = division_left_out(scores, pairs, division, TRENDS_HOW)
    if "first_round" not in scores.columns:
        scores = scores.assign(first_round=scores["round"], republished_in="")
    kept = in_division(scores, division)
    copies = is_republished(scores) & scores["time_to_train_min"].notna()
    # the republished copies of the other division, left out with it (dataset counts them)
    elsewhere = scores[copies & ~kept & scores["workload"].isin(asked)]
    scores, copies = scores[kept], copies[kept]
    left_out = scores[copies].groupby(["workload", "accelerator_family", "round"]).size()
    everything = scores  # the copies kept: what a round's own analysis picks from
    if not republished:
        scores = scores[~copies]
    first_rounds, last_rounds = first_rounds or {}, last_rounds or {}
    names = workloads or sorted(scores["workload"].unique())
    rows, counts = [], []
    for workload in names:
        span = _span(
            scores, rounds, workload, first_rounds.get(workload), last_rounds.get(workload)
        )
        for r in span.present:
            table = workload_scaling_table(
                scores[scores["round"] == r], workload, reference="family"
            )
            for family, group in table.groupby("accelerator_family"):
                row, largest = _trend_row(span, r, str(family), group, threshold)
                notes = span.notes(r)
                count = int(left_out.get((workload, family, r), 0))
                scale = scale_note(group)
                notes += filter(None, [_republished_note(count, republished), scale])
                if count and not republished:
                    whole = _family_group(everything, r, workload, str(family))
                    notes += filter(None, [_pick_changed(row, whole, threshold)])
                if largest["superlinear"] and not scale:  # E' at the largest above 1, and why
                    # to the digits that show it above 1 (1.004, never 1.00)
                    value = fixed_apart(largest["normalized_efficiency"], 1.0)
                    notes.append(ABOVE_ONE.format(value=value, code=largest["superlinear"]))
                rows.append(row | {"note": "; ".join(notes)})
                keys = {k: row[k] for k in ("workload", "accelerator_family", "round")}
                keys["benchmark_folder"] = row["benchmark_folder"]
                counts += [  # each count's fastest: a change between rounds at one count
                    keys | {"common_accelerators": int(n)} | at_count(group, int(n))
                    for n in sorted(group["accelerators"].unique())
                ]
    out = pd.DataFrame(rows, columns=list(TREND_COLUMNS))
    for count in (
        "systems",
        "common_accelerators",
        "largest_accelerators",
        "global_batch_at_common",
    ):
        out[count] = out[count].astype("Int64")
    # a count, empty where no criterion picked one (it read 32.0 in CSV)
    out["equilibrium_accelerators"] = out["equilibrium_accelerators"].astype("Int64")
    wanted = left_out[left_out.index.get_level_values("workload").isin(names)]
    # How many republished results were left out (0 with republished=True), for a summary.
    out.attrs["republished_left_out"] = 0 if republished else int(wanted.sum())
    out.attrs["division_left_out"] = other
    # the row's *_at_common fields at every count its family ran (common_accelerators: the
    # count), for the headline's change at a count two rounds both ran
    out.attrs["at_counts"] = counts
    out.attrs["division_asked"] = (division, pairs)  # for a view of some families
    # {division: republished results of it left out with it}
    out.attrs["republished_elsewhere"] = elsewhere["division"].astype(str).value_counts().to_dict()
    # both per accelerator family, for a view of some families (``trends_view``)
    out.attrs["republished_by_family"] = (
        {} if republished else wanted.groupby(level="accelerator_family").sum().to_dict()
    )
    out.attrs["elsewhere_by_family"] = {
        str(f): rows["division"].astype(str).value_counts().to_dict()
        for f, rows in elsewhere.groupby("accelerator_family")
    }
    if out.empty:
        return out
    ordered = in_round_order(out, ["workload", "accelerator_family", "round"], rounds)
    ordered.attrs.update(out.attrs)
    return with_shared_counts(ordered)


def republished_notes(left_out: int, elsewhere: dict[str, int] | None) -> tuple[str, ...]:
    """How many republished results the trends counted once (``left_out``) and how many
    more were left out with their division (``elsewhere``: {division: count}), so that
    they add up to the republished results ``gpuscale dataset`` counts of the same rounds
    (which also counts a result first published in a bundled round before them)."""
    elsewhere = elsewhere or {}
    more = sum(elsewhere.values())
    which = (
        joined(f"{k:,} {d}" for d, k in sorted(elsewhere.items()))
        if len(elsewhere) > 1
        else next(iter(elsewhere), "")
    )
    verb = agreeing(more, "is", "are")
    if not left_out and not more:
        return ()
    if not left_out:
        said = f"{counted(more, 'result')} republished in a later round (same runs) {verb} {which} "
        return (said + "division, left out",)
    also = f" ({more:,} more {verb} {which} division, left out)" if more else ""
    return (
        f"{counted(left_out, 'result')} republished in a later round (same runs) "
        f"{agreeing(left_out, 'is', 'are')} counted once, "
        f"in the first round showing them{also}; --republished counts them in every round",
    )


@dataclass(frozen=True, slots=True)
class TrendChange:
    """A change of one workload's best time on one accelerator family at one count between
    two rounds in a row: the accelerators are the same, so what changed is the software
    (and, between two systems, the rest of the system: host, network)."""

    workload: str
    accelerator_family: str
    accelerators: int
    rounds: tuple[str, str]
    times_min: tuple[float, float]  # the best time at the count, earlier and later
    systems: tuple[str, str]  # ORG/SYSTEM_ID of each round's fastest at the count
    frameworks: tuple[str, str]  # their ``framework`` fields ("" where not given)
    # the two systems' global batches, samples to converge (NaN: unknown or flagged) and
    # the unit these count (``convergence_unit``)
    batches: tuple[float, float] = (math.nan, math.nan)
    samples: tuple[float, float] = (math.nan, math.nan)
    units: tuple[str, str] = ("", "")
    # the reference samples to converge at the later batch by each round's rules
    references: tuple[float, float] = (math.nan, math.nan)

    @property
    def ratio(self) -> float:
        """The earlier best time over the later: above 1 faster."""
        return self.times_min[0] / self.times_min[1]

    @property
    def split(self) -> TimeSplit:
        """The change split into samples to converge and throughput (``trend_words``)."""
        return TimeSplit(self.times_min, self.batches, self.samples, self.units, self.references)

    @property
    def same_system(self) -> bool:
        """One submitter system in both rounds: the change is its software alone."""
        return self.systems[0] == self.systems[1]

    @property
    def frameworks_differ(self) -> bool:
        """Whether the two results ran other frameworks (``analysis.software``)."""
        return frameworks_differ(*self.frameworks)


def _comparable(a: dict, b: dict) -> bool:
    """Two rows of one family in rounds in a row compare: rounds of other rules (a folder
    of yours read by a round's rules is that round: beside it, no change in time) and the
    same quality target (another one is not the same training)."""
    if round_key(str(a["round"])) == round_key(str(b["round"])):
        return False
    return not target_moved(str(a["workload"]), str(a["round"]), str(b["round"]))


def _in_a_row(frame: pd.DataFrame) -> list[tuple[dict, dict]]:
    """Each family's rows of a workload in rounds in a row that compare (:func:`_comparable`)."""
    return [
        (a, b)
        for _, group in frame.groupby(["workload", "accelerator_family"], sort=False)
        for a, b in itertools.pairwise(group.to_dict("records"))
        if _comparable(a, b)
    ]


def _largest(pairs: list[tuple[dict, dict]]) -> TrendChange | None:
    """Of pairs of rows (or of records alike: ``at_counts``), the one whose
    ``best_time_at_common_min`` differ the most either way; None where none has a time."""
    best: tuple[float, dict, dict] | None = None
    for a, b in pairs:
        ratio = a["best_time_at_common_min"] / b["best_time_at_common_min"]
        if not (ratio > 0 and math.isfinite(ratio)):
            continue
        if best is None or abs(math.log(ratio)) > abs(math.log(best[0])):
            best = (ratio, a, b)
    if best is None:
        return None
    _, a, b = best

    def both(column: str) -> tuple[str, str]:
        return str(a.get(column) or ""), str(b.get(column) or "")

    return TrendChange(
        workload=str(a["workload"]),
        accelerator_family=str(a["accelerator_family"]),
        accelerators=int(a["common_accelerators"]),
        rounds=(str(a["round"]), str(b["round"])),
        times_min=(float(a["best_time_at_common_min"]), float(b["best_time_at_common_min"])),
        systems=both("system_at_common"),
        frameworks=both("framework_at_common"),
        batches=_pair(a, b, "global_batch_at_common"),
        samples=_pair(a, b, "samples_to_converge_at_common"),
        units=both("convergence_unit_at_common"),
        references=_references(a, b),
    )


def largest_change(frame: pd.DataFrame) -> TrendChange | None:
    """Of two rounds in a row of one workload and family at the same common accelerator
    count and quality target (like with like), the pair whose ``best_time_at_common_min``
    differ the most either way; None where no pair compares. A folder of yours read by a
    round's rules (``my-results (v4.1)``) is that round: beside it, no change in time."""
    pairs = _in_a_row(frame)
    return _largest(
        [(a, b) for a, b in pairs if a["common_accelerators"] == b["common_accelerators"]]
    )


def _at_counts(frame: pd.DataFrame) -> dict[tuple, dict]:
    """``attrs["at_counts"]`` by (workload, family, round, count)."""
    return {
        (r["workload"], r["accelerator_family"], r["round"], r["common_accelerators"]): r
        for r in frame.attrs.get("at_counts", [])
    }


def _both_ran(at: dict[tuple, dict], a: dict, b: dict) -> list[tuple[dict, dict]]:
    """The fastest at each count the family of rows ``a`` and ``b`` ran in both their
    rounds (:func:`_at_counts`), as (earlier, later) pairs."""
    key = (a["workload"], a["accelerator_family"])
    return [
        (earlier, later)
        for (*other, n), earlier in at.items()
        if tuple(other) == (*key, a["round"]) and (later := at.get((*key, b["round"], n)))
    ]


def change_at_a_count(frame: pd.DataFrame) -> TrendChange | None:
    """Where no pair of rows compares at its common count: of the counts a family ran in
    both of two rounds in a row (``attrs["at_counts"]``), the largest change of the best
    time at one; None where no family ran one count in both."""
    at = _at_counts(frame)
    return _largest([pair for a, b in _in_a_row(frame) for pair in _both_ran(at, a, b)])


def with_shared_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its ``shared_*`` columns filled: on each row whose family's most
    common count moved since its row before (:func:`unpaired`), the largest change of the
    best time at a count both rounds ran (:func:`_largest`): the count, the round before
    and the two best times, so the headline's :func:`change_at_a_count` is in the rows."""
    at, found = _at_counts(frame), {}
    for a, b in _in_a_row(frame):
        if a["common_accelerators"] != b["common_accelerators"]:
            change = _largest(_both_ran(at, a, b))
            found[(b["workload"], b["accelerator_family"], b["round"])] = change
    keys = zip(frame["workload"], frame["accelerator_family"], frame["round"], strict=True)
    changes = [found.get(k) for k in keys]
    out = frame.assign(
        shared_with_round=[c.rounds[0] if c else None for c in changes],
        shared_accelerators=pd.array([c.accelerators if c else None for c in changes], "Int64"),
        best_time_at_shared_before_min=[c.times_min[0] if c else math.nan for c in changes],
        best_time_at_shared_min=[c.times_min[1] if c else math.nan for c in changes],
    )
    out.attrs.update(frame.attrs)
    return out


def unpaired(frame: pd.DataFrame) -> list[tuple[str, int, str, int, str]]:
    """``(family, count, round, count, round)`` of each family's rows in rounds in a row
    that compare but whose most common counts differ: why no change is at a common count."""
    return [
        (
            str(a["accelerator_family"]),
            int(a["common_accelerators"]),
            str(a["round"]),
            int(b["common_accelerators"]),
            str(b["round"]),
        )
        for a, b in _in_a_row(frame)
        if a["common_accelerators"] != b["common_accelerators"]
    ]


def _references(a: dict, b: dict) -> tuple[float, float]:
    """What the reference runs need to converge at ``b``'s global batch by ``a``'s round's
    rules and by ``b``'s (``round_rcp_model``); NaN where a round has no RCPs for it."""
    batch = _number(b.get("global_batch_at_common"))
    out = []
    for row in (a, b):
        model = round_rcp_model(str(row["round"]), str(row["benchmark_folder"]))
        out.append(model.samples(batch) if model is not None and batch > 0 else math.nan)
    return out[0], out[1]


def _pair(a: dict, b: dict, column: str) -> tuple[float, float]:
    """Two rows' ``column`` as floats, NaN where empty or absent."""
    return _number(a.get(column)), _number(b.get(column))


def trends_headline(frame: pd.DataFrame) -> tuple[str, ...]:
    """The largest change of the trend rows (:func:`largest_change`), said first with
    what it rests on: the same accelerators, so software (one system: software alone),
    the frameworks named where they differ; where no pair of rows compares at its common
    count, why (each family's common counts in its two rounds, or no family in two rounds
    in a row with the same quality target), and the largest change at a count a family ran
    in both (:func:`change_at_a_count`), or that none was run in both."""
    change = largest_change(frame)
    # no pair of rounds to look at (a folder of yours read by a round's rules is that round)
    rules = frame["round"].astype(str).map(rules_round).unique()
    if change is None and len(rules) < 2:
        return (
            f"largest change: none to state (every row is of one round, {rules[0]}: a change "
            "is between two rounds)",
        )
    if change is not None:
        return (f"largest change: {_change_words(change)}",)
    apart = unpaired(frame)
    why = (
        "no family is in two rounds in a row of the same quality target"
        if not apart
        else "the most common count moved: "
        + "; ".join(
            [f"{f} {a:,} in {r} -> {b:,} in {q}" for f, a, r, b, q in apart[:3]]
            + ([counted(len(apart) - 3, "other family")] if len(apart) > 3 else [])
        )
    )
    near = change_at_a_count(frame)
    return (
        f"largest change at a family's most common count: none ({why}); "
        + (
            f"at a count a family ran in both rounds: {_change_words(near)}"
            if near is not None
            else "no family ran one count in both of two rounds in a row"
        ),
    )


def _change_words(change: TrendChange) -> str:
    """``BERT on H100-SXM5-80GB at 64 accelerators, best time 0.8981 min (v3.0) -> 0.8869
    min (v5.0), 1.01x faster: <its cause>; <the frameworks where they differ>``."""
    ratio = change.ratio
    how = f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"
    (early, late), (t_early, t_late) = change.rounds, change.times_min
    software = (
        f"software (the same system, {change.systems[0]})"
        if change.same_system
        else "software or host (the same accelerators)"
    )
    cause = change_cause(change.split, software)
    return (
        f"{display_name(change.workload)} on {change.accelerator_family} at "
        f"{change.accelerators:,} accelerators, best time {format_minutes(t_early)} ({early}) -> "
        f"{format_minutes(t_late)} ({late}), {how}: {cause}"
        + filled("; {}", frameworks_text(*change.frameworks))
    )


# Why a result of the workloads and families shown is in no trend row, each checked in
# this order (a result counted under the first that holds): what --explain says of each.
LEFT_OUT_WHY = {
    "other division": "of another division than closed (trends reads the closed division)",
    "unscored": "with no official score (`gpuscale scores` gives each reason)",
    "no count": "with no accelerator count",
    "flagged": "whose own logs contradict their folder (log_flag)",
    "same runs": "the same runs as another system name of their round (same_runs_as): counted once",
    "republished": "republished in a later round (same runs): counted in the first round "
    "showing them (--republished: in every round)",
}


def left_out_counts(
    scores: pd.DataFrame,
    workloads: list[str] | None,
    families: list[str] | None,
    *,
    republished: bool,
) -> dict[str, int]:
    """How many results of ``workloads`` (all where None) and ``families`` (as chosen; all
    where None) in ``scores`` no trend row holds, by the first reason of
    :data:`LEFT_OUT_WHY` that holds for each (as :func:`trends` and ``scored_systems``
    leave them out); the reasons with none left out are absent."""
    mine = scores[scores["workload"].isin(workloads or scores["workload"].dropna().unique())]
    if families is not None:
        mine = mine[mine["accelerator_family"].isin(families)]
    copies = is_republished(mine) if "first_round" in mine.columns else False
    checks = {
        "other division": ~in_division(mine, "closed"),
        "unscored": mine["time_to_train_min"].isna(),
        "no count": ~(mine["accelerators"].fillna(0) > 0),
        "flagged": is_log_flagged(mine),
        "same runs": is_same_runs_copy(mine),
        "republished": copies & (not republished),
    }
    counts, left = {}, pd.Series(True, index=mine.index)
    for why, holds in checks.items():
        counts[why], left = int((left & holds).sum()), left & ~holds
    return {why: n for why, n in counts.items() if n}


def explained_lines(counts: dict[str, int], threshold: float) -> tuple[str, ...]:
    """``trends --explain``: how each column is made, then how many results no row holds
    and why (:func:`left_out_counts`), or that none is left out."""
    made = (
        "how each row's columns are made (a row: a workload's accelerator family in a round):",
        "  common accelerators: the count the family's scored systems ran most often; best "
        "time at common min: the least official time to train there (olympic average of the "
        "runs)",
        "  largest accelerators, best time at largest min: the largest count submitted, and "
        "its least time",
        "  normalized efficiency at largest: E' of that system against the family's own "
        "reference (its fewest accelerators, the slowest there, outliers aside)",
        f"  equilibrium accelerators: the largest count keeping E' >= {threshold:g} x the "
        "family's best E'; both empty where the family ran one count",
        "  the first line: of two rounds in a row at one count, the largest change of the "
        "best time; -f csv and -f json hold each row's numbers",
    )
    if not counts:
        return (*made, "results left out: none")
    return (
        *made,
        f"results left out ({counted(sum(counts.values()), 'result')}, each under the "
        "first reason that holds):",
        *(f"  {counted(n, 'result')} {LEFT_OUT_WHY[why]}" for why, n in counts.items()),
    )


def trends_view(
    scores: pd.DataFrame,
    workloads: list[str] | None,
    families: list[str] | None,
    *,
    republished: bool,
    first_rounds: dict[str, str],
    last_rounds: dict[str, str],
) -> TableView:
    """``gpuscale trends``: the trend rows of ``workloads`` and ``families`` (as typed;
    all where None), the republished results left out said in a note; each row's
    framework (the headline's software) where ``scores`` carry it (:func:`trends`)."""
    frame = trends(
        scores,
        workloads,
        republished=republished,
        first_rounds=first_rounds,
        last_rounds=last_rounds,
    )
    left_out, elsewhere = (
        frame.attrs.get("republished_left_out", 0),
        frame.attrs.get("republished_elsewhere"),
    )
    chosen, read_as = counted_families(scores, families) if families else (None, ())
    if chosen is not None:  # the republished results of the families shown, not of all
        left_out = sum(frame.attrs.get("republished_by_family", {}).get(f, 0) for f in chosen)
        by_family = frame.attrs.get("elsewhere_by_family", {})
        elsewhere = {}
        for f in chosen:
            for division, count in by_family.get(f, {}).items():
                elsewhere[division] = elsewhere.get(division, 0) + count
    other = frame.attrs.get("division_left_out", [])
    if chosen is not None and "division_asked" in frame.attrs:  # the families' results only
        mine = scores[scores["accelerator_family"].isin(chosen)]
        other = division_left_out(mine, *frame.attrs["division_asked"][::-1], TRENDS_HOW)
    notes = (*republished_notes(int(left_out), elsewhere), *other)
    if frame["round"].nunique() == 1:  # a trend of one round is no trend: say so
        loaded = scores["round"].nunique()  # more where the others lack these workloads
        which = (
            "one round loaded"
            if loaded == 1
            else f"one of the {loaded} rounds loaded holds these benchmarks"
        )
        notes = (
            f"{which} ({frame['round'].iloc[0]}): a trend compares rounds; give "
            "several (--round v4.0,v4.1,v5.0, or none for every bundled round)",
            *notes,
        )
    unfiltered = len(frame)
    if chosen is not None:  # read as every command reads a family (H100 is H100-SXM5-80GB)
        frame, notes = frame[frame["accelerator_family"].isin(chosen)], (*read_as, *notes)
    empty, headline = "", ()
    if not frame.empty:
        headline = trends_headline(frame)
    elif not unfiltered and other:
        # the command ends with this alone: what the other division held is said in it
        empty = "no closed-division scored results for these options: " + "; ".join(other)
    else:
        empty = "no scored results for these options"
    return TableView(
        frame,
        # the note said under the table, each once; the system and framework at the
        # common count in CSV and JSON (the headline says them where they matter)
        [c for c in TREND_COLUMNS if c not in TERMINAL_LEFT_OUT],
        "trends across rounds",
        TREND_DROP_ORDER,
        notes=notes,
        said=(*row_notes(frame), *above_one_words(frame)),
        empty=empty,
        headline=headline,
        said_of="note",
        explained=explained_lines(
            left_out_counts(scores, workloads, chosen, republished=republished),
            DEFAULT_EFFICIENCY_THRESHOLD,
        ),
    )


def rounds_trends_view(
    tables: RoundTables,
    workloads: list[str] | None,
    families: list[str] | None,
    *,
    republished: bool,
) -> TableView:
    """``gpuscale trends`` of the rounds in ``tables``: :func:`trends_view` of their scores,
    each result's framework beside it, a workload's first and last rounds the installed
    rules' (mlperf-logging), as :func:`trend_table` reads them."""
    return trends_view(
        with_framework(tables.scores, tables.systems),
        workloads,
        families,
        republished=republished,
        first_rounds=first_rounds(),
        last_rounds=last_rounds(),
    )


def above_one_words(frame: pd.DataFrame) -> tuple[str, ...]:
    """What each reason the rows' notes give for an E' above 1 means, once each (``above
    peers too``: the systems differ in more than the count), as ``analyze`` says it; a
    note's short code alone read as a finding of super-linear scaling."""
    notes = " ".join(frame["note"].astype(str))
    return tuple(
        f"E' above 1, {code}: {sentence(code)}"
        for code in REASONS
        if ABOVE_ONE.split("{value}")[1].format(code=code) in notes  # " above 1: <code>"
    )


def row_notes(frame: pd.DataFrame) -> tuple[str, ...]:
    """The trend rows' notes under the terminal's table, not in a column of it (a note
    folded into a narrow cell ran 3 to 9 lines a row): each clause once per workload, with
    the family and round of the rows it is about (``trend_words.grouped_notes``); CSV and
    JSON keep each row's ``note``."""
    return tuple(
        f"{display_name(str(workload))}: {clause}"
        for workload, rows in frame.groupby("workload", sort=False)
        for clause in grouped_notes(rows)
    )


def trend_table(
    tables: RoundTables,
    benchmark: str | None = None,
    *,
    division: str | None = "closed",
    republished: bool = False,
) -> pd.DataFrame:
    """``gpuscale trends`` as a table (:func:`trends`: columns ``TREND_COLUMNS``) of the
    rounds in ``tables`` (read together: ``load_round("v4.0", "v4.1")``) for one
    benchmark's workload, every workload's where ``benchmark`` is None; ``benchmark`` is
    read as ``--benchmark`` reads it (``BERT``, ``dlrm``), against the workloads of
    ``tables`` (:class:`~gpuscale.names.UnknownNameError`, a ValueError, for none of
    them); a workload's first and last rounds are the installed rules' (mlperf-logging)."""
    check_round_tables(tables)
    check_text(benchmark, "benchmark", optional=True)
    check_text(division, "division", optional=True)
    if not isinstance(republished, bool):
        raise TypeError(f"republished must be True or False, not {republished!r:.60}")
    scores = tables.scores
    division, _, _ = read_filters(scores, division, None)
    asked = None if benchmark is None else [resolve_workload(benchmark, scores, call=CALL)]
    return trends(
        with_framework(scores, tables.systems),
        asked,
        republished=republished,
        first_rounds=first_rounds(),
        last_rounds=last_rounds(),
        division=division,
    )
