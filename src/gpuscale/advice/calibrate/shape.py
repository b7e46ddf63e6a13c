"""A transformer's shape, as a model given by numbers says it (:func:`shape_findings`)."""

from __future__ import annotations

from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.hardware import transformer

# --params this far from the shape's count is said (a published count is rounded to a
# few digits: 1,542M for GPT-2 XL's 1,557.6M, 1.0%)
PARAMS_AGREE = 0.05


def shape_findings(
    req: AdviceRequest, numbers: transformer.ShapeNumbers | None
) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    """(sources, warnings) of the transformer's shape (``numbers``: its, counted once):
    what it gives and whether ``--params`` disagrees with it by more than
    ``PARAMS_AGREE``; without a shape, under a sharded strategy, what is assumed instead."""
    shape = req.shape
    strategy = req.strategy or "ddp"
    if shape is None or numbers is None:
        if strategy == "ddp":  # DDP's buckets and a model state: no shape needed
            return (), ()
        return (Finding.of(FindingKind.NO_SHAPE, strategy=strategy),), ()
    source = _shape_source(shape)
    counted = float(numbers.params)
    one = next(a for a in numbers.activations if a.micro_batch == 1)
    given = req.params is not None
    found = Finding.of(
        FindingKind.TRANSFORMER_SHAPE,
        name=shape.name,
        layers=shape.layers,
        hidden=shape.hidden,
        heads=shape.heads,
        seq_len=shape.seq_len,
        params=counted,
        params_given=given,
        flops_per_sample=req.flops_per_sample or numbers.flops_per_sample,
        flops_given=req.flops_per_sample is not None,
        attention_share=numbers.attention_share,
        units=shape.layers,
        unit_params=float(numbers.layer_params),
        source=source,
        # one sequence's (activations are per micro-batch); "default": the one assumed
        activations_gb=one.total_gb,
        checkpointing=req.checkpointing or "default",
    )
    off = float(req.params) / counted - 1 if given else 0.0  # type: ignore[arg-type]
    if abs(off) <= PARAMS_AGREE:
        return (found,), ()
    disagree = Finding.of(
        FindingKind.PARAMS_NOT_SHAPE,
        given=float(req.params),  # type: ignore[arg-type]
        off=off,
        shape_params=counted,
        name=shape.name,
    )
    return (found,), (disagree,)


def _shape_source(shape: transformer.TransformerShape) -> str:
    """Where a preset comes from: its citation's first clause ("": a shape as given)."""
    if not shape.source:
        return ""
    return transformer.sources()[shape.source].citation.split(";")[0].split(" (")[0]
