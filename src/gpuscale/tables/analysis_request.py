"""How ``gpuscale analyze`` (and ``gpuscale.analysis.analyze``) analyses: one request,
each field's help (the option's) in its metadata. Pure Python: the CLI imports it at start;
``gpuscale.analysis`` exports it."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, fields

from gpuscale.quantities import agreeing, joined
from gpuscale.tables.analysis import DEFAULT_EFFICIENCY_THRESHOLD
from gpuscale.tables.checks import check_families, check_text
from gpuscale.tables.refusals import Range, check_ranges
from gpuscale.tables.requests import (
    FieldError,
    one_named,
    option,
    option_name,
    ref,
    repeatable_option,
    settle_choice,
)
from gpuscale.tables.round_requests import RoundSelection
from gpuscale.tables.spelling import suggested

BASES = ("expected", "measured")  # the samples the decomposition splits E' by
DIVISIONS = ("closed", "open", "all")
RULES = ("study", "family")  # the reference rules that are no SUBMITTER/SYSTEM_ID
MIN_BOOT, MAX_BOOT = 100, 100_000  # bootstrap resamples: too few to bound, too many to hold
MAX_K = 1_000  # clusters asked (lowered to the distinct systems there are, and said)
# Each number's range (low, high, low excluded) and its rule as the refusal says it; a
# resample each: memory grows with n_boot.
_RANGES: dict[str, Range] = {
    "threshold": (0, 1, True),
    "n_boot": (MIN_BOOT, MAX_BOOT, False),
    "k": (1, MAX_K, False),
    "seed": (0, 2.0**63, False),  # its exact bound below
}
_RULES = {
    "threshold": "must be a number above 0 and at most 1",
    "n_boot": f"must be from {MIN_BOOT} to {MAX_BOOT:,}",
    "k": f"must be a whole number from 1 to {MAX_K}",
    "seed": "must be a whole number from 0 to 2^63 - 1",
}


# The options analyze and report share, written once (their requests' fields).
DIVISION_HELP = (
    "closed (the rules' model and training), open (changes allowed: another model's times) "
    "or all (both on one curve)."
)
BASIS_HELP = (
    "Samples the decomposition splits E' by: expected (what the round's reference "
    "convergence points predict at each global batch; steadier) or measured (each "
    "result's own count)."
)


def reference_option() -> str:
    """The reference rule, as every request that analyses rounds takes it (``--reference``)."""
    return option(
        "study",
        names=("--reference", "-r"),
        help="study (fewest accelerators, slowest among them), family (the same rule within "
        "each accelerator family) or SUBMITTER/SYSTEM_ID.",
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class AnalysisOptions:
    """How to analyse. ``reference``: study, family or SUBMITTER/SYSTEM_ID;
    ``convergence_basis``: the samples the decomposition uses, ``expected`` (the RCPs' at
    each global batch) or ``measured`` (see ``gpuscale.analysis.decompose``). ``division``
    and ``families`` are resolved against the tables before (``--family`` is typed)."""

    reference: str = reference_option()
    threshold: float = option(
        DEFAULT_EFFICIENCY_THRESHOLD,
        help="E' threshold of the equilibrium criterion, as a fraction of the best E'.",
    )
    division: str | None = option("closed", help=DIVISION_HELP)
    availability: str | None = option(
        None, help="Keep systems whose availability contains this text (e.g. cloud)."
    )
    families: tuple[str, ...] | None = repeatable_option(
        str,
        names=("--family",),
        help="Keep only these accelerator families (repeatable).",
    )
    k: int | None = option(
        None,
        names=("-k", "--clusters"),
        help="Number of K-means clusters (default: best silhouette, 2..6).",
    )
    n_boot: int = option(2000, names=("--bootstrap",), help="Bootstrap resamples.")
    seed: int = option(0, help="Seed of K-means and the bootstrap.")
    convergence_basis: str = option("expected", help=BASIS_HELP)

    def __post_init__(self) -> None:
        # the filters' types as scaling_table checks them; the families' names are read
        # against the tables' own when analysed (a raw round's, ``H100`` the part they hold)
        check_text(self.availability, "availability", optional=True)
        object.__setattr__(self, "families", check_families(self.families))
        settle_reference(self)
        settle_choice(self, "convergence_basis", BASES)
        if self.division is not None:  # `clo` is closed; the data read need not be
            settle_choice(self, "division", DIVISIONS)
        # a value of another type (``n_boot="100"``) is a TypeError naming the field
        check_ranges(self, _RANGES, _RULES)
        if not 0 <= self.seed < 2**63:  # exact: 2^63 - 1 is no float
            raise FieldError("seed", self.seed, "must be a whole number from 0 to 2^63 - 1")


def settle_reference(request: AnalysisOptions) -> None:
    """A request's ``reference`` checked before any data is read: ``study`` or ``family``
    (any case) or ``SUBMITTER/SYSTEM_ID`` (matched against the data later);
    :class:`FieldError` otherwise."""
    value = request.reference
    rule = one_named(value, RULES) if isinstance(value, str) and "/" not in value else None
    if rule is not None:  # `FAMILY`, `fam`
        object.__setattr__(request, "reference", rule)
    elif not isinstance(value, str) or "/" not in value:
        close = difflib.get_close_matches(str(value).lower(), list(RULES), n=1)
        rule = f"must be study, family or SUBMITTER/SYSTEM_ID{suggested(close)}"
        if ROUND_NAME.fullmatch(str(value)):  # -r read as a round's flag: the round's option
            rule += f"; a round is chosen with {ref('round', value)}"
        raise FieldError("reference", value, rule)


# A round as people type it (v0.7, 4.1, v5.0.0): given to --reference, the round was meant
ROUND_NAME = re.compile(r"[vV]?\d+(\.\d+)+")


def unused_without_rounds(
    selection: RoundSelection, options: AnalysisOptions, decompose: bool = False
) -> str | None:
    """What ``analyze --bench`` alone says of the MLPerf analysis' options given (they
    choose what of the rounds is analysed, or ``decompose``, ``--decompose``, how their
    rows are shown, and no round was given), None where none was."""
    given = [f.name for f in fields(options) if getattr(options, f.name) != f.default]
    asked = (["benchmark"] if selection.benchmark else []) + given
    named = {f.name: option_name(f) for r in (RoundSelection, AnalysisOptions) for f in fields(r)}
    unused = [named[n] for n in asked] + (["--decompose"] if decompose else [])
    if not unused:
        return None
    return (
        f"{joined(unused)} {agreeing(len(unused), 'chooses', 'choose')} what of the MLPerf "
        "rounds is analysed or shown, and no round was given: "
        "add --round vX.Y (or a path) to analyse one beside the bench"
    )
