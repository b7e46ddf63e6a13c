"""The words on the bench runs an advice reads: the refusals (``calibrate.rows.CalibrationError``),
flagged and weak runs, the model advised on, an FSDP run's own work, and each count measured
against its prediction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import pandas as pd

from gpuscale.advice.explain.phrasebook import said, sentence
from gpuscale.advice.types import Finding, LeftOut, MeasuredCount, Refusal, RefusalKind
from gpuscale.names import did_you_mean
from gpuscale.plausibility import HOST_NOISE, FlagKind, detail
from gpuscale.quantities import filled, format_count, joined, noun_for, of_the
from gpuscale.tables.advice import TOO_WIDE_TO_TEST
from gpuscale.tables.requests import ref

Broken = tuple[tuple[str, tuple[int, ...]], ...]  # models, each with its counts
Flags = tuple[tuple[str, int, str], ...]  # kind, runs, an example reason


def broken_sentence(broken: Broken) -> str:
    return "; ".join(
        sentence("broken", case="model", model=model, on=counts) for model, counts in broken
    )


def broken_note(broken: Broken) -> str:
    return sentence("broken", case="note", models=broken_sentence(broken)) if broken else ""


def flag_lines(flags: Flags) -> str:
    return "; ".join(
        sentence("flagged_runs", case="flag", kind=kind, n=n, why=detail(why))
        for kind, n, why in flags
    )


def remedy(kinds: list[str]) -> str:
    """What to do about flags of ``kinds``, one clause per kind of cause."""
    # an N > 1 run's baseline flag is no cause of its own: its N = 1 run's kinds are
    kinds = [k for k in dict.fromkeys(kinds) if k != FlagKind.BASELINE]
    noise = [k for k in kinds if k in HOST_NOISE]
    other = [k for k in kinds if k not in noise and k != FlagKind.LOSS]
    if FlagKind.LOSS in kinds:  # no way out but the fix: neither a quieter host nor --allow-flagged
        said = sentence("broken", case="remedy", kinds=", ".join(noise + other) or None)
    elif noise or other:
        said = sentence("flag_remedy", quieter=bool(noise), other=", ".join(other) or None)
    else:
        return ""
    return said[:1].upper() + said[1:]


def allowed_warning(flags: Flags, flagged: int, broken: Broken) -> str | None:
    """The warning where ``--allow-flagged`` let ``flagged`` runs in, or ``broken`` models not."""
    said = [broken_note(broken)] if broken else []  # allowed, not used
    if flagged:
        said.insert(0, sentence("flagged_runs", case="allowed", n=flagged, flags=flag_lines(flags)))
    return f"WARNING: {'. '.join(said)}." if said else None


def _refused(found: Refusal) -> str:
    if found.kind == RefusalKind.BROKEN:
        several, models = len(found.broken) > 1, broken_sentence(found.broken)
        return sentence("broken", case="refused", r=found, several=several, models=models)
    names = found.names
    closest = found.kind == RefusalKind.NOT_IN_FILE and did_you_mean(found.model, list(names))
    return sentence(
        "runs_refused",
        r=found,
        error=found.error[:200],
        closest=closest or "",
        listed=joined(names) or "none",
        shown=", ".join(names[:4]),
        more=len(names[4:]) or None,
    )


def refusal(found: Finding | Refusal | str, left: LeftOut | None = None) -> str:
    """A refusal of the calibration in words, then the runs ``left`` out where one was an
    N = 1 run."""
    text = _refused(found) if isinstance(found, Refusal) else said(found)
    if not left:
        return text
    flagged = ""
    if left.single:
        kinds = [kind for kind, _, _ in left.flags]
        runs = {"n": left.left, "flags": flag_lines(left.flags), "remedy": remedy(kinds)}
        flagged = f". {sentence('flagged_runs', case='left', **runs)}"
    return f"{text}{flagged}{filled('. {}', broken_note(left.broken))}."


def field_refusal(field: str, value: object, found: Finding | Refusal | str) -> str:
    """A request's field the bench refuses, with its value, as Python names it."""
    model = isinstance(found, Refusal) and found.kind == RefusalKind.NOT_IN_FILE
    return f"{ref(field, value)} is {refusal(found)}{' (give one of them as model=)' * model}"


def _why_not(runs: pd.DataFrame, broken: Sequence[int] | None = None) -> str:
    """Why a model's runs give no trustworthy N = 1 run (``broken``: the counts whose loss
    was not finite)."""
    single = runs[runs["accelerators"] == 1]
    ok = single[single["status"] == "ok"]
    kinds = dict.fromkeys(k for row in ok["flag_kinds"] for k in row)
    case = "flagged"
    if broken:
        case = "broken"
    elif single.empty:
        case = "none"
    elif ok.empty:
        case = "failed"
    return sentence(
        "no_single",
        case=case,
        on=broken,
        noun=noun_for(len(ok) or len(single), "run"),
        status=single["status"].iloc[-1] if len(single) else None,
        kinds=joined(kinds) or "untrusted",
    )


@dataclass(frozen=True, slots=True)
class Chosen:
    """The model advised on where none was asked, each larger one passed over (name, size,
    its runs, the counts whose loss was not finite) and, where none was, the others benched."""

    model: str
    size: float
    passed: tuple[tuple[str, float, pd.DataFrame, tuple[int, ...] | None], ...] = ()
    others: tuple[str, ...] = ()


def chosen_said(found: Chosen) -> tuple[str, str]:
    """Why the model advised on was chosen: the larger ones passed over, else the others
    benched ``--model`` chooses; "" for what does not apply."""
    if found.passed:
        passed = "; ".join(
            f"{name} ({format_count(params)}): {_why_not(runs, broken)}"
            for name, params, runs, broken in found.passed
        )
        return sentence("model_chosen", c=found, passed=passed, others=None), ""
    if not found.others:
        return "", ""
    others, listed = len((found.model, *found.others)), joined(found.others)
    return "", sentence("model_chosen", c=found, passed=None, others=others, listed=listed)


@dataclass(frozen=True, slots=True)
class WeakRuns:
    """The runs of ``model`` an advice uses that are weak evidence (``weak`` of ``runs``), the
    kinds of why, what to bench and the results file (a shell word) whose notes say more."""

    weak: int
    runs: int
    model: str
    counts: tuple[int, ...]
    kinds: tuple[str, ...]
    fix: str | None
    fix_in_full: str
    file: str


def weak_evidence(found: WeakRuns | None) -> tuple[str | None, str | None]:
    """The warning on weak runs and the same in full (with the command printing their notes)."""
    if found is None:
        return None, None
    said = {**asdict(found), "runs": of_the(found.weak, found.runs, "bench run")}
    short = sentence("weak_evidence", full=False, **said)
    return short, sentence("weak_evidence", full=True, **said)


def fsdp_own_basis(row: pd.Series) -> str:
    """What an FSDP row's own work was read from, with its numbers (``bench.table.fsdp_own``)."""
    columns = ("fsdp_overhead_ms", "step_ms_mean", "plain_step_ms_mean", "nosync_step_ms_mean")
    own, step, plain, nosync = (None if pd.isna(v := row.get(c)) else float(v) for c in columns)
    case = "*"
    if step is not None and nosync is not None and (plain is None or plain >= nosync):
        case = "nosync"  # the step less the plain one no larger than less the no-sync one
    elif step is not None and plain is not None:
        case = "plain"
    return sentence("fsdp_own", own=own, case=case, step=step, plain=plain, nosync=nosync)


def fsdp_note(row: pd.Series) -> str:
    """How an FSDP run's N = 1 step was read ("" for another strategy)."""
    if row["strategy"] != "fsdp":
        return ""
    step = float(row["step_ms_mean"])
    return sentence("fsdp_note", model=row["model"], step=step, basis=fsdp_own_basis(row))


def against_measured(
    counts: Sequence[MeasuredCount], disagreeing: tuple[MeasuredCount, ...] = ()
) -> list[str]:
    """The runs at each of ``counts`` but those ``disagreeing`` against the prediction;
    inside an interval too wide to test it (``report.bench_checks``), no agreement."""
    apart = {(d.accelerators, d.batch_per_device, d.accum) for d in disagreeing}
    said = []
    for c in counts:
        if (c.accelerators, c.batch_per_device, c.accum) in apart:
            continue
        remedy = next((m.weak_remedy for m in c.trusted if m.weak_remedy), "")  # what firms them
        case = "outside"
        if not c.trusted:
            case = "flagged"
        elif c.inside:
            case = "inside"
        elif remedy:
            case = "weak"
        left = tuple(c.of(c.left_out)) or None
        within = TOO_WIDE_TO_TEST
        said.append(
            sentence("measured_count", c=c, case=case, within=within, remedy=remedy, left=left)
        )
    return said


def disagreement(d: MeasuredCount) -> str:
    left = tuple(d.of(d.left_out)) or None
    return sentence("disagreement", d=d, flags="; ".join(d.flags), left=left)
