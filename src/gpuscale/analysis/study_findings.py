"""The findings of Cortés, Juiz and Bermejo's study (``CITATION``) as records, each in the
fixed words a statement says it with, the thresholds that give those words a meaning
("fast", "around", "most linearly"), and how a verdict on a finding is said (a
``StudyStatement``); ``gpuscale.analysis.study`` tests each finding against the data."""

from __future__ import annotations

from dataclasses import dataclass

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
    ``WHY``)."""

    name: str
    claim: str
    verb: str = "finds"


FALLS = Finding(
    "efficiency falls as accelerators are added",
    "per-accelerator efficiency falling as accelerators are added",
)
MASSIVE = Finding(
    "massive systems are the fastest but the least efficient",
    "massive systems the fastest but the least efficient",
)
WHY = Finding(
    "the fall is communication and synchronisation",
    "the loss of efficiency to communication and synchronisation between nodes",
    "attributes",
)
BERT = Finding(
    "most efficient around 8 accelerators, dropping past 16",
    "BERT most efficient around 8 accelerators and dropping past 16",
)
LLAMA = Finding(
    "E' above 1 at 4-8 accelerators, falling fast from 16 on",
    "Llama2 70B LoRA with E' above 1 at 4-8 accelerators, falling fast from 16 on",
)
STABLE_DIFFUSION = Finding(
    "loses efficiency sharply past 8 accelerators",
    "Stable Diffusion losing efficiency sharply past 8 accelerators",
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


def judged(
    table: pd.DataFrame, finding: Finding, parts: tuple[bool, ...], found: str
) -> StudyStatement:
    """The verdict on a finding made of ``parts``: ``agrees`` when every part holds,
    ``disagrees`` when none does, ``partly`` between. Said as "The study finds
    <claim>. ``found``: verdict." (``found``: what the table shows, within the family)."""
    verdict = verdict_of(sum(bool(part) for part in parts), len(parts))
    text = f"{said(finding)} {found}: {verdict}."
    return statement(table, finding, verdict, text)


def verdict_of(held: int, parts: int) -> str:
    """``agrees`` where all ``parts`` of a finding hold, ``disagrees`` where none does,
    ``partly`` between."""
    return {0: "disagrees", parts: "agrees"}.get(held, "partly")
