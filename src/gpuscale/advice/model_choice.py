"""Which bench model an advice is on when none was asked for, and why the larger ones were
not used: the largest model with a trustworthy N = 1 run is advised on (``calibrate.
default_model``); a walk's file whose largest model (tf-1.5m) was all flagged advised
mlp-1m, and its headline said only "1.06M parameters"."""

from __future__ import annotations

import pandas as pd

from gpuscale.bench.baselines import kinds_of
from gpuscale.quantities import format_count, joined, noun_for


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
