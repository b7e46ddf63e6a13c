"""The findings of Cortés, Juiz and Bermejo's study (``CITATION``) as records, each in the
fixed words a statement says it with, the thresholds that give those words a meaning
("fast", "around", "most linearly"), and how a verdict on a finding is said (a
``StudyStatement``); ``gpuscale.analysis.study`` tests each finding against the data."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

CITATION = (
    'Cortés, Juiz and Bermejo, "Estudio de la eficiencia en la escalabilidad de GPUs para '
    'el entrenamiento de Inteligencia Artificial", arXiv 2509.03263 (2025)'
)
# A drop "fast" or "sharp": more than this share of E' lost per doubling of the count.
FAST_LOSS_PER_DOUBLING = 0.10
AROUND = 0.05  # "most efficient around N": E' at N within 5% of the best
WINDOW = (32, 64)  # where "most linearly" is compared (counts every workload has)


@dataclass(frozen=True, slots=True)
class Finding:
    """One finding of the study in its fixed words: ``name`` (the statement's ``finding``),
    ``claim`` and ``verb`` (how "The study finds ..." says it; "attributes ..." for
    ``WHY``); for a finding :func:`judged` part by part, ``shows`` (what the table shows, a
    template of the values its test measures and of the thresholds) and ``parts`` (the
    words each named part is said with: where it holds, where it does not)."""

    name: str
    claim: str
    verb: str = "finds"
    shows: str = ""
    parts: dict[str, tuple[str, str]] = field(default_factory=dict)


FALLS = Finding(
    "efficiency falls as accelerators are added",
    "per-accelerator efficiency falling as accelerators are added",
    shows="Within {family} (against its own {reference}-accelerator reference), the fastest "
    "system per count goes from E' {e_from:.2f} at {n_from:,} to {e_to:.2f} at {n_to:,} "
    "accelerators (rank correlation with the count {rho:.2f})",
    parts={"falls": ("", "")},
)
MASSIVE = Finding(
    "massive systems are the fastest but the least efficient",
    "massive systems the fastest but the least efficient",
    shows="Within {family}, the largest ({n:,} accelerators) {fastest} the fastest "
    "({minutes:.3g} min) and {least} the lowest E' ({e:.2f}; the family's range {span})",
    parts={"fastest": ("is", "is not"), "least": ("has", "does not have")},
)
WHY = Finding(
    "the fall is communication and synchronisation",
    "the loss of efficiency to communication and synchronisation between nodes",
    "attributes",
)
BERT = Finding(
    "most efficient around 8 accelerators, dropping past 16",
    "BERT most efficient around 8 accelerators and dropping past 16",
    # E' printed to the ``k`` decimals that show 8's on its side of (1 - AROUND) x the best
    shows="Within {family}, the best E' is {best:.{k}f} at {n_best:,}; the fastest system at "
    "8 keeps {e8:.{k}f} ({around} the best), at 16 {e16:.2f} and beyond {beyond}",
    parts={
        "around": ("within {AROUND:.0%} of", "more than {AROUND:.0%} below"),
        "drops": ("", ""),
    },
)
LLAMA = Finding(
    "E' above 1 at 4-8 accelerators, falling fast from 16 on",
    "Llama2 70B LoRA with E' above 1 at 4-8 accelerators, falling fast from 16 on",
    shows="Within {family}, E' at 4-8 is {small} {above}; from {n_from:,} to {n_to:,} it is "
    "{reach}, {loss:.0%} lost per doubling ({fast} than {FAST_LOSS_PER_DOUBLING:.0%})",
    parts={
        "above": (
            "(above 1: systems faster than the reference at its count, not super-linear scaling)",
            "(not above 1)",
        ),
        "fast": ("more", "less"),
    },
)
STABLE_DIFFUSION = Finding(
    "loses efficiency sharply past 8 accelerators",
    "Stable Diffusion losing efficiency sharply past 8 accelerators",
    shows="Within {family}, the fastest system's E' goes from {e8:.2f} at 8 to {e16:.2f} at "
    "16, {loss:.0%} lost in one doubling (sharp: more than {FAST_LOSS_PER_DOUBLING:.0%})",
    parts={"sharp": ("", "")},
)
MOST_LINEAR = Finding(
    "RetinaNet scales the most linearly of the four",
    "RetinaNet scaling the most linearly of the four",
)


@dataclass(frozen=True, slots=True)
class StudyStatement:
    """One finding of the study set against the data: ``verdict`` is ``agrees``,
    ``partly``, ``disagrees`` or ``not testable``; ``text`` says it with the numbers."""

    round: str
    workload: str
    finding: str
    verdict: str
    text: str


def statement(table: pd.DataFrame, finding: Finding, verdict: str, text: str) -> StudyStatement:
    return StudyStatement(
        str(table["round"].iloc[0]), str(table["workload"].iloc[0]), finding.name, verdict, text
    )


def said(finding: Finding) -> str:
    """ "The study finds <claim>." (its ``verb``: "attributes" for ``WHY``)."""
    return f"The study {finding.verb} {finding.claim}."


def untestable(table: pd.DataFrame, finding: Finding, lacking: str) -> StudyStatement:
    """A finding whose test the data cannot feed: the reason (what the data lacks, from
    ``gpuscale.analysis.study_data``) said, never a verdict guessed."""
    text = f"{said(finding)} {lacking[0].upper()}{lacking[1:]}: not testable."
    return statement(table, finding, "not testable", text)


# The thresholds a finding's words may name
_THRESHOLDS = {"AROUND": AROUND, "FAST_LOSS_PER_DOUBLING": FAST_LOSS_PER_DOUBLING}


def judged(
    table: pd.DataFrame, finding: Finding, parts: dict[str, bool], **values: object
) -> StudyStatement:
    """The verdict on a finding made of ``parts`` (each of ``finding.parts`` by name, held
    or not): ``agrees`` when every part holds, ``disagrees`` when none does, ``partly``
    between. Said as "The study finds <claim>. <shows>: verdict.", ``finding.shows`` filled
    with ``values`` and each part's words (a part ``finding.parts`` lacks: KeyError)."""
    verdict = verdict_of(sum(bool(holds) for holds in parts.values()), len(parts))
    words = {name: finding.parts[name][not holds] for name, holds in parts.items()}
    words = {name: text.format(**_THRESHOLDS) for name, text in words.items()}
    shows = finding.shows.format(**values, **words, **_THRESHOLDS)
    return statement(table, finding, verdict, f"{said(finding)} {shows}: {verdict}.")


def verdict_of(held: int, parts: int) -> str:
    """``agrees`` where all ``parts`` of a finding hold, ``disagrees`` where none does,
    ``partly`` between."""
    return {0: "disagrees", parts: "agrees"}.get(held, "partly")
