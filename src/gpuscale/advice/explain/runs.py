"""The words on the bench runs an advice reads, from the calibration's records: the
refusals (:func:`refusal`, the one renderer of ``calibrate.rows.CalibrationError``: a
``types.Refusal`` or a finding, and the runs left out); the flagged runs allowed and what
to do about them; weak runs; which model was advised on and why the larger ones were
passed over."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from gpuscale.advice.explain.findings import said
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.types import Finding, LeftOut, Refusal, RefusalKind
from gpuscale.names import did_you_mean
from gpuscale.plausibility import HOST_NOISE, FlagKind, detail
from gpuscale.quantities import (
    agreeing,
    counted,
    filled,
    format_count,
    format_ms,
    joined,
    noun_for,
    of_the,
)
from gpuscale.tables.requests import ref

Broken = tuple[tuple[str, tuple[int, ...]], ...]  # models, each with its counts
Flags = tuple[tuple[str, int, str], ...]  # kind, runs, an example reason

# The command that prints a bench table's evidence_notes (``-f csv`` alone leaves them out).
NOTES_COMMAND = (
    "gpuscale analyze --bench {} --columns configuration,accelerators,evidence_notes -f csv"
)

QUIETER = "re-run on a quieter machine (gpuscale bench --repeat 3 keeps the median)"
ALLOW = "allow flagged runs (--allow-flagged, or allow_flagged=True) to use them with a warning"
FIX_FIRST = "check its loss, inputs and learning rate, then bench it again"
FIX_LOSS = (
    "fix the model first: its loss was not finite (NaN or inf), so it trains nothing "
    f"(broken or diverged): {FIX_FIRST}"
)
# Said beside FIX_LOSS: what --allow-flagged does not do, and where the other flags went.
NOT_ALLOWED = (
    "--allow-flagged admits no run of a model whose loss was not finite; its other flags "
    "({kinds}) are for the runs benched after the fix"
)


def broken_sentence(broken: Broken) -> str:
    """The models ``broken`` names, each with the counts whose loss was not finite."""
    return "; ".join(
        f"{model} (loss not finite on {joined(counts)} {noun_for(counts[-1], 'device')})"
        for model, counts in broken
    )


def _broken(found: Refusal) -> str:
    """The refusal when the model asked for, or every model of the file measured, is
    broken."""
    broken, where = found.broken, found.where
    if len(broken) == 1:
        ((model, counts),) = broken
        said = (
            f"{model} is broken: loss not finite (NaN or inf) in its runs on "
            f"{joined(counts)} {noun_for(counts[-1], 'device')} in {where}: it trains nothing "
            "(broken or diverged)"
        )
    else:
        said = f"every model measured in {where} is broken: {broken_sentence(broken)}"
    whose = agreeing(len(broken), "its", "their")
    return (
        f"{said}; none of {whose} runs is advised on, with --allow-flagged or without (it "
        f"admits runs flagged for a noisy host or the like, never a broken model's). Fix "
        f"the {noun_for(len(broken), 'model')} first: {FIX_FIRST}"
    )


def broken_note(broken: Broken) -> str:
    """The sentence saying which models were left out as broken ("" when none)."""
    if not broken:
        return ""
    return (
        f". Left out whatever --allow-flagged says, as broken: {broken_sentence(broken)}; "
        "fix a model whose loss is not finite before advising on it"
    )


def flag_lines(flags: Flags) -> str:
    """Each kind of flag, its count and an example reason, in one sentence."""
    return "; ".join(f"{kind} ({counted(n, 'run')}, e.g. {detail(why)})" for kind, n, why in flags)


def remedy(kinds: list[str]) -> str:
    """What to do about flags of ``kinds``, one clause per kind of cause."""
    # an N > 1 run's baseline flag is no cause of its own: its N = 1 run's kinds are
    kinds = [k for k in dict.fromkeys(kinds) if k != FlagKind.BASELINE]
    broken = [k for k in kinds if k == FlagKind.LOSS]
    noise = [k for k in kinds if k in HOST_NOISE]
    other = [k for k in kinds if k not in broken and k not in noise]
    if broken:  # no way out but the fix: neither a quieter host nor --allow-flagged
        said = FIX_LOSS
        if noise or other:
            said += "; " + NOT_ALLOWED.format(kinds=", ".join(noise + other))
        return said[:1].upper() + said[1:]
    if not (noise or other):
        return ""
    parts = [QUIETER] * bool(noise)
    if other:
        parts.append(f"bench again as the flag says ({', '.join(other)})")
    parts.append(("or " if parts else "") + ALLOW)
    said = ", ".join(parts)
    return said[:1].upper() + said[1:]


def _flagged_help(left: LeftOut) -> str:
    """What a refusal adds on the flagged runs left out where one was an N = 1 run ("":
    allowing them would not give the run that is missing)."""
    if not left.single:
        return ""
    kinds = [kind for kind, _, _ in left.flags]
    return (
        f". {counted(left.left, 'run')} {agreeing(left.left, 'was', 'were')} left out as "
        f"flagged: {flag_lines(left.flags)}. {remedy(kinds)}"
    )


def allowed_warning(flags: Flags, flagged: int, broken: Broken) -> str | None:
    """The warning where ``--allow-flagged`` let ``flagged`` runs in (and the broken models
    it could not: ``broken``); None where neither."""
    said = [broken_note(broken).removeprefix(". ")] if broken else []  # allowed, not used
    if flagged:
        said.insert(
            0,
            f"{counted(flagged, 'flagged run')} used (--allow-flagged): "
            f"{flag_lines(flags)}. The figures they give are less certain",
        )
    return f"WARNING: {'. '.join(said)}." if said else None


def _all_failed(found: Refusal) -> str:
    """The refusal where every run of the model failed: how many, and the last one's error."""
    return (
        f"every run of {found.model!r} in {found.where} failed ({found.runs}), the last "
        f"{found.status}: {found.error[:200]}; nothing measured to advise from"
    )


MODEL_THEN = " (give one of them as model=)"


def _not_in_file(found: Refusal) -> str:
    """The rule a model not in the bench results breaks: the closest name, and those there."""
    names = list(found.names)
    return (
        f"not in {found.where}{did_you_mean(found.model, names)}; it holds "
        f"{counted(len(names), 'model')}: {joined(names) or 'none'}"
    )


def _columns_missing(found: Refusal) -> str:
    """The refusal of a table that is no bench table: the first columns it lacks."""
    missing = found.names
    shown = ", ".join(missing[:4]) + filled(" and {} more", max(len(missing) - 4, 0))
    return (
        f"the bench table lacks the {noun_for(len(missing), 'column')} {shown}: "
        "give a table made by gpuscale.bench.results.bench_table, or the results file's path"
    )


_REFUSALS: dict[RefusalKind, Callable[[Refusal], str]] = {
    RefusalKind.BROKEN: _broken,
    RefusalKind.ALL_FAILED: _all_failed,
    RefusalKind.NOT_IN_FILE: _not_in_file,
    RefusalKind.COLUMNS_MISSING: _columns_missing,
}


def refusal(found: Finding | Refusal | str, left: LeftOut | None = None) -> str:
    """A refusal of the calibration in words, the one renderer of ``CalibrationError``:
    ``found`` (a :class:`Refusal` by its kind, a finding by its template, a sentence as it
    is), then the runs ``left`` out, the sentence closed."""
    text = _REFUSALS[found.kind](found) if isinstance(found, Refusal) else said(found)
    if left:
        return f"{text}{_flagged_help(left)}{broken_note(left.broken)}."
    return text


def field_refusal(field: str, value: object, found: Finding | Refusal | str) -> str:
    """A request's field the bench refuses, with its value, as Python names it (the
    command line reads the options, ``tables.requests.as_options``)."""
    model = isinstance(found, Refusal) and found.kind == RefusalKind.NOT_IN_FILE
    return f"{ref(field, value)} is {refusal(found)}{MODEL_THEN * model}"


def _why_not(runs: pd.DataFrame, broken: Sequence[int] | None = None) -> str:
    """Why a model's runs give no trustworthy N = 1 run (``broken``: the counts whose loss
    was not finite, where it is broken: then none of its runs is used)."""
    if broken:
        return (
            f"loss not finite on {joined(broken)} {noun_for(broken[-1], 'device')}, "
            "a broken model: none of its runs used, --allow-flagged or not"
        )
    single = runs[runs["accelerators"] == 1]
    if single.empty:
        return "no N = 1 run"
    ok = single[single["status"] == "ok"]
    if ok.empty:
        return f"its N = 1 {noun_for(len(single), 'run')} failed ({single['status'].iloc[-1]})"
    kinds = dict.fromkeys(k for row in ok["flag_kinds"] for k in row)
    return f"its N = 1 {noun_for(len(ok), 'run')} flagged ({joined(kinds) or 'untrusted'})"


@dataclass(frozen=True, slots=True)
class Chosen:
    """The model advised on where none was asked (``model``, of ``size`` parameters; ""
    where it is not the bench's), each larger one passed over (name, size, its runs, the
    counts whose loss was not finite) and, where none was, the others benched."""

    model: str
    size: float
    passed: tuple[tuple[str, float, pd.DataFrame, tuple[int, ...] | None], ...] = ()
    others: tuple[str, ...] = ()


def chosen_said(found: Chosen) -> tuple[str, str]:
    """Why the model advised on was chosen: the larger ones passed over and why, else,
    the largest of several benched, the others ``--model`` chooses; "" for what does not
    apply."""
    if found.passed:
        said = "; ".join(
            f"{name} ({format_count(params)}): {_why_not(runs, broken)}"
            for name, params, runs, broken in found.passed
        )
        return (
            f"Advised on {found.model} ({format_count(found.size)} parameters), the largest "
            f"model with a trustworthy N = 1 run; not used: {said} (--model to choose one).",
            "",
        )
    if not found.others:
        return "", ""
    return "", (
        f"Advised on {found.model} ({format_count(found.size)} parameters), the largest of "
        f"the {len(found.others) + 1} models benched (--model to choose another: "
        f"{joined(found.others)})."
    )


@dataclass(frozen=True, slots=True)
class WeakRuns:
    """The runs of ``model`` an advice uses that are weak evidence: ``weak`` of ``runs``,
    on ``counts`` devices, the kinds of why, what to bench (``fix``: None where the change
    line says it; ``fix_in_full``: with the steps' basis) and the results file (``file``,
    a shell word) whose notes say more."""

    weak: int
    runs: int
    model: str
    counts: tuple[int, ...]
    kinds: tuple[str, ...]
    fix: str | None
    fix_in_full: str
    file: str


def on_devices(counts: Sequence[int]) -> str:
    """``1 device``, ``2 devices``, ``1 and 2 devices``: the counts some runs were on."""
    if list(counts) == [1]:
        return "1 device"
    return f"{joined(counts)} devices"


def weak_evidence(found: WeakRuns | None) -> tuple[str | None, str | None]:
    """The warning on weak runs (with what to bench, where their steps can be read) and
    the same in full (with the command printing their notes); (None, None) for none."""
    if found is None:
        return None, None
    on = on_devices(found.counts)
    runs = of_the(found.weak, found.runs, "bench run")
    said = (
        f"WARNING: weak evidence: {runs} of {found.model} the advice uses (on {on}) "
        f"{agreeing(found.weak, 'is', 'are')} weak ({', '.join(found.kinds)})"
    )
    short = "" if found.fix is None else f": {found.fix} for firm numbers"
    full = (
        f"Weak evidence: {runs} of {found.model} (on {on}): {', '.join(found.kinds)}; the bench "
        f"table's evidence_notes say more: `{NOTES_COMMAND.format(found.file)}`; "
        f"{found.fix_in_full} for firm numbers."
    )
    return f"{said}{short}", full


def fsdp_own_basis(row: pd.Series) -> str:
    """What an FSDP row's own work (``fsdp_overhead_ms``) was read from, with its numbers:
    its synchronised minus no-sync step, or its step less the plain one where that is
    larger (``bench.table.fsdp_own``: FSDP2 shards the module in place, so an FSDP run's
    plain step times the sharded module, not a bare one)."""
    own = row.get("fsdp_overhead_ms")
    own = "unmeasured" if own is None or pd.isna(own) else format_ms(float(own))
    step, plain = row.get("step_ms_mean"), row.get("plain_step_ms_mean")
    nosync = row.get("nosync_step_ms_mean")
    timed = [v is not None and pd.notna(v) for v in (step, plain, nosync)]
    if all(timed[::2]) and not (
        timed[1] and float(step) - float(plain) > float(step) - float(nosync)
    ):
        said = sentence("fsdp_sync_less_nosync", own=own, step=float(step), nosync=float(nosync))
        if timed[1]:
            said += sentence("fsdp_plain_sharded", plain=float(plain))
        return said
    if timed[0] and timed[1]:
        less = f"its plain step ({format_ms(float(plain))})"
        return f"{own}: its step ({format_ms(float(step))}) less {less}"
    return sentence("fsdp_sync_minus_nosync", own=own)


def fsdp_note(row: pd.Series) -> str:
    """How an FSDP run's N = 1 step was read ("" for another strategy)."""
    if row["strategy"] != "fsdp":
        return ""
    step = float(row["step_ms_mean"])
    return sentence("fsdp_note", model=row["model"], step=step, basis=fsdp_own_basis(row))
