"""Which bench model an advice is on when none was asked for, and why the larger ones were
not used: the largest model with a trustworthy N = 1 run is advised on (``calibrate.
default_model``); a walk's file whose largest model (tf-1.5m) was all flagged advised
mlp-1m, and its headline said only "1.06M parameters"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from gpuscale.advice.calibrate import CalibrationError
from gpuscale.bench.baselines import kinds_of
from gpuscale.names import did_you_mean
from gpuscale.quantities import counted, format_count, joined, noun_for
from gpuscale.tables.requests import FieldError, as_keywords, ref


class BenchFieldError(CalibrationError, FieldError):
    """A request's field the bench file refuses (a model it does not hold, a fixed cost
    above its step): a :class:`CalibrationError` and a :class:`FieldError` both, so the
    CLI names the option (``--model tf-3m: not in ...``) and Python the keyword
    (``model='tf-3m' is not in ...``), never the other's."""

    def __init__(self, field: str, value: object, rule: str, *, then: str = "") -> None:
        FieldError.__init__(self, field, value, rule)
        self.text = f"{ref(field, value)} is {rule}{then}"  # as NamedError's
        self.args = (as_keywords(self.text),)


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
    kinds = dict.fromkeys(k for flags in ok["flags"].fillna("") for k in kinds_of(str(flags)))
    return f"its N = 1 {noun_for(len(ok), 'run')} flagged ({joined(kinds) or 'untrusted'})"


def why_this_model(
    table: pd.DataFrame, chosen: str, broken: dict[str, list[int]] | None = None
) -> str:
    """The sentence naming the model advised on and, where larger models of the table were
    passed over, each and why (``broken``: the models whose loss was not finite, with the
    counts, ``flag_remedy.broken_models``); "" when the chosen model is the largest."""
    broken = broken or {}
    sizes = _sizes(table)
    if chosen not in sizes:
        return ""
    larger = sizes[sizes > sizes[chosen]].sort_values(ascending=False)
    if larger.empty:
        return ""
    passed = "; ".join(
        f"{name} ({format_count(size)}): "
        f"{_why_not(table[table['model'] == name], broken.get(str(name)))}"
        for name, size in larger.items()
    )
    return (
        f"Advised on {chosen} ({format_count(sizes[chosen])} parameters), the largest model "
        f"with a trustworthy N = 1 run; not used: {passed} (--model to choose one)."
    )


def _sizes(table: pd.DataFrame) -> pd.Series:
    """Each model's parameters, by name."""
    return table.dropna(subset=["params"]).groupby("model")["params"].max()


def models_benched(table: pd.DataFrame, chosen: str) -> str:
    """Where the model advised on is the largest of several benched: which, and the others
    ``--model`` chooses (a walk: six models in a file, one advised without a word why);
    "" where the table holds one model, or a larger one was passed over
    (:func:`why_this_model` says it)."""
    sizes = _sizes(table)
    if chosen not in sizes or len(sizes) < 2 or (sizes > sizes[chosen]).any():
        return ""
    others = [str(name) for name in sizes.sort_values(ascending=False).index if name != chosen]
    return (
        f"Advised on {chosen} ({format_count(sizes[chosen])} parameters), the largest of the "
        f"{len(sizes)} models benched (--model to choose another: {joined(others)})."
    )


def known_model(table: pd.DataFrame, model: str, source: Any) -> None:
    """:class:`CalibrationError` when no row of the bench results is of ``model`` (a
    typo, another file): the models there and the closest one, not advice to re-run
    (:class:`BenchFieldError`: the CLI says ``--model``, Python ``model=``)."""
    names = sorted({str(m) for m in table["model"].dropna()})
    where = "the bench results" if source is None else Path(source).name
    if model in names:
        runs = table[table["model"] == model]
        if not (runs["status"] == "ok").any():  # said as what happened, not as untrusted
            last = runs.iloc[-1]
            raise CalibrationError(
                f"every run of {model!r} in {where} failed ({len(runs)}), the last "
                f"{last['status']}: {str(last['error'])[:200]}; nothing measured to advise from"
            )
        return
    raise BenchFieldError(
        "model",
        model,
        f"not in {where}{did_you_mean(model, names)}; it holds "
        f"{counted(len(names), 'model')}: {joined(names) or 'none'}",
        then=" (give one of them as model=)",
    )
