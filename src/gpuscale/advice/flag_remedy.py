"""What to do about the flagged bench runs an advice left out, chosen by the kinds of flag
present (``bench.results.flag_summary``): a noisy host is re-run on a quieter machine or
its runs allowed with a warning; a model whose loss was not finite is broken, and is told
to fix its loss, never to re-run quieter or use its runs; any other flag is told to bench
again as the flag itself says, or to allow the runs."""

from __future__ import annotations

import re
from typing import Any

from gpuscale.bench.results import flag_summary

# Kinds of flag (the text before a reason's first colon) that a noisy host raises.
NOISE_KINDS = ("machine busy", "CPU steal", "noisy", "repeats disagree", "no-sync steps")
# Kinds that say the model itself is broken: its runs measure nothing worth advising on.
BROKEN_KINDS = ("loss not finite",)

QUIETER = "re-run on a quieter machine (gpuscale bench --repeat 3 keeps the median)"
ALLOW = "allow flagged runs (--allow-flagged, or allow_flagged=True) to use them with a warning"
FIX_LOSS = (
    "fix the model first: its loss was not finite (NaN or inf), so it trains nothing "
    "(broken or diverged): check its loss, inputs and learning rate, then bench it again"
)


def flag_lines(table: Any) -> str:
    """Each kind of flag, its count and an example reason, in one sentence."""
    said = [(k, n, why.removeprefix(f"{k}: ")) for k, n, why in flag_summary(table)]
    return "; ".join(f"{kind} ({n} run(s), e.g. {why})" for kind, n, why in said)


def _causes(kinds: list[str]) -> list[str]:
    """The kinds, each N > 1 row's "N = 1 run flagged (kinds)" read as the kinds of that
    N = 1 run (the flag it inherited, not a cause of its own)."""
    out: list[str] = []
    for kind in kinds:
        inner = re.fullmatch(r"N = 1 run flagged \((.*)\)", kind)
        out += inner.group(1).split(", ") if inner else [kind]
    return list(dict.fromkeys(out))


def remedy(kinds: list[str]) -> str:
    """What to do about flags of ``kinds``, one clause per kind of cause."""
    kinds = _causes(kinds)
    broken = [k for k in kinds if k.startswith(BROKEN_KINDS)]
    noise = [k for k in kinds if k.startswith(NOISE_KINDS)]
    other = [k for k in kinds if k not in broken and k not in noise]
    parts = [FIX_LOSS] if broken else []
    if noise:
        parts.append(QUIETER)
    if other:
        parts.append(f"bench again as the flag says ({', '.join(other)})")
    if noise or other:
        parts.append(("or " if parts else "") + ALLOW)
    said = ", ".join(parts)
    return said[:1].upper() + said[1:]


def flagged_help(table: Any) -> str:
    """The sentence a refusal ends with when flagged runs were left out and one of them was
    an N = 1 run ("" otherwise: allowing them would not give the run that is missing)."""
    flagged = table["flagged"].fillna(False).astype(bool) & (table["status"] == "ok")
    if not (flagged & (table["accelerators"] == 1)).any():
        return ""
    kinds = [kind for kind, _, _ in flag_summary(table)]
    return (
        f". {int(flagged.sum())} run(s) were left out as flagged: {flag_lines(table)}. "
        f"{remedy(kinds)}"
    )
