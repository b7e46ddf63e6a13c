"""What the bench flagged, as findings: each kind of flag with its runs and an example
(:func:`flags_seen`), the broken models (a loss not finite) left out
(:func:`broken_left_out`); the --allow-flagged warning and the refusals say them alike."""

from __future__ import annotations

from gpuscale.advice.types import Finding
from gpuscale.advice.types import FindingKind as K
from gpuscale.plausibility import detail

Broken = tuple[tuple[str, tuple[int, ...]], ...]  # models, each with its counts
Flags = tuple[tuple[str, int, str], ...]  # kind, runs, an example reason


def flags_seen(flags: Flags) -> tuple[Finding, ...]:
    """Each kind of flag with its runs and an example reason (its words after the kind)."""
    return tuple(Finding.of(K.FLAG_SEEN, flag=k, n=n, why=detail(why)) for k, n, why in flags)


def broken_left_out(broken: Broken) -> Finding | None:
    """The broken models (a loss not finite at the counts beside each) left out; None where
    none is."""
    if not broken:
        return None
    return Finding.of(K.BROKEN_LEFT_OUT, models=broken_models(broken))


def broken_models(broken: Broken) -> tuple[Finding, ...]:
    """Each broken model with the counts whose loss was not finite."""
    return tuple(Finding.of(K.BROKEN_MODEL, model=m, on=on) for m, on in broken)
