"""``advise -f json``: the advice's records as plain JSON (docs/advice.md, docs/schemas.md),
each record field by field (:func:`plain`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from enum import Enum
from typing import TypeAlias

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.answer import AdviceView, lines
from gpuscale.advice.explain.phrasebook import said, sentence
from gpuscale.advice.memory import STRATEGIES, MemoryCheck
from gpuscale.advice.types import FindingKind, maybe
from gpuscale.bench.support import Support
from gpuscale.tables.json_depth import JSON

# Each record field by field, but where ``JSON_KEYS`` names the record (by class name: explain
# imports no model module) and the key: a value read from an attribute path ("device.per_node"),
# derived by a function of the record (``OMIT``: none), a group of keys (a dict) or a nested
# record's keys in its place (:class:`Merged`); None leaves the field out, as does a path
# reading it.
OMIT = object()


@dataclass(frozen=True, slots=True)
class Merged:
    """The keys of the record at ``path`` in its parent's place (those of ``empty`` None
    where there is none)."""

    path: str
    empty: tuple[str, ...] = ()


Key: TypeAlias = "str | Callable[..., object] | Merged | dict[str, Key] | None"


def plain(value: object) -> JSON:
    """``value`` as ``-f json`` gives it (``JSON_KEYS``)."""
    if isinstance(value, Enum):
        return value.value
    if is_dataclass(value) and type(value).__str__ is not object.__str__:
        return str(value)  # a measure: its words
    if is_dataclass(value):
        return laid_out(value, JSON_KEYS.get(type(value).__name__, {}), own=True)
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value  # type: ignore[return-value]


def laid_out(record: object, keys: dict[str, Key], *, own: bool = False) -> dict[str, JSON]:
    """``keys`` over ``record``, after its ``own`` fields that ``keys`` neither names nor
    reads by a path."""
    paths = [how.path if isinstance(how, Merged) else how for how in keys.values()]
    read = {*keys, *(path.split(".")[0] for path in paths if isinstance(path, str))}
    named = [f.name for f in fields(record)] if own else []  # type: ignore[arg-type]
    found = {name: plain(getattr(record, name)) for name in named if name not in read}
    for key, how in keys.items():
        if isinstance(how, Merged):
            inner = _read(record, how.path)
            found.update(dict.fromkeys(how.empty) if inner is None else plain(inner))
        elif isinstance(how, dict):
            found[key] = laid_out(record, how)
        elif how is not None:
            value = how(record) if callable(how) else _read(record, how)
            if value is not OMIT:
                found[key] = plain(value)
    return found


def _read(record: object, path: str) -> object:
    for name in path.split("."):
        record = None if record is None else getattr(record, name)
    return record


def _where_set(path: str, then: Callable[..., object] = plain) -> Callable[..., object]:
    """The value at ``path``, none where unset (None or empty)."""

    def read(record: object) -> object:
        value = _read(record, path)
        return OMIT if value is None or value == () else then(value)

    return read


def _named(path: str, *names: str) -> Callable[..., dict[str, object] | None]:
    """The tuple at ``path`` as an object of ``names`` (None: none)."""

    def read(record: object) -> dict[str, object] | None:
        found = _read(record, path)
        return None if found is None else dict(zip(names, found, strict=True))  # type: ignore[call-overload]

    return read


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


JSON_KEYS: dict[str, dict[str, Key]] = {
    "Quantity": {"at": _where_set("at", dict), "copies_ms": _where_set("copies_ms")},
    "Assumption": {
        "source": "source",
        "basis": lambda a: said(a.basis),
        "measure": "measure",
        "term": "name",  # in words; ``kind`` its id
        "quantity": Merged("quantity", empty=("value", "low", "high", "unit")),
        "said": "value",
        "kind": "term",
        "strategy": None,
    },
    "Activations": {"total_gb": "total_gb"},
    "MemoryAt": {"gathered_gb": _where_set("gathered_gb")},
    "MemoryCheck": {
        "optimizer": "state.optimizer",
        "precision": "state.precision",
        "state_bytes_per_param": "state.bytes_per_param",
        "state_source": "state.source",
        "device": "device.memory.family",
        "capacity_gb": "device.memory.gb",
        "capacity_gib": "device.memory.gib",
        "capacity_source": "device.memory.source",
        "device_assumed": lambda m: m.device.assumed or None,
        "devices_per_node": "device.per_node",
        "activations_counted": _by_devices,
        "activations_by_count": None,
        "fewest": None,
        "fewest_devices": lambda m: dict(m.fewest),
        "fits_from": lambda m: {s: m.fits_from(s) for s in STRATEGIES},
        "fallback": _named("fallback", "strategy", "devices"),
        "gathered_gb": _where_set("gathered_gb"),  # a shape's only
        "per_device": "rows",
        "searched": None,
    },
    "MeasuredCount": {
        **dict.fromkeys(("base", "runs", "trusted")),
        "trusted_runs": lambda c: c.of(c.trusted),
    },
    "Decision": {"accelerators": "count"},  # None: withheld, or no count holds the model
    "FixedCost": {
        "basis": lambda f: said(f.basis),
        "at_batch": None,
        "measure": "measure",
        "below_prior_ms": "below_prior_ms",
    },
    "FamilyBasis": {
        **dict.fromkeys(("compute", "opt_ms")),
        "optimizer_ms": _named("opt_ms", "fixed", "per_mparam"),  # (ms, ms per million)
        "ddp_ms": _named("ddp_ms", "fixed", "per_mparam"),
    },
}
# ``disagreements``: a measured count as what the row now says (the runs' range as its
# interval, none from one run), the model's prediction it replaced, and the runs read
DISAGREEMENT: dict[str, Key] = {
    **{key: key for key in ("accelerators", "batch_per_device", "accum", "weak_scaling")},
    "measured": {
        "speedup": "measured_speedup",
        "speedup_low": "measured_low",
        "speedup_high": "measured_high",
        "no_interval": "no_interval",
    },
    "predicted": {
        "speedup": "predicted_speedup",
        "speedup_low": "predicted_low",
        "speedup_high": "predicted_high",
    },
    "evidence": {
        "runs": "speedups",
        "trusted_runs": lambda c: c.of(c.used),
        "left_out": lambda c: c.of(c.left_out),
        "why": "why",
        "bench_speedups": "speedups",
        "flags": "flags",
        "weak_evidence": "weak_evidence",
    },
}
# the shape finding's values that are the words' only (``memory`` has the activations)
SHAPE_WORDS = ("activations_gb", "checkpointing")
SHAPE_KEYS = {"seq_len": "seq_len_tokens", "units": "fsdp_units"}


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
    values = {SHAPE_KEYS.get(k, k): v for k, v in found[0].values if k not in SHAPE_WORDS}
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
            # this model beside the break-even (``records.BreakEven``)
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
        "disagreements": [laid_out(found, DISAGREEMENT) for found in result.disagreements],
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
