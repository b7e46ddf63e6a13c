"""Where a plan's count compares its family with others: like with like includes hardware
generation and software stack, so a count whose level or whose faster-than-linear
support comes from other results says when those cross either, from what to what
(``tables.plan``'s ``crosses`` columns).

Two comparisons borrow from other results: a family that never ran the workload (class
iii) takes its level from the families that ran it, through its speed on its other
workloads; a count planned faster than linear is supported by a family's measured pair
of counts (``linear.judged``), possibly another family's. The hardware generation is the
product's architecture (``hardware.accelerators.generation``: A100-SXM4-40GB and
A100-SXM4-80GB are both Ampere, H100 is Hopper); a submitter is one software stack (its
framework and container), as the plan's ``rests_on`` counts it.
"""

from __future__ import annotations

from gpuscale.hardware.accelerators import generation
from gpuscale.planning.records import Facts, Fits, SystemEntry, systems_of
from gpuscale.quantities import joined

GENERATION = "hardware generation"
SOFTWARE = "software stack"
# the row's columns (``tables.plan.PLAN_SCHEMA``), each "" where nothing is crossed
CROSSING_COLUMNS = (
    "crosses",
    "crosses_generation_from",
    "crosses_generation_to",
    "crosses_software_from",
    "crosses_software_to",
)
NONE: dict[str, str] = dict.fromkeys(CROSSING_COLUMNS, "")


def _submitters(systems: list[SystemEntry]) -> list[str]:
    return sorted({str(s[1]) for s in systems})


def _crossing(
    generation_from: list[str], generation_to: list[str], own: list[str], theirs: list[str]
) -> Facts:
    """The crossing record: a generation crossed where none of ``generation_to`` is one of
    ``generation_from``; a software stack where a submitter of ``theirs`` is none of ``own``
    (``to``: those submitters)."""
    generations = list(dict.fromkeys(generation_to))
    crossed_gen = bool(generations) and not set(generations) & set(generation_from)
    stacks = [s for s in theirs if s not in own]
    which = [GENERATION] * crossed_gen + [SOFTWARE] * bool(stacks)
    return {
        "crosses": ", ".join(which),
        "crosses_generation_from": ", ".join(generation_from) if crossed_gen else "",
        "crosses_generation_to": ", ".join(generations) if crossed_gen else "",
        "crosses_software_from": ", ".join(own) if stacks else "",
        "crosses_software_to": ", ".join(stacks) if stacks else "",
    }


def linear_crossing(fits: Fits, workload: str, family: str, verdict: Facts | None) -> Facts:
    """The crossing of a count's faster-than-linear support (``linear.judged``'s first
    supporting pair, the one its ``beyond_linear`` cell names) against the family planned:
    the pair's family's generation against the family's, the pair's submitters against the
    family's on the workload (none where it never ran it); :data:`NONE` where the count
    has no such support."""
    if not verdict or not verdict["supported"]:
        return dict(NONE)
    best = verdict["supported"][0]
    own = systems_of(fits["workloads"][workload]["families"].get(family))
    theirs = _submitters([best["low"], best["high"]])
    return _crossing([generation(family)], [generation(best["family"])], _submitters(own), theirs)


def borrowed_crossing(fits: Fits, workload: str, family: str) -> Facts:
    """The crossing of a level borrowed (class iii: ``family`` never ran ``workload``):
    the generations of the families that ran it against the family's (crossed where none
    is the family's), and their submitters against the family's on its other workloads
    (crossed where none of the family's submitters ran the workload, as
    ``words.borrowed_line`` says it); :data:`NONE` where the family ran it."""
    fit = fits["workloads"][workload]
    if family in fit["families"]:
        return dict(NONE)
    mine = [
        s
        for name, other in fits["workloads"].items()
        if name != workload
        for s in systems_of(other["families"].get(family))
    ]
    here = [s for f in fit["families"].values() for s in f["systems"]]
    theirs, own = _submitters(here), _submitters(mine)
    if set(theirs) & set(own):  # one of its submitters' stacks ran the workload
        theirs = []
    generations = sorted({generation(f) for f in fit["families"]})
    return _crossing([generation(family)], generations, own, theirs)


def merged(first: Facts, second: Facts) -> Facts:
    """Two crossings of one count (a borrowed level and a faster-than-linear support, {}
    where it has none) as one: each column's names joined once, in order."""
    out = {}
    for column in CROSSING_COLUMNS:
        names = [n for c in (first, second) for n in c.get(column, "").split(", ") if n]
        out[column] = ", ".join(dict.fromkeys(names))
    return out


def crossing_words(crossing: Facts) -> str:
    """``crosses hardware generation (Ampere to Hopper) and software stack (Dell to
    NVIDIA)``; "" where nothing is crossed. Many submitters are counted, not listed."""
    parts = []
    if crossing.get("crosses_generation_to"):
        parts.append(
            f"{GENERATION} ({crossing['crosses_generation_from']} to "
            f"{_names(crossing['crosses_generation_to'])})"
        )
    if crossing.get("crosses_software_to"):
        parts.append(
            f"{SOFTWARE} ({_names(crossing['crosses_software_from'], 'submitter') or 'none'} to "
            f"{_names(crossing['crosses_software_to'], 'submitter')})"
        )
    return f"crosses {joined(parts)}" if parts else ""


def _names(text: str, kind: str = "") -> str:
    """Names as words: up to three joined, more counted (``5 submitters``)."""
    names = [n for n in text.split(", ") if n]
    if kind and len(names) > 3:
        return f"{len(names)} {kind}s"
    return joined(names)
