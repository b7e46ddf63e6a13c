"""The synthetic model ladder: two families from about 0.2M to 300M parameters.

Plain ``torch.nn`` (no torchvision), data generated on the device. Parameter counts are
computed from the built modules, never assumed; the names give the rough size.

* ``mlp-*``: a multi-layer perceptron (Linear + GELU) classifying 10 classes; compute
  per sample grows like its parameters, so it is the small-model, communication-bound end.
* ``tf-*``: a transformer encoder language model (token embedding, ``nn.TransformerEncoder``,
  output head) on sequences of 128 tokens; more compute per parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn as nn


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSpec:
    """One rung of the ladder."""

    name: str
    family: str  # "mlp" or "transformer"
    width: int
    depth: int
    inputs: int = 0  # mlp: input features
    vocab: int = 0  # transformer: vocabulary size
    seq_len: int = 0  # transformer: tokens per sample
    heads: int = 0

    def build(self) -> nn.Module:
        """The ``torch.nn.Module``."""
        if self.family == "mlp":
            layers: list[nn.Module] = [nn.Linear(self.inputs, self.width), nn.GELU()]
            for _ in range(self.depth - 1):
                layers += [nn.Linear(self.width, self.width), nn.GELU()]
            layers.append(nn.Linear(self.width, 10))
            return nn.Sequential(*layers)
        return _TransformerLM(self)

    def batch(self, size: int, device: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """A synthetic (inputs, targets) batch created on ``device``."""
        generator = torch.Generator(device="cpu").manual_seed(0)
        if self.family == "mlp":
            x = torch.randn(size, self.inputs, generator=generator)
            y = torch.randint(0, 10, (size,), generator=generator)
        else:
            x = torch.randint(0, self.vocab, (size, self.seq_len), generator=generator)
            y = torch.randint(0, self.vocab, (size, self.seq_len), generator=generator)
        return x.to(device), y.to(device)


class _TransformerLM(nn.Module):
    """Embedding -> TransformerEncoder (pre-norm) -> vocabulary head."""

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.embed = nn.Embedding(spec.vocab, spec.width)
        self.position = nn.Parameter(0.02 * torch.randn(spec.seq_len, spec.width))
        layer = nn.TransformerEncoderLayer(
            spec.width, spec.heads, 4 * spec.width, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, spec.depth, enable_nested_tensor=False)
        self.head = nn.Linear(spec.width, spec.vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(self.embed(tokens) + self.position))


LADDER: tuple[ModelSpec, ...] = (
    ModelSpec(name="mlp-0.2m", family="mlp", inputs=256, width=256, depth=3),
    ModelSpec(name="mlp-1m", family="mlp", inputs=512, width=512, depth=4),
    ModelSpec(
        name="tf-1.5m", family="transformer", width=128, depth=2, heads=4, vocab=4096, seq_len=128
    ),
    ModelSpec(name="mlp-4m", family="mlp", inputs=1024, width=1024, depth=4),
    ModelSpec(
        name="tf-7m", family="transformer", width=256, depth=6, heads=4, vocab=4096, seq_len=128
    ),
    ModelSpec(name="mlp-17m", family="mlp", inputs=2048, width=2048, depth=4),
    ModelSpec(
        name="tf-30m", family="transformer", width=512, depth=8, heads=8, vocab=8192, seq_len=128
    ),
    ModelSpec(name="mlp-67m", family="mlp", inputs=4096, width=4096, depth=4),
    ModelSpec(
        name="tf-100m", family="transformer", width=768, depth=12, heads=12, vocab=8192, seq_len=128
    ),
    ModelSpec(
        name="tf-300m",
        family="transformer",
        width=1024,
        depth=24,
        heads=16,
        vocab=8192,
        seq_len=128,
    ),
)
BY_NAME = {spec.name: spec for spec in LADDER}


def parameter_count(spec: ModelSpec) -> int:
    """Parameters of the built model, counted without allocating them (meta device)."""
    with torch.device("meta"):
        module = spec.build()
    return sum(p.numel() for p in module.parameters())


def parse_size(text: str) -> int:
    """``2M`` -> 2_000_000, ``250k`` -> 250_000, ``1.5B`` -> 1_500_000_000."""
    units = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9}
    raw = text.strip().lower().removesuffix("params").strip()
    try:
        value = float(raw[:-1]) * units[raw[-1]] if raw and raw[-1] in units else float(raw)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (use e.g. 250k, 7M, 1.5B)") from None
    if value <= 0:
        raise ValueError(f"size must be positive: {text!r}")
    return int(value)


def select_models(
    names: list[str] | None = None, max_params: int | None = None, min_params: int | None = None
) -> list[tuple[ModelSpec, int]]:
    """(spec, parameters) of the ladder rungs asked for, smallest first."""
    if names:
        unknown = [n for n in names if n not in BY_NAME]
        if unknown:
            raise ValueError(
                f"unknown model(s) {', '.join(unknown)}; the ladder: {', '.join(BY_NAME)}"
            )
        specs = [BY_NAME[n] for n in names]
    else:
        specs = list(LADDER)
    sized = sorted(((s, parameter_count(s)) for s in specs), key=lambda sp: sp[1])
    return [
        (s, n)
        for s, n in sized
        if (max_params is None or n <= max_params) and (min_params is None or n >= min_params)
    ]
