"""The words on the bench runs an advice reads: the refusals of a broken model, of a
model missing or never measured, of a table that is no bench table; the flagged runs
left out or allowed, and what to do about them; which model was advised on and why the
larger ones were passed over (the numbers: ``calibrate/rows.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from gpuscale.bench.table import flag_summary
from gpuscale.names import did_you_mean
from gpuscale.plausibility import HOST_NOISE, FlagKind, detail
from gpuscale.quantities import agreeing, counted, filled, format_count, joined, noun_for, of_the

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


def broken_sentence(broken: dict[str, list[int]]) -> str:
    """The models ``broken`` names, each with the counts whose loss was not finite."""
    return "; ".join(
        f"{model} (loss not finite on {joined(counts)} {noun_for(counts[-1], 'device')})"
        for model, counts in broken.items()
    )


def broken_refusal(broken: dict[str, list[int]], where: str) -> str:
    """The refusal when the model asked for, or every model of ``where`` measured, is broken
    (``broken``: those models, ``broken_models``)."""
    if len(broken) == 1:
        ((model, counts),) = broken.items()
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


def broken_note(broken: dict[str, list[int]]) -> str:
    """The sentence saying which models were left out as broken ("" when none)."""
    if not broken:
        return ""
    return (
        f". Left out whatever --allow-flagged says, as broken: {broken_sentence(broken)}; "
        "fix a model whose loss is not finite before advising on it"
    )


def flag_lines(table: pd.DataFrame) -> str:
    """Each kind of flag, its count and an example reason, in one sentence."""
    return "; ".join(
        f"{kind} ({counted(n, 'run')}, e.g. {detail(why)})" for kind, n, why in flag_summary(table)
    )


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
    parts = [QUIETER] if noise else []
    if other:
        parts.append(f"bench again as the flag says ({', '.join(other)})")
    parts.append(("or " if parts else "") + ALLOW)
    said = ", ".join(parts)
    return said[:1].upper() + said[1:]


def flagged_help(table: pd.DataFrame) -> str:
    """The sentence a refusal ends with when flagged runs were left out and one of them was
    an N = 1 run ("" otherwise: allowing them would not give the run that is missing)."""
    flagged = table["flagged"].fillna(False).astype(bool) & (table["status"] == "ok")
    if not (flagged & (table["accelerators"] == 1)).any():
        return ""
    kinds = [kind for kind, _, _ in flag_summary(table)]
    left = int(flagged.sum())
    return (
        f". {counted(left, 'run')} {agreeing(left, 'was', 'were')} left out as flagged: "
        f"{flag_lines(table)}. "
        f"{remedy(kinds)}"
    )


def allowed_warning(sound: pd.DataFrame, flagged: int, broken: dict[str, list[int]]) -> str | None:
    """The warning where ``--allow-flagged`` let ``flagged`` runs of ``sound`` in (and the
    broken models it could not: ``broken``); None where neither."""
    said = [broken_note(broken).removeprefix(". ")] if broken else []  # allowed, not used
    if flagged:
        said.insert(
            0,
            f"{counted(flagged, 'flagged run')} used (--allow-flagged): "
            f"{flag_lines(sound)}. The figures they give are less certain",
        )
    return f"WARNING: {'. '.join(said)}." if said else None


def all_failed(runs: pd.DataFrame, model: str, where: str) -> str:
    """The refusal where every run of ``model`` failed: how many, and the last one's error."""
    last = runs.iloc[-1]
    return (
        f"every run of {model!r} in {where} failed ({len(runs)}), the last "
        f"{last['status']}: {str(last['error'])[:200]}; nothing measured to advise from"
    )


MODEL_THEN = " (give one of them as model=)"


def not_in_file(model: str, names: list[str], where: str) -> str:
    """The rule a model not in the bench results breaks: the closest name, and those there."""
    return (
        f"not in {where}{did_you_mean(model, names)}; it holds "
        f"{counted(len(names), 'model')}: {joined(names) or 'none'}"
    )


def columns_missing(missing: list[str]) -> str:
    """The refusal of a table that is no bench table: the first columns it lacks."""
    shown = ", ".join(missing[:4]) + filled(" and {} more", max(len(missing) - 4, 0))
    return (
        f"the bench table lacks the {noun_for(len(missing), 'column')} {shown}: "
        "give a table made by gpuscale.bench.results.bench_table, or the results file's path"
    )


def _why_not(runs: pd.DataFrame, broken: list[int] | None = None) -> str:
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


def largest_trusted(
    chosen: str, size: float, passed: list[tuple[str, float, pd.DataFrame, list[int] | None]]
) -> str:
    """The model advised on (``chosen``, of ``size`` parameters), the largest with a
    trustworthy N = 1 run, and each larger one ``passed`` over (name, size, its runs, the
    counts whose loss was not finite) and why."""
    said = "; ".join(
        f"{name} ({format_count(params)}): {_why_not(runs, broken)}"
        for name, params, runs, broken in passed
    )
    return (
        f"Advised on {chosen} ({format_count(size)} parameters), the largest model "
        f"with a trustworthy N = 1 run; not used: {said} (--model to choose one)."
    )


def largest_of(chosen: str, size: float, models: int, others: list[str]) -> str:
    """The model advised on, the largest of the ``models`` benched, and the ``others``."""
    return (
        f"Advised on {chosen} ({format_count(size)} parameters), the largest of the "
        f"{models} models benched (--model to choose another: {joined(others)})."
    )


@dataclass(frozen=True, slots=True)
class WeakRuns:
    """The runs of ``model`` an advice uses that are weak evidence: ``weak`` of ``runs``,
    on ``counts`` devices, and the kinds of why."""

    weak: int
    runs: int
    model: str
    counts: list[int]
    kinds: list[str]


def on_devices(counts: Sequence[int]) -> str:
    """``1 device``, ``2 devices``, ``1 and 2 devices``: the counts some runs were on."""
    if list(counts) == [1]:
        return "1 device"
    return f"{joined(counts)} devices"


def weak_evidence(found: WeakRuns, fix: str | None, fix_in_full: str, file: str) -> tuple[str, str]:
    """The warning on weak runs (with what to bench, ``fix``, where their steps can be
    read) and the same in full (``fix_in_full``; the command printing their notes, on
    ``file``)."""
    on = on_devices(found.counts)
    runs = of_the(found.weak, found.runs, "bench run")
    said = (
        f"WARNING: weak evidence: {runs} of {found.model} the advice uses (on {on}) "
        f"{agreeing(found.weak, 'is', 'are')} weak ({', '.join(found.kinds)})"
    )
    short = "" if fix is None else f": {fix} for firm numbers"
    full = (
        f"Weak evidence: {runs} of {found.model} (on {on}): {', '.join(found.kinds)}; the bench "
        f"table's evidence_notes say more: `{NOTES_COMMAND.format(file)}`; "
        f"{fix_in_full} for firm numbers."
    )
    return f"{said}{short}", full
