"""The equilibrium point between training time and per-accelerator efficiency, made precise.

The study spoke of a configuration that "balances training time against per-GPU
efficiency". gpuscale reports four criteria side by side on a scaling table:

(a) **Pareto front** of time to train vs accelerator-hours: systems no other system beats
    on both (lower or equal on both, lower on one).
(b) **Knee** of time to train vs accelerators (Kneedle, Satopää et al. 2011, as the
    ``kneed`` package computes it: ``gpuscale.criteria``) on log10 axes, over the
    fastest system at each accelerator count: the point after which adding accelerators
    buys markedly less.
(c) **Speed x efficiency**: the system maximising ``S * E`` (= S^2 / N).
(d) **Efficiency threshold**: the largest accelerator count whose fastest system keeps
    ``E' >= threshold * max(E')`` (default threshold 0.8).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from gpuscale import criteria
from gpuscale.analysis.crossing import pick_crossing
from gpuscale.analysis.frontier import fastest_per_count
from gpuscale.analysis.metrics import within_own_family
from gpuscale.analysis.outliers import outlier_column
from gpuscale.analysis.pick import Pick
from gpuscale.names import UnknownNameError, resolve_family
from gpuscale.quantities import agreeing, joined
from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD, Criterion
from gpuscale.tables.checks import check_table, check_text
from gpuscale.tables.result_repr import result_repr

# Why nothing is picked on an empty table (its repr names no benchmark: there is none)
NO_SYSTEM = "the table has no system"
# the threshold is a share of the best E': without any E' there is no floor to keep
NO_E_PRIME = "no system has an E' (normalized_efficiency is missing in every row)"
# the criteria that pick one system each (the Pareto front is a set)
_CRITERIA = (Criterion.KNEE, Criterion.SPEED_X_EFFICIENCY, Criterion.EFFICIENCY_THRESHOLD)
# each criterion's id: the field of its pick here and the key of its pick, and of why it
# picked nothing, in the JSON (its label moves with the threshold: ``E' >= 0.8 x best``)
CRITERION_IDS = {
    Criterion.KNEE: "knee",
    Criterion.SPEED_X_EFFICIENCY: "max_speed_x_efficiency",
    Criterion.EFFICIENCY_THRESHOLD: "efficiency_threshold",
}
_IDS = tuple(CRITERION_IDS[c] for c in _CRITERIA)
_BY_ID = {i: c for c, i in CRITERION_IDS.items()}
EQUILIBRIUM_FIELDS = (
    ".knee",
    ".max_speed_x_efficiency",
    ".efficiency_threshold",
    ".pareto",
    ".unpicked",
)


@dataclass(frozen=True, slots=True)
class Equilibrium:
    """The four criteria's picks for one benchmark (``scope``: ``all`` or a family)."""

    benchmark: str
    scope: str
    threshold: float
    pareto: list[str] = field(default_factory=list)
    knee: Pick | None = None
    max_speed_x_efficiency: Pick | None = None
    efficiency_threshold: Pick | None = None
    # why a criterion picked nothing (None above), by its id (``CRITERION_IDS``: the
    # field of its pick, whatever the threshold; its label: ``label_of``); empty when all
    # picked
    unpicked: dict[str, str] = field(default_factory=dict)
    # the ``org/system_id`` the picks' E' is against; "" where the table has several
    reference: str = ""
    # how a ``scope`` typed was read (``H100`` as H100-SXM5-80GB, and what else it could
    # mean), as ``scaling_table(families=...)`` keeps its notes
    notes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        """Each criterion's pick in a line (one that picked none: why, in ``.unpicked``);
        of an empty table, that it has no system (no benchmark to name)."""
        if not self.benchmark:
            return result_repr(
                f"Equilibrium (empty table, {self.scope})",
                [f"no criterion picks: {NO_SYSTEM}"],
                EQUILIBRIUM_FIELDS,
            )
        return result_repr(
            f"Equilibrium ({self.benchmark}, {self.scope})",
            [*(p.line for p in self.picks), *(f"{label}: none" for label in self.unpicked_labels)],
            EQUILIBRIUM_FIELDS,
        )

    @property
    def picks(self) -> list[Pick]:
        return [
            p
            for p in (self.knee, self.max_speed_x_efficiency, self.efficiency_threshold)
            if p is not None
        ]

    def label_of(self, criterion_id: str) -> str:
        """How people read a criterion of ``unpicked`` (its id, :data:`CRITERION_IDS`):
        ``E' >= 0.8 x best`` for ``efficiency_threshold`` at this threshold."""
        return _BY_ID[criterion_id].label(self.threshold)

    @property
    def unpicked_labels(self) -> list[str]:
        """The labels of the criteria that picked nothing, in ``unpicked``'s order."""
        return [self.label_of(c) for c in self.unpicked]

    @property
    def why_none(self) -> str:
        """Why no criterion picks, where one reason holds for all (one system, one
        accelerator count, no system); "" where any picks or the reasons differ."""
        reasons = set(self.unpicked.values())
        if self.picks or len(self.unpicked) < len(_CRITERIA) or len(reasons) != 1:
            return ""
        return reasons.pop()

    @property
    def agreement(self) -> str:
        """Which criteria pick the same system or accelerator count, in words."""
        picks = self.picks
        if not picks:
            return "no criterion could pick a system"
        by_n: dict[int, list[str]] = {}
        for p in picks:
            by_n.setdefault(p.accelerators, []).append(p.label)
        parts = [
            f"{joined(names)} {agreeing(len(names), 'picks', 'pick')} {n:,} accelerators"
            for n, names in sorted(by_n.items())
        ]
        on_front = [p for p in picks if p.key in self.pareto]
        text = "; ".join(parts)
        if len(by_n) == 1 and len(picks) > 1:
            every = "all criteria" if not self.unpicked else f"the {len(picks)} criteria that pick"
            text = f"{every} agree on {picks[0].accelerators:,} accelerators"
            if self.unpicked:  # one that picked none never counted as agreeing
                none = agreeing(len(self.unpicked), "picks", "pick")
                text += f"; {joined(self.unpicked_labels)} {none} none"
        return text + f" ({len(on_front)} of {len(picks)} picks on the Pareto front)"


def _pick(criterion: Criterion, row: pd.Series, threshold: float, table: pd.DataFrame) -> Pick:
    """The pick of ``row`` by ``criterion`` over ``table``, with its caution where it
    compares hardware rather than scaling (a Python user saw a knee where the hardware
    changes with none: the CLI's caution was said only in its sentences)."""
    pick = Pick(
        criterion=criterion,
        label=criterion.label(threshold),
        org=str(row["org"]),
        submitter=str(row["submitter"]),
        system_id=str(row["system_id"]),
        system_name=str(row["system_name"]),
        accelerator_family=str(row["accelerator_family"]),
        accelerators=int(row["accelerators"]),
        time_to_train_min=float(row["time_to_train_min"]),
        normalized_efficiency=float(row["normalized_efficiency"]),
    )
    return replace(pick, caution=pick_crossing(pick, table))


def pareto_mask(time_min: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """True where no other point is <= on both and < on one (minimising both)."""
    return np.array(criteria.pareto_mask(list(map(float, time_min)), list(map(float, cost))))


def knee_pick(table: pd.DataFrame) -> pd.Series | None:
    """Kneedle's knee of log10(T) against log10(N) over the fastest system per N."""
    frontier = fastest_per_count(table)
    if len(frontier) < 3:
        return None
    x = np.log10(frontier["accelerators"].to_numpy(float))
    y = np.log10(frontier["time_to_train_min"].to_numpy(float))
    knee = criteria.kneedle(x.tolist(), y.tolist())
    if knee is None:
        return None
    return frontier.iloc[knee]


def _read_scope(table: pd.DataFrame, scope: object) -> tuple[str, list[str]]:
    """``scope``: ``all`` (any case) or an accelerator family of ``table`` (the one
    ``table`` was cut to; any name where it has no row), read as ``families=`` is
    (:func:`~gpuscale.names.resolve_family`: ``H100`` is H100-SXM5-80GB, said in the
    notes returned with it), else TypeError or ValueError naming them. A family given of
    a table holding others too is refused: the picks are read over every row, so they
    would be other families' systems labelled as this one's."""
    check_text(scope, "scope", like="('all' or a family)")
    families = set(table["accelerator_family"].dropna().astype(str))
    scope = "all" if scope.strip().casefold() == "all" else scope
    notes: list[str] = []
    if families and scope != "all":
        try:
            scope, said = resolve_family(scope, sorted(families))
        except UnknownNameError as error:  # it names the table's families (valid)
            raise ValueError(f"scope must be 'all' or a family of the table; {error}") from None
        notes = [said] if said else []
    if scope != "all" and len(families) > 1:
        raise ValueError(
            f"scope {scope!r} is one family, but the table holds {len(families)}: cut it to "
            f"{scope} first (scaling_table(scores, ..., families={scope!r}, "
            "reference='family')), or give scope='all'"
        )
    return scope, notes


def equilibrium(
    table: pd.DataFrame, *, threshold: float = DEFAULT_EFFICIENCY_THRESHOLD, scope: str = "all"
) -> Equilibrium:
    """The four criteria on one benchmark's scaling table (see the module docstring):
    ``table`` is ``scaling_table``'s output (checked: ``gpuscale.tables.checks``). A
    table of one system or of one accelerator count has no E' that measures scaling
    (against itself or a peer at its count): only its Pareto front, no reference, each
    criterion's ``unpicked`` saying why (``scale_note``, as ``trends`` says it)."""
    check_table(table, "scaling", "table")
    _check_threshold(threshold)
    _check_one_workload(table)
    scope, notes = _read_scope(table, scope)
    return replace(_criteria(table, threshold, scope, scale_note(table)), notes=notes)


def _check_one_workload(table: pd.DataFrame) -> None:
    """ValueError where ``table`` holds several workloads or rounds (tables concatenated,
    or a scaling table of several rounds' scores): the criteria would pick across them,
    labelled as one workload's, comparing systems of different rules and software."""
    for column, kind in (("workload", "workloads"), ("round", "rounds")):
        if column not in table.columns:
            continue
        held = sorted(set(table[column].dropna().astype(str)))
        if len(held) > 1:
            raise ValueError(
                f"table holds {len(held)} {kind} ({joined(held)}); the criteria read one "
                f"workload's systems of one round: pass each alone (table[table[{column!r}] "
                f"== {held[0]!r}])"
            )


def _check_threshold(threshold: object) -> None:
    # numbers.Real: numpy's floats too (a threshold read from a table)
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise TypeError(f"threshold must be a number, not {type(threshold).__name__}")
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")


def _criteria(table: pd.DataFrame, threshold: float, scope: str, no_scaling: str) -> Equilibrium:
    """:func:`equilibrium` of a checked ``table``; ``no_scaling``: why its systems as
    measured have no E' that measures scaling (``scale_note``), "" where they have."""
    # only the columns read here: every sort and filter below copies each column kept
    table = table[[c for c in table.columns if c in _READ]]
    if table.empty:  # nothing picked, each criterion said as such (never an empty why)
        why = dict.fromkeys(_IDS, NO_SYSTEM)
        return Equilibrium(benchmark="", scope=scope, threshold=threshold, unpicked=why)
    benchmark = str(table["workload"].iloc[0])
    on_front = pareto_mask(
        table["time_to_train_min"].to_numpy(), table["accelerator_hours"].to_numpy()
    )
    pareto = [
        f"{o}/{i}"  # the org folder: system ids repeat across submitter folders
        for o, i in zip(table["org"][on_front], table["system_id"][on_front], strict=True)
    ]
    if no_scaling:  # E' against itself or a peer at its count: no scaling
        why = dict.fromkeys(_IDS, no_scaling)
        return Equilibrium(benchmark, scope, threshold, pareto=pareto, unpicked=why)
    knee_row = knee_pick(table)
    knee, unpicked = None, {}
    if knee_row is None:
        unpicked[CRITERION_IDS[Criterion.KNEE]] = _no_knee(table)
    else:
        knee = _pick(Criterion.KNEE, knee_row, threshold, table)
    by_time = Equilibrium(
        benchmark=benchmark,
        scope=scope,
        threshold=threshold,
        pareto=pareto,
        knee=knee,
        unpicked=unpicked,
        reference=_reference_of(table),
    )
    by_e = (Criterion.SPEED_X_EFFICIENCY, Criterion.EFFICIENCY_THRESHOLD)
    if _several_references(table):
        # per-family references: E' (and S, E) of different references are not comparable,
        # so only the knee (T against N) is picked across them
        why = {CRITERION_IDS[c]: SEVERAL_REFERENCES for c in by_e}
        return replace(by_time, unpicked={**unpicked, **why})
    score = table["speedup"] * table["efficiency"]
    best = table.loc[score.idxmax()]
    frontier = fastest_per_count(table)
    floor = threshold * table["normalized_efficiency"].max()
    good = frontier[frontier["normalized_efficiency"] >= floor]
    kept = None
    if good.empty:
        why_none = (
            NO_E_PRIME if pd.isna(floor) else f"no count's fastest system keeps E' >= {floor:.3g}"
        )
        unpicked = {**unpicked, CRITERION_IDS[by_e[1]]: why_none}
    else:
        kept = _pick(Criterion.EFFICIENCY_THRESHOLD, good.iloc[-1], threshold, table)
    return replace(
        by_time,
        max_speed_x_efficiency=_pick(Criterion.SPEED_X_EFFICIENCY, best, threshold, table),
        efficiency_threshold=kept,
        unpicked=unpicked,
    )


_READ = {
    *Pick.__dataclass_fields__,
    "workload",
    "accelerator_hours",
    "speedup",
    "efficiency",
    "reference_org",
    "reference_system_id",
    "reference_accelerators",  # what tells an E' above 1 that is no scaling (crossing)
    "superlinear",
}
# Why speed x efficiency and the E' threshold pick nothing over systems of several references.
SEVERAL_REFERENCES = (
    "the systems' speedups and E' are against several references (one per accelerator "
    "family), which are not comparable: this criterion picks within each family "
    "(equilibrium_by_family), not across them"
)


def _no_knee(table: pd.DataFrame) -> str:
    counts = table["accelerators"].nunique()
    if counts < 3:
        return f"a knee needs 3 or more accelerator counts; the table has {counts}"
    return "time to train against accelerators has no knee (Kneedle found none)"


def _reference_of(table: pd.DataFrame) -> str:
    """The ``org/system_id`` the table's S, E and E' are against; "" where several."""
    if _several_references(table) or "reference_org" not in table:
        return ""
    return f"{table['reference_org'].iloc[0]}/{table['reference_system_id'].iloc[0]}"


def _several_references(table: pd.DataFrame) -> bool:
    """Whether the table's S, E and E' are against more than one reference system."""
    columns = ["reference_org", "reference_system_id"]
    if not set(columns) <= set(table.columns):
        return False
    return len(table[columns].drop_duplicates()) > 1


def scale_note(group: pd.DataFrame) -> str:
    """Why the systems ``group`` (a family's, or a whole table's) have no E' that
    measures scaling, nor equilibrium: one system, or one accelerator count (E' against
    itself or a peer at the same count); "" otherwise."""
    if len(group) == 1:
        return "one system: no E'"
    if group["accelerators"].nunique() == 1:
        return f"one accelerator count ({int(group['accelerators'].iloc[0]):,}): no E'"
    return ""


def equilibrium_by_family(
    table: pd.DataFrame, *, threshold: float = DEFAULT_EFFICIENCY_THRESHOLD
) -> list[Equilibrium]:
    """The criteria within each accelerator family that has at least two systems that
    are no outliers (``gpuscale.analysis.outliers``: like with like includes the
    software, so a system far from its family's others at its count picks nothing), each
    family against its own reference (``metrics.within_own_family``): a pick's E' and
    caution are those within its family, as the study's findings and ``--reference
    family`` say them, whatever reference ``table`` was computed against. A family
    measured at one accelerator count picks nothing (``scale_note``, as ``trends`` reads
    its systems: outliers too; one whose outliers alone ran other counts picks among the
    rest, the outliers said beyond the pick)."""
    check_table(table, "scaling", "table")
    _check_threshold(threshold)
    _check_one_workload(table)
    clean = outlier_column(table).to_numpy() == ""
    out = []
    for family, rows in table.groupby("accelerator_family", sort=True).indices.items():
        measured = within_own_family(table.iloc[rows])
        own = measured[clean[rows]]
        if len(own) >= 2:
            out.append(_criteria(own, threshold, str(family), scale_note(measured)))
    return out


def families_alone(table: pd.DataFrame) -> list[str]:
    """The accelerator families of ``table`` with fewer than two systems that are no
    outliers: :func:`equilibrium_by_family` has none of them (no peer to compare)."""
    clean = table[outlier_column(table).to_numpy() == ""]
    held = clean.groupby("accelerator_family").size()
    every = table["accelerator_family"].dropna().astype(str).unique()
    return sorted(f for f in every if held.get(f, 0) < 2)
