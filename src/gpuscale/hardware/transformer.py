"""A decoder-only transformer by its shape: parameters, training FLOPs, the units FSDP
wraps and the activations a device holds.

A shape is ``L`` layers of hidden size ``h`` with ``a`` attention heads (``a_kv`` of them
for keys and values: grouped-query attention), a feed-forward of ``f`` (gated: SwiGLU's
three matrices, else two), a vocabulary of ``v`` (its output layer tied to the input
embedding or not), learned positions or none, biases or none, RMSNorm or LayerNorm. The
presets (``data/transformer_presets.csv``) are published models, each row's shape and
parameter count cited in ``data/transformer_sources.csv``, as are the formulas:

* parameters per layer: ``2 h^2 + 2 h^2 a_kv / a`` (attention) ``+ 3 h f`` (gated) or
  ``2 h f``, plus biases and norms; the model adds ``v h`` (``2 v h`` untied), the
  positions and a final norm;
* training FLOPs per token (PaLM, Appendix B; Megatron-LM's model FLOPs):
  ``6 N_mm + 12 L h s``, ``N_mm`` the parameters that multiply activations (all but the
  input embedding table and learned positions), ``s`` the sequence; per sample (one
  sequence of ``s`` tokens) ``s`` times that;
* activations of one layer, 16-bit, per device (Korthikanti et al. 2022, section 4):
  ``s b h (34 + 5 a s / h)`` bytes at micro-batch ``b`` with nothing recomputed,
  ``34 s b h`` with selective recomputation (attention recomputed, as FlashAttention
  does), ``2 s b h`` with full recomputation (each layer's input kept); the output layer
  and cross entropy ``4 s b h (1 + v / h)`` once;
* FSDP units: one per layer (``transformer_auto_wrap_policy``), each of the layer's
  parameters (what a device holds of them whole: ``hardware.memory.gathered_bytes``).

Pure: nothing here reads a run or prints; a shape that cannot be is a ``ValueError``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum

from gpuscale.hardware.cited import Source, data_rows
from gpuscale.sizes import number_or_none

BYTES_PER_GB = 1e9


class Checkpointing(str, Enum):
    """What a step recomputes in the backward instead of holding (Korthikanti et al.
    2022, section 5): nothing, the attention (selective), or every layer (full)."""

    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"


# What a run holds by default: today's attention kernels (FlashAttention, Dao et al. 2022;
# PyTorch's scaled_dot_product_attention) never store the s x s scores, which is what
# selective recomputation holds (Korthikanti et al. 2022, section 5): ``34 s b h`` a layer.
DEFAULT_CHECKPOINTING = Checkpointing.SELECTIVE


CHECKPOINTING = tuple(c.value for c in Checkpointing)


@dataclass(frozen=True, kw_only=True, slots=True)
class TransformerShape:
    """A decoder-only transformer's shape (module docstring), ``seq_len`` the tokens of
    one sample; ``source`` an id of ``transformer_sources.csv`` ("" for a shape given by
    its numbers) and ``params_stated`` the parameters the source states (None: none)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    gated: bool
    vocab: int
    tied: bool
    positions: int
    biases: bool
    rms_norm: bool
    seq_len: int
    source: str = ""
    params_stated: float | None = None

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "kv_heads", "ffn", "seq_len"):
            value = getattr(self, name)
            count = number_or_none(value, whole=True)
            if count is None or count < 1:
                raise ValueError(f"{name} must be a positive whole number, not {value!r}")
        for name in ("vocab", "positions"):
            value = getattr(self, name)
            count = number_or_none(value, whole=True)
            if count is None or count < 0:
                raise ValueError(f"{name} must be a whole number of at least 0, not {value!r}")
        if self.hidden % self.heads:
            raise ValueError(
                f"the hidden size {self.hidden:,} does not divide into {self.heads:,} heads "
                f"({self.hidden / self.heads:.4g} each): each head takes an equal share"
            )
        if self.heads % self.kv_heads:
            raise ValueError(
                f"{self.heads:,} heads do not share {self.kv_heads:,} key-value heads evenly"
            )

    def at(self, seq_len: int) -> TransformerShape:
        """The same model trained on sequences of ``seq_len`` tokens."""
        return replace(self, seq_len=seq_len)


# Vectors of ``hidden`` a norm holds: a scale (RMSNorm), a scale and a shift (LayerNorm).
NORM_VECTORS = {True: 1, False: 2}  # by ``rms_norm``
# Matrices of ``hidden x ffn`` a feed-forward holds: up and down, and a gate where gated.
FEED_FORWARD_MATRICES = {True: 3, False: 2}  # by ``gated``


def _norm(shape: TransformerShape) -> int:
    """The parameters of one norm: a scale (RMSNorm), a scale and a shift (LayerNorm)."""
    return NORM_VECTORS[shape.rms_norm] * shape.hidden


def _output_params(shape: TransformerShape) -> int:
    """The output layer's own parameters: none where tied to the input embedding."""
    if shape.tied:
        return 0
    return shape.vocab * shape.hidden


def layer_params(shape: TransformerShape) -> int:
    """The parameters of one transformer layer (one FSDP unit): attention's query, key,
    value and output projections, the feed-forward's two (three gated) matrices, their
    biases where the model has them, and the layer's two norms."""
    h, f = shape.hidden, shape.ffn
    kv = h * shape.kv_heads // shape.heads  # the width of the keys and of the values
    attention = 2 * h * h + 2 * h * kv
    feed_forward = FEED_FORWARD_MATRICES[shape.gated] * h * f
    biases = (h + 2 * kv + h) + (f + h)  # the projections' and the feed-forward's
    return attention + feed_forward + biases * shape.biases + 2 * _norm(shape)


def embedding_params(shape: TransformerShape) -> int:
    """The input embedding table and the learned positions: looked up, not multiplied."""
    return shape.vocab * shape.hidden + shape.positions * shape.hidden


def params(shape: TransformerShape) -> int:
    """Every parameter: the layers, the embeddings, the output layer (none where tied to
    the input embedding) and the final norm."""
    output = _output_params(shape)
    return shape.layers * layer_params(shape) + embedding_params(shape) + output + _norm(shape)


def matmul_params(shape: TransformerShape) -> int:
    """The parameters a token's forward multiplies by: every one but the embedding
    table's and the positions' lookups (a tied table counted once, as the output layer)."""
    table = shape.vocab * shape.hidden  # the output layer's own or, tied, the table's
    return params(shape) - embedding_params(shape) + table - _output_params(shape)


def flops_per_token(shape: TransformerShape) -> float:
    """Forward + backward FLOPs of one token at ``shape.seq_len``: ``6 N_mm + 12 L h s``
    (source ``flops``)."""
    attention = 12 * shape.layers * shape.hidden * shape.seq_len
    return 6.0 * matmul_params(shape) + attention


def flops_per_sample(shape: TransformerShape) -> float:
    """Forward + backward FLOPs of one sample, a sequence of ``seq_len`` tokens."""
    return flops_per_token(shape) * shape.seq_len


def attention_share(shape: TransformerShape) -> float:
    """The share of the FLOPs the attention's ``12 L h s`` term is."""
    return 12 * shape.layers * shape.hidden * shape.seq_len / flops_per_token(shape)


@dataclass(frozen=True, kw_only=True, slots=True)
class Activations:
    """The activations one device holds for a micro-batch of ``micro_batch`` sequences
    under ``checkpointing``: per layer and for the output layer and loss (bytes), and in
    all (GB, 10^9 bytes); ``source`` an id of ``transformer_sources.csv``."""

    micro_batch: int
    seq_len: int
    checkpointing: Checkpointing
    per_layer_bytes: float
    output_bytes: float
    layers: int
    source: str = "activations"

    @property
    def total_bytes(self) -> float:
        return self.layers * self.per_layer_bytes + self.output_bytes

    @property
    def total_gb(self) -> float:
        return self.total_bytes / BYTES_PER_GB


def activations(
    shape: TransformerShape, micro_batch: int, checkpointing: Checkpointing | str = "none"
) -> Activations:
    """What one device holds for a micro-batch of ``micro_batch`` sequences of
    ``shape.seq_len`` tokens (source ``activations``): per layer ``s b h (34 + 5 a s / h)``
    bytes with nothing recomputed, ``34 s b h`` selective, ``2 s b h`` full; the output
    layer and cross entropy ``4 s b h (1 + v / h)``."""
    how = Checkpointing(checkpointing)
    if number_or_none(micro_batch, whole=True) is None or micro_batch < 1:
        raise ValueError(f"the micro-batch must be a positive whole number, not {micro_batch!r}")
    s, b, h, a = shape.seq_len, micro_batch, shape.hidden, shape.heads
    sbh = float(s) * b * h
    per_layer = {
        Checkpointing.NONE: sbh * (34 + 5 * a * s / h),
        Checkpointing.SELECTIVE: sbh * 34,
        Checkpointing.FULL: sbh * 2,
    }[how]
    return Activations(
        micro_batch=b,
        seq_len=s,
        checkpointing=how,
        per_layer_bytes=per_layer,
        output_bytes=4 * sbh * (1 + shape.vocab / h),
        layers=shape.layers,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class ShapeNumbers:
    """A shape's numbers, counted once where the shape is read: its parameters, one
    layer's (an FSDP unit), training FLOPs per sample, the attention's share of them, and
    the activations a device holds at each micro-batch asked."""

    params: int
    layer_params: int
    flops_per_sample: float
    attention_share: float
    activations: tuple[Activations, ...]


def numbers_of(
    shape: TransformerShape,
    micro_batches: Iterable[int] = (1,),
    checkpointing: Checkpointing | str = DEFAULT_CHECKPOINTING,
) -> ShapeNumbers:
    """Every number of ``shape`` the advice reads, the activations at each of
    ``micro_batches`` under ``checkpointing``."""
    return ShapeNumbers(
        params=params(shape),
        layer_params=layer_params(shape),
        flops_per_sample=flops_per_sample(shape),
        attention_share=attention_share(shape),
        activations=tuple(
            activations(shape, b, checkpointing) for b in dict.fromkeys(micro_batches)
        ),
    )


@functools.cache
def sources() -> dict[str, Source]:
    """The sources of the presets and the formulas, by id."""
    return {row["id"]: Source(**row) for row in data_rows("transformer_sources.csv")}


def _yes(text: str) -> bool:
    return text == "yes"


@functools.cache
def presets() -> dict[str, TransformerShape]:
    """The published models by name (``data/transformer_presets.csv``), each at the
    sequence it was trained on."""
    out = {}
    for row in data_rows("transformer_presets.csv"):
        out[row["name"]] = TransformerShape(
            name=row["name"],
            layers=int(row["layers"]),
            hidden=int(row["hidden"]),
            heads=int(row["heads"]),
            kv_heads=int(row["kv_heads"]),
            ffn=int(row["ffn"]),
            gated=_yes(row["gated"]),
            vocab=int(row["vocab"]),
            tied=_yes(row["tied"]),
            positions=int(row["positions"]),
            biases=_yes(row["biases"]),
            rms_norm=row["norm"] == "rms",
            seq_len=int(row["seq_len"]),
            source=row["source"],
            params_stated=float(row["params_stated"]),
        )
    return out


def of_numbers(
    *, layers: int, hidden: int, heads: int, seq_len: int, vocab: int = 0
) -> TransformerShape:
    """A shape given by its numbers: GPT's block (a feed-forward of ``4 h``, not gated;
    every head its own keys and values; LayerNorm, biases), untied embeddings of
    ``vocab`` tokens (0: none counted), no learned positions."""
    return TransformerShape(
        name="given by numbers",
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=heads,
        ffn=4 * hidden,
        gated=False,
        vocab=vocab,
        tied=False,
        positions=0,
        biases=True,
        rms_norm=False,
        seq_len=seq_len,
    )
