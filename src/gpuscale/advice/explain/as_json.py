"""``-f json``: the advice's records field by field (:func:`advice_document`), the few keys
renamed, derived or left out declared once as data (``data/advice_json.json``; the keys are
named in docs/schemas.md)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import TypeAlias, TypeVar

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.answer import (
    AdviceView,
    lines,
    link_read,
    moved_by,
)
from gpuscale.advice.explain.explanation import scaling
from gpuscale.advice.explain.phrasebook import (
    measured,
    said,
    sentence,
)
from gpuscale.advice.types import Finding, FindingKind, Measure, maybe, read_data
from gpuscale.hardware.memory import STRATEGIES, MemoryCheck
from gpuscale.tables.json_depth import JSON

# The document and each record field by field, but where ``data/advice_json.json`` names the
# record and the key (its "about" says how)
_KEYS = read_data("advice_json.json")
JSON_KEYS, DISAGREEMENT = _KEYS["records"], _KEYS["disagreement"]
SHAPE, TOPOLOGY = _KEYS["shape"], _KEYS["topology"]  # each: words_only, renamed (``_laid``)
UNSET_LEFT_OUT = _KEYS["unset_left_out"]
Key: TypeAlias = "str | list[str] | dict[str, Key] | None"
V = TypeVar("V")  # a finding's values as laid out (``_laid``)


def plain(value: object) -> JSON:
    """``value`` as ``-f json`` gives it (``JSON_KEYS``)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Measure):
        return measured(value)  # its words
    if is_dataclass(value) and type(value).__str__ is not object.__str__:
        return str(value)  # a record said whole
    if is_dataclass(value):
        name = type(value).__name__
        return laid_out(value, JSON_KEYS.get(name, {}), name, own=True)
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, pd.DataFrame):
        return plain(value.to_dict("records"))
    return value  # type: ignore[return-value]


def laid_out(
    record: object, keys: dict[str, Key], where: str, *, own: bool = False
) -> dict[str, JSON]:
    """``keys`` over ``record`` (``where`` in the data file), after its ``own`` fields that
    ``keys`` neither names nor reads by a path."""
    paths = [how[0] if isinstance(how, list) else how for how in keys.values()]
    read = {*keys, *(path.split(".")[0] for path in paths if isinstance(path, str))}
    named = [f.name for f in fields(record)] if own else []  # type: ignore[arg-type]
    found = {name: plain(getattr(record, name)) for name in named if name not in read}
    for key, how in keys.items():
        if isinstance(how, list):
            inner = _read(record, how[0])
            found.update(dict.fromkeys(how[1:]) if inner is None else plain(inner))
        elif isinstance(how, dict):
            found[key] = laid_out(record, how, f"{where}.{key}")
        elif how == "=":
            found[key] = plain(DERIVED[f"{where}.{key}"](record))
        elif how is not None:
            found[key] = plain(_read(record, how))
    unset = (None, [], {})
    return {k: v for k, v in found.items() if k not in UNSET_LEFT_OUT or v not in unset}


def _read(record: object, path: str) -> object:
    for name in path.split("."):
        record = None if record is None else getattr(record, name)
    return record


def _named(found: tuple[object, ...] | None, *names: str) -> dict[str, object] | None:
    return None if found is None else dict(zip(names, found, strict=True))


def _by_devices(check: MemoryCheck) -> dict[str, object] | None:
    """The activations counted at one device's micro-batch and at each count's."""
    counted = check.activations_counted
    if counted is None:
        return None
    by_devices = [
        {"devices": n, "micro_batch": a.micro_batch, "total_gb": a.total_gb}
        for n, a in check.activations_by_count
    ]
    # the check says the activations' source (``activations_source``)
    return {**_without(plain(counted), "source"), "by_devices": by_devices}


def _without(found: JSON, *keys: str) -> dict[str, JSON]:
    return {key: value for key, value in found.items() if key not in keys}  # type: ignore[union-attr]


def _laid(
    values: Iterable[tuple[str, V]], words_only: Collection[str], renamed: Mapping[str, str]
) -> dict[str, V]:
    """A finding's ``values`` as ``data/advice_json.json`` lays them out (``SHAPE``,
    ``TOPOLOGY``): less those its words alone say, the rest renamed."""
    return {renamed.get(k, k): v for k, v in values if k not in words_only}


def _shape(cal: Calibration) -> dict[str, JSON] | None:
    """The transformer's shape advised on (None: none given), what it gives, and the
    activations one device holds (None: its memory unknown)."""
    found = cal.said.source(FindingKind.TRANSFORMER_SHAPE)
    if found is None:
        return None
    values = _laid(found.values, **SHAPE)
    held = getattr(cal.machine.memory, "activations_counted", None)  # None: memory unknown
    # the shape says its sequence and layers
    activations = maybe(lambda a: _without(plain(a), "seq_len", "layers"), held)
    return {**values, "source": values["source"] or None, "activations": activations}


def _topology(cal: Calibration) -> dict[str, JSON] | None:
    """The link read from a topology: its ring's link class and its slowest pair's, the
    bus bandwidth, each count's ring of one node (``rings``: devices, GPUs, link class,
    preset, bus bandwidth) and the GPUs of a faster ring (``better``: the same, with the
    ``CUDA_VISIBLE_DEVICES`` and the first GPUs' figures); None where none was read."""
    found = link_read(cal)
    if found is None:
        return None

    def keyed(f: Finding, **more: JSON) -> dict[str, JSON]:
        laid = _laid({**more, **dict(f.values)}.items(), **TOPOLOGY)
        return {k: plain(v) for k, v in laid.items()}

    def each(rings: tuple[Finding, ...]) -> list[dict[str, JSON]]:  # a ring's devices: its GPUs
        return [keyed(f, devices=f.size("gpus")) for f in rings]

    values = {"file": found["file"], **keyed(found), "rings": each(found.findings("rings"))}
    values |= {"better": each(found.findings("better"))}  # after the rings, as the finding says
    values["ring_link"] = values["ring_link"] or values["slowest_link"]  # None: the same
    return values


def _terms_evidence(advice: AdviceView) -> str | None:
    """What the step's terms rest on: "flagged", "weak" or "firm" runs (None: numbers)."""
    found = advice.calibration.runs.evidence
    if found is None:
        return None
    return "flagged" if found.untrusted else ("weak" if found.weak else "firm")


# the keys derived by a function of their record or of the advice ("=" in the data file)
DERIVED: dict[str, Callable[..., object]] = {
    "Quantity.at": lambda q: dict(q.at),
    "Assumption.said": lambda a: said(a.value),
    "Assumption.basis": lambda a: said(a.basis),
    "FixedCost.basis": lambda f: said(f.basis),
    "MemoryCheck.device_assumed": lambda m: m.device.assumed or None,
    "MemoryCheck.activations_counted": _by_devices,
    "MemoryCheck.fewest_devices": lambda m: dict(m.fewest),
    "MemoryCheck.fits_from": lambda m: {s: m.fits_from(s) for s in STRATEGIES},
    "MemoryCheck.fallback": lambda m: _named(m.fallback, "strategy", "devices"),
    "MeasuredCount.trusted_runs": lambda c: c.of(c.trusted),
    # (ms, ms per million parameters)
    "FamilyBasis.optimizer_ms": lambda f: _named(f.opt_ms, "fixed", "per_mparam"),
    "FamilyBasis.ddp_ms": lambda f: _named(f.ddp_ms, "fixed", "per_mparam"),
    # the runs the median is of: the trusted, or every run where all are flagged (``why``)
    "disagreement.evidence.runs_used": lambda c: c.of(c.used),
    "disagreement.evidence.left_out": lambda c: c.of(c.left_out),
    # this model beside the break-even (``derived.BreakEven``), less the keys said before it
    "document.recommendation.break_even_this_model": lambda a: _without(
        plain(a.break_even), "compute_ms_per_grad_mb", "params", "target_efficiency_params"
    ),
    "document.recommendation.model": lambda a: said(a.calibration.model.name),
    # DDP's gradient bucket (MiB): the one given, else benched, else DDP's 25; none sharded
    "document.recommendation.bucket_mb": lambda a: (
        a.calibration.run.bucket_mb if a.calibration.run.strategy == "ddp" else None
    ),
    # every assumed term whose range moves the count (``withheld_by``: the first)
    "document.recommendation.moved_by": lambda a: moved_by(a.decision),
    "document.recommendation.terms_evidence": _terms_evidence,
    "document.disagreements": lambda a: [
        laid_out(found, DISAGREEMENT, "disagreement") for found in a.disagreements
    ],
    "document.shape": lambda a: _shape(a.calibration),
    "document.topology": lambda a: _topology(a.calibration),
    "document.scaling.kind": lambda a: scaling(a.calibration),
    "document.scaling.fixed_cost": lambda a: maybe(
        lambda f: {**plain(f), "optimizer_ms": a.fixed_term.optimizer_ms}, a.calibration.model.fixed
    ),
    "document.answer": lines,  # the default view's lines, before its table
    # --price is in any currency
    "document.cost_unit": lambda a: maybe(
        lambda _: sentence("cost_unit"), a.calibration.search.price_per_device_hour
    ),
}


def advice_document(result: AdviceView) -> dict[str, JSON]:
    """``advise -f json``: the recommendation, the decision's fields, how the counts were
    compared, every assumption, the explanation and the predictions (records)."""
    return laid_out(result, _KEYS["document"], "document")
