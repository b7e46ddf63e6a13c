"""The advice's words are data: every kind of finding src/ names has its template in
``data/advice_findings.json`` (``FindingKind`` is built from its keys) and no template is
left without a use; every change a decision can name has one remedy row with both its
wordings (``data/advice_phrases.json``)."""

from __future__ import annotations

import re
from pathlib import Path
from string import Formatter

from gpuscale.advice.explain.phrasebook import (
    CHANGES,
    FINDINGS,
    PHRASES,
    SENTENCES,
    STRATEGIES,
    TERMS,
)
from gpuscale.advice.model.priors import MODEL_PHRASES
from gpuscale.advice.search.derive import OVERHEADS
from gpuscale.advice.types import STOPPED

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuscale"


def kinds_named_in_src() -> set[str]:
    """The kinds src/ names: ``FindingKind.X``, or ``K.X`` where imported as ``K``."""
    named: set[str] = set()
    for path in SRC.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        alias = "K" if "FindingKind as K" in text else "FindingKind"
        found = re.findall(rf"\b(?:FindingKind|{alias})\.([A-Z][A-Z0-9_]*)\b", text)
        named |= {name.lower() for name in found}
    return named


def test_every_kind_named_has_a_template_and_every_template_is_named() -> None:
    kinds = {k for k in FINDINGS if not k.startswith("_")}
    named = kinds_named_in_src()
    assert named == kinds, (named - kinds, kinds - named)
    for kind in kinds:
        assert FINDINGS[kind]["text"] and FINDINGS[kind]["what"], kind


def test_a_template_names_only_fragments_it_holds() -> None:
    for kind, template in FINDINGS.items():
        if kind.startswith("_"):
            continue
        texts = [t for t in template.values() if isinstance(t, str)]
        texts += [t for v in template.values() if isinstance(v, dict) for t in v.values()]
        for text in texts:
            for _, name, spec, _ in Formatter().parse(text):
                assert name != "what", kind  # the kind's description, never said
                fragment = (spec or "").partition("~")[2]
                if name and spec and spec.split("~")[0] in ("pick", "opt", "items"):
                    # its own, else one every template shares (as ``Phrasing`` reads them)
                    assert fragment in {**PHRASES, **template}, (kind, name, fragment)


def test_every_change_has_one_remedy_row_in_both_views() -> None:
    changes = {*STOPPED, "compute", "convergence", "uncertain", "memory"}
    assert set(map(str, OVERHEADS)) == set(TERMS) and not set(TERMS) & set(CHANGES)
    assert changes <= set(CHANGES), changes - set(CHANGES)
    for change, row in {**TERMS, **CHANGES}.items():
        assert row["short"] and row["full"], change


def test_every_strategy_names_its_collectives() -> None:
    rows = {tuple(sorted(row)) for row in STRATEGIES.values()}
    assert len(rows) == 1 and {"ddp", "fsdp", "zero2", "hybrid"} == set(STRATEGIES)


def test_a_sentence_names_only_fragments_it_holds() -> None:
    for key, row in SENTENCES.items():
        template = row if isinstance(row, dict) else {"text": row}
        for _, name, spec, _ in Formatter().parse(template["text"]):
            if name and spec and spec.split("~")[0] in ("pick", "opt", "items"):
                assert spec.partition("~")[2] in template, (key, name)


def test_every_model_phrase_names_its_values() -> None:
    # str.format templates the model fills by keyword: no positional ``{}`` to misfill
    for key, text in MODEL_PHRASES.items():
        names = [name for _, name, _, _ in Formatter().parse(text) if name is not None]
        assert all(name.isidentifier() for name in names), key
