"""An advice as a command shows it: the JSON document of ``advise -f json`` (its fields
are the documented schema, docs/advice.md) and the terminal's view of the predictions.
"""

from __future__ import annotations

from typing import Any

from gpuscale.advice.explain import answer
from gpuscale.advice.explain.table_words import fixed_parts, optimizer_ms
from gpuscale.quantities import format_count
from gpuscale.tables.views import TableView

# The prediction columns a terminal shows (JSON and CSV carry them all).
ADVICE_SHOWN = (
    "accelerators",
    "batch_per_device",
    "accum",
    "global_batch",
    "step_ms",
    "compute_ms",
    "exposed_comm_ms",
    "samples_per_s",
    "time_to_train_min",
    "speedup",
    "speedup_low",
    "speedup_high",
    "efficiency",
    "throughput_efficiency",
    "convergence_factor",
    "accelerator_hours",
    "cost",
    "energy_kwh",
)


def _scaling(result: Any) -> dict[str, Any]:
    """How the counts were compared, the fixed costs behind it (of each forward and
    backward; the optimizer step's), and the ``fixed`` term at the focus count in parts."""
    inputs = result.inputs
    fixed = inputs.fixed
    kept = inputs.kept_global_batch
    weak = inputs.convergence is None or inputs.scaling == "weak"
    return {
        "kind": "strong" if kept is not None else ("weak" if weak else "search"),
        "global_batch_kept": kept,
        "fixed_cost": None
        if fixed is None
        else {
            "ms": fixed.ms,
            "low_ms": fixed.low_ms,
            "high_ms": fixed.high_ms,
            "source": fixed.source,
            "basis": fixed.basis,
            "measure": str(fixed.measure),
            "optimizer_ms": optimizer_ms(inputs),
        },
        "fixed_term_ms": fixed_parts(inputs, result.predictions, result.decision.focus),
    }


def advice_document(result: Any) -> dict[str, Any]:
    """``advise -f json``: the recommendation, the decision's fields, how the counts were
    compared, every assumption, the explanation and the predictions (records)."""
    d = result.decision
    return {
        "recommendation": {
            "model": result.inputs.name if result.inputs else None,  # the model advised on
            "strategy": result.inputs.strategy if result.inputs else None,  # ddp or fsdp
            "accelerators": d.count,  # None: withheld, an assumed term's range moves it
            "withheld_by": d.withheld_by,  # that term: what to give or measure first
            "fastest": d.fastest,
            "efficient": result.efficient,
            "cheapest": result.cheapest,
            "equilibrium": result.equilibrium,
            "break_even_compute_ms_per_grad_mb": result.break_even_ms_per_mb,
            "break_even_params": result.break_even_params,
            "target_efficiency_params": result.target_params,
            # what the two sizes rest on: the family fitted over its members benched in the
            # configuration (the same whichever is advised), None: this model alone
            "break_even_family": _family(result),
            "dominant_term": d.dominant_term,
            # what the step's terms (the dominant one too) rest on: "weak" bench runs (too
            # few steps: no change is recommended from them), "firm" ones, None for numbers
            "terms_evidence": _terms_evidence(result),
            "speedup_capped_by": d.cap,
            "warnings": list(d.warnings),
            "measure_first": d.settle,
            "caveats": list(result.caveats),
        },
        # counts the bench measured outside the predicted interval: their rows (predictions
        # or weak_scaling) rest on the measurement (``advice.types.Disagreement``)
        "disagreements": [found.to_dict() for found in result.disagreements],
        "decision": d.to_dict(),
        "scaling": _scaling(result),
        "assumptions": [a.to_dict() for a in result.assumptions],
        "answer": answer.lines(result),  # the default view's lines, before its table
        "explanation": result.explanation,
        "predictions": result.predictions.to_dict("records"),
        "weak_scaling": None
        if result.alternative is None
        else result.alternative.to_dict("records"),
    }


def _terms_evidence(result: Any) -> str | None:
    found = getattr(result.inputs, "evidence", None)
    if found is None:
        return None
    return "flagged" if found.untrusted else ("weak" if found.weak else "firm")


def advice_view(
    result: Any, *, terminal: bool, document: bool = False, explain: bool = False
) -> TableView:
    """The predictions as a terminal shows them: by default the short answer
    (``advice.answer``: the deciding columns, four lines), with ``explain`` every shown
    column (``ADVICE_SHOWN``) and the whole explanation; or (``terminal`` False: CSV)
    every column with what qualifies the numbers as notes; ``document``: with the whole
    answer for ``-f json`` (:func:`advice_document`)."""
    if document:
        return TableView(result.predictions, (), document=advice_document(result))
    inputs = result.inputs
    params = format_count(inputs.model.params)
    named = inputs.name if params in inputs.name else f"{inputs.name} ({params} parameters)"
    title = f"predicted training of {named} with {inputs.strategy.upper()} on {inputs.network_name}"
    if not terminal:
        every = list(result.predictions.columns)
        return TableView(result.predictions, every, title, notes=tuple(result.caveats))
    if not explain:
        return TableView(
            result.predictions,
            answer.columns(result),
            title,
            drop_order=answer.DROP_ORDER,
            formats=answer.FORMATS,
            said=(answer.more(result),),
        )
    said = tuple(f"- {line}" for line in result.explanation)  # the equilibrium's last
    return TableView(result.predictions, ADVICE_SHOWN, title, said=said)


def _family(result: Any) -> dict[str, Any] | None:
    """The family basis of the break-even sizes (``advice.family``), None without one."""
    basis = getattr(result.inputs, "family", None)
    if basis is None:
        return None
    return {
        "family": basis.family,
        "members": list(basis.members),
        "flops_per_param": basis.flops_per_param,
        "optimizer_ms": {"fixed": basis.opt_ms[0], "per_mparam": basis.opt_ms[1]},
        "ddp_ms": {"fixed": basis.ddp_ms[0], "per_mparam": basis.ddp_ms[1]},
    }
