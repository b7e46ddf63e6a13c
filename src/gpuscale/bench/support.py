"""What a figure read from bench runs rests on (:class:`Support`): how many runs, the
fewest steps any of them timed, and the kinds of weak evidence among them
(``bench.evidence``: few steps timed, steps spread, busy share not measured).

A figure read from weak runs (a communication scale, a break-even, a family's sizes, a
step interval) is said with what it rests on and what to bench instead, never as a
finding: with 2 timed steps a run, one slow step moves its mean by half."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Protocol

import pandas as pd

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.evidence import (
    FIRM_STEPS,
    FLAGGED,
    LABEL,
    STEPS_FIX,
    Weakness,
    fixes,
    labels,
    remedy,
    steps_asked,
)
from gpuscale.quantities import counted, filled, joined
from gpuscale.tables.refusals import field_named


class HasResiduals(Protocol):
    """A step error's residuals (``advice.model.priors.StepError``): what the interval was
    read from."""

    @property
    def residuals(self) -> tuple[float, ...]: ...


# The kind of weakness (bench.evidence) a figure cannot stand on.
FEW_STEPS = LABEL[Weakness.FEW_STEPS]


@dataclass(frozen=True, slots=True)
class Support:
    """``runs`` bench runs, the fewest timed steps among them (``steps``, None where not
    recorded), the kinds of weak evidence among them, and the steps a run would need for
    firm evidence (``steps_needed``: ``bench.evidence.steps_needed`` of its model's runs,
    the number the bench's own notes ask for), and what would make its weak runs firm
    (``fixes``: ``bench.evidence.fixes`` of their notes)."""

    runs: int
    steps: int | None
    kinds: tuple[str, ...] = ()
    steps_needed: int = FIRM_STEPS
    fixes: tuple[str, ...] = (STEPS_FIX,)
    steps_basis: str = ""  # why that many (``bench.evidence.steps_asked``)
    model: str | None = None  # the one model of the runs, where they are of one
    counts: tuple[int, ...] = ()  # the device counts its model's runs measured
    most_steps: int | None = None  # the most steps any of its model's runs timed
    flagged: int = 0  # its model's ok runs flagged (left out of what reads them)
    untrusted: int = 0  # of ``runs``, those graded flagged (read with --allow-flagged)
    flag_kinds: tuple[str, ...] = ()  # the kinds of their flags (``plausibility.FlagKind``)
    run: str = ""  # bench options of the advised run's configuration (and --out FILE)
    # the devices per node of its model's runs across nodes (None: each ran on one node),
    # else of the nodes the question names: a count beyond one node is benched across them
    per_node: int | None = None

    @property
    def kept_steps(self) -> str:
        """``--steps N`` where its model's runs timed more steps than the bench's default
        (``BenchConfig.steps``): a rerun at the default would time fewer steps, weaker
        evidence than the runs it is to replace; "" otherwise."""
        default = next(f.default for f in fields(BenchConfig) if f.name == "steps")
        most = self.most_steps or 0
        return f"--steps {most}" if isinstance(default, int) and most > default else ""

    @property
    def all_flagged(self) -> bool:
        """Every run graded flagged (read with --allow-flagged): none trusted, so like weak
        runs, a measurement to repeat, never a cause to act on."""
        return self.runs > 0 and self.untrusted == self.runs

    @property
    def weak(self) -> bool:
        """Too weak to read a figure from as a finding: few steps timed (one slow step
        moves a mean by 1/steps). A spread or an unmeasured busy share alone is said in
        the advice's weak-evidence warning, and the figures stand."""
        return FEW_STEPS in self.kinds

    def rests_on(self) -> str:
        """``2 timed steps per run (3 runs; weak evidence: few steps timed and steps
        spread)``."""
        steps = ""
        if self.steps is not None:
            steps = f"{counted(self.steps, 'timed step')} per run "
        weakness = filled("weak evidence: {}", joined(self.kinds))
        grade = weakness or "firm evidence"
        if self.untrusted:  # a flagged run (read with --allow-flagged) is never firm evidence
            # named as the reader gives it (allow_flagged= in Python)
            allowed = field_named("allow_flagged")
            grade = f"{self.untrusted} flagged, used with {allowed}{filled('; {}', weakness)}"
        return f"{steps}({counted(self.runs, 'run')}; {grade})"

    def remedy(self, basis: bool = False) -> str:
        """What to bench for firm evidence (``bench.evidence.remedy``: --steps only where
        more steps fix a weakness found); ``basis``: with why that many steps (about 60
        words: said once, where the runs' weakness is said, not in every remedy)."""
        if not basis:
            return remedy(self.fixes, self.steps_needed)
        return remedy(self.fixes, self.steps_needed, self.steps_basis)


def _whole(value: float) -> int | None:
    """A count read off a column's min or max (None: NaN, the column held none)."""
    return None if math.isnan(value) else int(value)


def support(rows: pd.DataFrame, of: pd.DataFrame | None = None) -> Support | None:
    """What ``rows`` (``ok`` bench rows, graded by ``bench.evidence``) give a figure
    read from them; None for no row. The steps asked for are those every ``ok`` run of
    their models in ``of`` (the bench table; ``rows`` where not given) needs, as the
    bench's notes of those runs ask (``bench.evidence.steps_needed``: one number a model)."""
    if rows is None or rows.empty:
        return None
    steps = pd.to_numeric(rows.get("steps"), errors="coerce").dropna()
    kinds = list(rows.get("evidence_kinds", []))
    runs = rows
    if of is not None and "model" in of and "model" in rows:
        runs = of[of["model"].isin(set(rows["model"])) & (of["status"] == "ok")]
    asked, basis = steps_asked(runs.to_dict("records"))
    models = set(rows.get("model", ()))
    counts = pd.to_numeric(runs.get("accelerators"), errors="coerce").dropna()
    ran = pd.to_numeric(runs.get("steps"), errors="coerce").dropna()
    untrusted = rows.get("evidence", pd.Series("", index=rows.index)) == FLAGGED
    nnodes = pd.to_numeric(runs.get("nnodes", pd.Series(1, index=runs.index)), errors="coerce")
    across = (pd.to_numeric(runs.get("accelerators"), errors="coerce") // nnodes)[nnodes > 1]
    return Support(
        runs=len(rows),
        steps=_whole(steps.min()),
        kinds=tuple(labels(kinds)),
        steps_needed=asked,
        fixes=fixes(kinds),
        steps_basis=basis,
        model=str(next(iter(models))) if len(models) == 1 else None,
        counts=tuple(sorted({int(n) for n in counts})),
        most_steps=_whole(ran.max()),
        flagged=int(runs.get("flagged", pd.Series(dtype=bool)).fillna(False).astype(bool).sum()),
        untrusted=int(untrusted.sum()),
        flag_kinds=tuple(
            dict.fromkeys(k for ks in rows[untrusted].get("flag_kinds", ()) for k in ks)
        ),
        per_node=_whole(across.max()) if len(across) else None,
    )


def weak_clause(found: Support | None) -> str:
    """``from 2 timed steps per run (3 runs; weak evidence: few steps timed)`` where
    ``found`` is weak, else ``""``."""
    if found is None or not found.weak:
        return ""
    return f"from {found.rests_on()}"


def weak(found: Support | None) -> bool:
    """Whether ``found`` is weak evidence (None: numbers given, not runs)."""
    return found is not None and found.weak


def predicted(found: Support | None) -> str:
    """``, predicted from 2 timed steps per run (...)`` where ``found`` is weak."""
    if not weak(found):
        return ""
    return f", predicted {weak_clause(found)}"


def to_test(found: Support | None) -> str:
    """What a family's break-even sizes from weak runs are, and how to test them."""
    if not weak(found):
        return ""
    steps = ""
    if found.steps is not None:
        steps = f" ({counted(found.steps, 'timed step')} per run)"
    return (
        f"; from weak runs{steps}: a prediction to test, not a finding ({found.remedy()}, "
        "larger models of the family too: `gpuscale bench --list`)"
    )


def errors_weak(found: Support | None, error: HasResiduals) -> str:
    """Where the step interval's errors (``error``, the advice's step error) are of weak
    runs' steps (``found``: what the runs advised on rest on), said with what would firm
    it up."""
    if not weak(found) or not error.residuals:
        return ""
    return f"; read from weak runs, {found.rests_on()}: {found.remedy()} for a firm one"
