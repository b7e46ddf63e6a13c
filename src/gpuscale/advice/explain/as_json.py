"""``advise -f json``: the advice's records as plain JSON, field by field (docs/schemas.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from enum import Enum
from importlib import resources
from typing import TypeAlias

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.answer import AdviceView, lines
from gpuscale.advice.explain.phrasebook import said, sentence
from gpuscale.advice.memory import STRATEGIES, MemoryCheck
from gpuscale.advice.types import FindingKind, maybe
from gpuscale.bench.support import Support
from gpuscale.tables.json_depth import JSON

# Each record field by field, but where ``data/advice_json.json`` names the record and the key
# (its "about" says how); keys left out where unset (None or empty): a term's value per count,
# DDP's bucket copies, what fully sharded strategies hold whole (a shape's only).
_KEYS = json.loads((resources.files("gpuscale") / "data" / "advice_json.json").read_text())
JSON_KEYS, DISAGREEMENT, SHAPE = _KEYS["records"], _KEYS["disagreement"], _KEYS["shape"]
UNSET_LEFT_OUT = ("at", "copies_ms", "gathered_gb")
Key: TypeAlias = "str | list[str] | dict[str, Key] | None"


def plain(value: object) -> JSON:
    """``value`` as ``-f json`` gives it (``JSON_KEYS``)."""
    if isinstance(value, Enum):
        return value.value
    if is_dataclass(value) and type(value).__str__ is not object.__str__:
        return str(value)  # a measure: its words
    if is_dataclass(value):
        name = type(value).__name__
        return laid_out(value, JSON_KEYS.get(name, {}), name, own=True)
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
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


# the keys derived by a function of their record ("=" in the data file)
DERIVED: dict[str, Callable[..., object]] = {
    "Quantity.at": lambda q: dict(q.at),
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
    "disagreement.evidence.trusted_runs": lambda c: c.of(c.used),
    "disagreement.evidence.left_out": lambda c: c.of(c.left_out),
}


def _shape(cal: Calibration) -> dict[str, JSON] | None:
    """The transformer's shape advised on (None: none given), what it gives, and the
    activations one device holds (None: its memory unknown)."""
    found = [
        f
        for f in cal.said.sources
        if not isinstance(f, str) and f.kind is FindingKind.TRANSFORMER_SHAPE
    ]
    if not found:
        return None
    words, renamed = SHAPE["words_only"], SHAPE["renamed"]
    values = {renamed.get(k, k): v for k, v in found[0].values if k not in words}
    memory = cal.machine.memory
    held = memory.activations_counted if memory is not None else None
    # the shape says its sequence and layers
    activations = maybe(lambda a: _without(plain(a), "seq_len", "layers"), held)
    return {**values, "source": values["source"] or None, "activations": activations}


def _scaling(result: AdviceView) -> dict[str, JSON]:
    """How the counts were compared, the fixed costs behind it, and the ``fixed`` term at the
    focus count in parts."""
    cal, costs = result.calibration, result.fixed_term
    kept = cal.run.kept_global_batch
    weak = cal.search.convergence is None or cal.run.scaling == "weak"
    fixed = cal.model.fixed
    return {
        "kind": "strong" if kept is not None else ("weak" if weak else "search"),
        "global_batch_kept": kept,
        "fixed_cost": maybe(lambda f: {**plain(f), "optimizer_ms": costs.optimizer_ms}, fixed),
        "one_device": plain(result.one_device),
        "fixed_term_ms": {
            "optimizer": costs.optimizer_excess_ms,
            "forward_backward": costs.forward_backward_excess_ms,
        },
    }


# the break-even's own keys in ``recommendation`` (the rest: ``break_even_this_model``)
BREAK_EVEN_OWN = ("compute_ms_per_grad_mb", "params", "target_efficiency_params")


def advice_document(result: AdviceView) -> dict[str, JSON]:
    """``advise -f json``: the recommendation, the decision's fields, how the counts were
    compared, every assumption, the explanation and the predictions (records)."""
    d, priced = result.decision, result.calibration.search.price_per_device_hour is not None
    return {
        "recommendation": {
            "model": result.calibration.model.name,
            "strategy": result.calibration.run.strategy,
            "accelerators": d.count,  # None: withheld, an assumed term's range moves it
            "withheld_by": d.withheld_by,  # that term: what to give or measure first
            "fastest": d.fastest,
            "efficient": result.picks.efficient,
            "cheapest": result.picks.cheapest,
            "equilibrium": result.picks.equilibrium,
            "equilibrium_numbers": plain(result.picks.numbers),
            "break_even_compute_ms_per_grad_mb": result.break_even.compute_ms_per_grad_mb,
            "break_even_params": result.break_even.params,
            "target_efficiency_params": result.break_even.target_efficiency_params,
            # this model beside the break-even (``derived.BreakEven``)
            "break_even_this_model": _without(plain(result.break_even), *BREAK_EVEN_OWN),
            "break_even_family": maybe(plain, result.calibration.model.family),
            "dominant_term": d.limit.dominant_term,
            # what the step's terms rest on: "flagged", "weak" or "firm" runs, None: numbers
            "terms_evidence": _terms_evidence(result.calibration.runs.evidence),
            "speedup_capped_by": d.limit.cap,
            "warnings": list(d.warnings),
            "measure_first": d.settle,
            "caveats": list(result.caveats),
        },
        "disagreements": [
            laid_out(found, DISAGREEMENT, "disagreement") for found in result.disagreements
        ],
        "measured": plain(result.measured_counts),
        # memory and shape: absent where one device holds the model, or without a shape
        **({"memory": plain(result.memory)} if result.memory is not None else {}),
        **({"shape": shape} if (shape := _shape(result.calibration)) is not None else {}),
        "decision": plain(d),
        "scaling": _scaling(result),
        "assumptions": plain(result.assumptions),
        "answer": lines(result),  # the default view's lines, before its table
        "explanation": result.explanation,
        "predictions": result.predictions.to_dict("records"),
        # --price is in any currency
        "cost_unit": sentence("cost_unit") if priced else None,
        "weak_scaling": maybe(pd.DataFrame.to_dict, result.alternative, "records"),
    }


def _terms_evidence(found: Support | None) -> str | None:
    if found is None:
        return None
    return "flagged" if found.untrusted else ("weak" if found.weak else "firm")
