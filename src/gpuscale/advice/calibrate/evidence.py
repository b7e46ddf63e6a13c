"""What a bench file's runs say as evidence for the model advised on: its N > 1 speedups
(:func:`measured_runs`), its weak runs (:func:`weak_runs`) and, where no model was asked, why
this one (:func:`chosen`: the larger ones passed over, else the others benched), and the
flagged runs used with --allow-flagged (:func:`allowed_flagged`: its flags and the broken
models left out are findings the refusals say too)."""

from __future__ import annotations

import pandas as pd

from gpuscale.advice.calibrate.rows import Broken, Usable
from gpuscale.advice.derived import broken_left_out, flags_seen
from gpuscale.advice.types import Finding, Measured, trusted_runs
from gpuscale.advice.types import FindingKind as K
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.evidence import labels, remedy
from gpuscale.bench.support import Support, support
from gpuscale.bench.support import weak as too_short
from gpuscale.tables.bench import one_device as at_one_device
from gpuscale.tables.bench_runs import runs_like


def measured_runs(
    table: pd.DataFrame,
    model: str,
    allow_flagged: bool,
    like: tuple[str, str | None, str | None] | None = None,
) -> list[Measured]:
    """The model's N > 1 speedups; with ``like`` (group, device, strategy) only runs like it."""
    scaling = bench_scaling(table)
    base_batch = at_one_device(scaling, "batch_per_device")
    base_accum = at_one_device(scaling, "accum")
    of = (scaling["model"] == model) & (scaling["accelerators"] > 1)
    if like is not None and len(scaling):
        of &= runs_like(scaling, *like)
    rows = scaling[of].dropna(subset=["speedup"])
    at = pd.Series(range(len(scaling)), index=scaling.index, dtype=float)
    base_at = at_one_device(scaling.assign(_at=at), "_at")

    def weak_remedy(index: object) -> str:
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


def weak_runs(
    table: pd.DataFrame, model: str, file: str = "FILE"
) -> tuple[Finding | None, Support | None]:
    """The weak runs of ``model`` the advice uses (None when none is: the warning's finding,
    ``full`` False; --explain's with ``full`` True) and what they give."""
    rows = trusted_runs(table[table["model"] == model])
    weak = rows[rows["evidence"] == "weak"]
    found = support(rows, table)
    if weak.empty or found is None:
        return None, found
    kinds = tuple(labels(weak["evidence_kinds"]))
    counts = tuple(int(n) for n in sorted(weak["accelerators"].unique()))
    # runs too short to read the step's terms from: the change line says what to bench
    # (``explain.caveats.measure_first``), the warning only that they are weak
    fix = None if too_short(found) else remedy(found.fixes, found.steps_needed)
    full = found.remedy(basis=True)
    weak_runs = Finding.of(
        K.WEAK_EVIDENCE,
        full=False,
        weak=len(weak),
        runs=len(rows),
        model=model,
        counts=counts,
        kinds=kinds,
        fix=fix,
        fix_in_full=full,
        file=file,
    )
    return weak_runs, found


def chosen(bench: pd.DataFrame, name: str, broken: Broken) -> tuple[Finding | None, Finding | None]:
    """Why ``name`` where no model was asked, the largest benched: the larger models passed
    over, each with why its runs give no trustworthy N = 1 run (first, the model note), else
    the others benched (said after the decision); None for each not said."""
    sizes = bench.dropna(subset=["params"]).groupby("model")["params"].max()
    if name not in sizes:
        return None, None
    larger = sizes[sizes > sizes[name]].sort_values(ascending=False)
    found = Finding.of(K.MODEL_CHOSEN, model=name, size=float(sizes[name]))
    if len(larger):
        passed = tuple(
            Finding.of(
                K.PASSED_OVER,
                model=str(m),
                params=float(size),
                why=why_not(bench[bench["model"] == m], dict(broken).get(str(m))),
            )
            for m, size in larger.items()
        )
        return found.with_values(passed=passed, others=None), None
    others = tuple(str(m) for m in sizes.sort_values(ascending=False).index if m != name)
    if not others:
        return None, None
    return None, found.with_values(passed=None, others=len(others) + 1, listed=others)


def why_not(runs: pd.DataFrame, broken: tuple[int, ...] | None = None) -> Finding:
    """Why a model's ``runs`` give no trustworthy N = 1 run: ``broken`` (the counts whose
    loss was not finite), none, each failed, else flagged (its flags' kinds)."""
    single = runs[runs["accelerators"] == 1]
    ok = single[single["status"] == "ok"]
    kinds = tuple(dict.fromkeys(str(k) for row in ok["flag_kinds"] for k in row))
    case = "flagged"
    if ok.empty:
        case = "failed"
    if single.empty:
        case = "none"
    if broken:
        case = "broken"
    return Finding.of(
        K.NO_SINGLE,
        case=case,
        on=broken,
        runs=len(ok) or len(single),
        kinds=kinds,
        named=bool(kinds),
        status=str(single["status"].iloc[-1]) if len(single) else None,
    )


def allowed_flagged(found: Usable) -> Finding | None:
    """With --allow-flagged, the flagged runs used (by kind of flag) and the broken models
    left out whatever it says; None where neither is."""
    used = None
    if found.allowed:
        flags = flags_seen(found.flags)
        used = Finding.of(K.FLAGGED_USED, n=found.allowed, flags=flags)
    parts = tuple(filter(None, (used, broken_left_out(found.broken))))
    return Finding.of(K.ALLOWED_FLAGGED, parts=parts) if parts else None
