"""What ``gpuscale bench`` trains: the built-in ladder, or your own model.

The ladder (plain ``torch.nn``, data generated on the device, parameters counted from the
built modules) has three families whose FLOPs per parameter differ by orders of magnitude,
as real models do:

* ``mlp-*``: a multi-layer perceptron (Linear + GELU) on 10 classes: ~6 training FLOPs
  per parameter per sample, the communication-bound end;
* ``tf-*``: a transformer encoder language model on 128 tokens: ~6 x 128 per parameter;
* ``cnn-*``: a small convolutional network on 32 x 32 images (three stages of 3x3
  convolutions with batch norm): thousands per parameter, like ResNets.

Your own model: ``--model PKG.MODULE:FACTORY`` (the current directory is importable, as
with ``python -m``) or ``--model path/to/file.py:FACTORY``, where ``FACTORY()`` returns a
:class:`BenchModel`, or ``(module, make_batch)`` or ``(module, make_batch, loss)``:
``make_batch(batch_size, device)`` returns ``(inputs, targets)`` on ``device`` (inputs a
tensor, or a tuple passed as positional arguments), and ``loss(output, targets)`` a
scalar (default: cross-entropy, flattening a sequence dimension).
``torchvision:NAME`` and ``timm:NAME`` build those packages' models (no weights
downloaded) on 224 x 224 images (timm: the model's own input size), 1,000 classes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn as nn

from gpuscale.bench.config import ModelError
from gpuscale.bench.ladder_names import (
    LADDER_SHAPES,
    SPEC_FORMS,
    checked_names,
    ladder_name,
    spec_problem,
)
from gpuscale.bench.model_base import Batch, BenchModel, MakeBatch, cross_entropy, first_batch
from gpuscale.bench.model_loading import load_spec
from gpuscale.quantities import parse_size

# the names this module gave before the base and the loading moved out stay importable here
__all__ = [
    "BY_NAME",
    "LADDER",
    "SPEC_FORMS",
    "Batch",
    "BenchModel",
    "MakeBatch",
    "ModelError",
    "ModelSpec",
    "cross_entropy",
    "family_of",
    "first_batch",
    "ladder_name",
    "load_model",
    "parameter_count",
    "select_models",
    "sort_models",
    "spec_problem",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSpec:
    """One rung of the ladder."""

    name: str
    family: str  # "mlp", "transformer" or "cnn"
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
        if self.family == "cnn":
            return _cnn(self.width, self.depth)
        return _TransformerLM(self)

    def make_batch(self, size: int, device: torch.device) -> Batch:
        """A synthetic (inputs, targets) batch created on ``device``, drawn from torch's
        default generator (the worker seeds it per rank: each rank its own samples)."""
        if self.family == "mlp":
            x = torch.randn(size, self.inputs)
            y = torch.randint(0, 10, (size,))
        elif self.family == "cnn":
            x = torch.randn(size, 3, 32, 32)
            y = torch.randint(0, 10, (size,))
        else:
            x = torch.randint(0, self.vocab, (size, self.seq_len))
            y = torch.randint(0, self.vocab, (size, self.seq_len))
        return x.to(device), y.to(device)

    def bench_model(self) -> BenchModel:
        return BenchModel(module=self.build(), make_batch=self.make_batch, family=self.family)


def _cnn(width: int, depth: int) -> nn.Module:
    """Three stages (32, 16, 8 pixels) of ``depth`` 3x3 conv + BN + ReLU at ``width``,
    2x and 4x channels, then global average pooling and 10 classes."""
    layers: list[nn.Module] = []
    channels = 3
    for stage in range(3):
        out = width * 2**stage
        for block in range(depth):
            stride = 2 if stage > 0 and block == 0 else 1
            layers += [
                nn.Conv2d(channels, out, 3, stride=stride, padding=1, bias=False),
                nn.BatchNorm2d(out),
                nn.ReLU(inplace=True),
            ]
            channels = out
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10))


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


LADDER: tuple[ModelSpec, ...] = tuple(
    ModelSpec(name=name, **shape)  # type: ignore[arg-type]
    for name, shape in LADDER_SHAPES.items()
)
BY_NAME = {spec.name: spec for spec in LADDER}


def load_model(name: str) -> BenchModel:
    """The :class:`BenchModel` a name stands for (ladder, ``torchvision:``, ``timm:``,
    ``PKG.MODULE:FACTORY`` or ``path/to/file.py:FACTORY``); :class:`ModelError` when it
    cannot be built."""
    if name in BY_NAME:
        return BY_NAME[name].bench_model()
    return load_spec(name, BY_NAME)


def parameter_count(name: str) -> int:
    """Trainable parameters of a model (ladder rungs counted on the meta device, with
    nothing allocated; other models are built)."""
    if name in BY_NAME:
        with torch.device("meta"):
            module = BY_NAME[name].build()
    else:
        module = load_model(name).module
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def family_of(name: str) -> str:
    if name in BY_NAME:
        return BY_NAME[name].family
    return name.partition(":")[0] if name.startswith(("torchvision:", "timm:")) else "custom"


def select_models(
    names: list[str] | None = None, max_params: str | None = None, min_params: str | None = None
) -> list[tuple[str, int]]:
    """(name, parameters) of the models asked for (default: the ladder), smallest first,
    within ``min_params``..``max_params`` (sizes like ``2M``); :class:`ModelError` for the
    first one that cannot be built (see :func:`sort_models` to keep going)."""
    chosen, broken = sort_models(names, max_params, min_params)
    if broken:
        raise broken[0][1]
    return chosen


def sort_models(
    names: list[str] | None = None,
    max_params: str | None = None,
    min_params: str | None = None,
    count: Callable[[str], int] | None = None,
) -> tuple[list[tuple[str, int]], list[tuple[str, ModelError]]]:
    """Like :func:`select_models`, but a model that cannot be built (import error, its
    factory raised, a wrong return type) is returned in the second list as (name, the
    :class:`ModelError`) and the others are kept. An unknown ladder name is still a
    :class:`ModelError`. ``count`` counts the parameters of a model off the ladder
    (default :func:`parameter_count`, in this process; the CLI counts them in a guarded
    child: ``gpuscale.bench.probe``)."""
    chosen = checked_names(names or list(BY_NAME))
    low, high = (parse_size(given) if given else None for given in (min_params, max_params))
    sized, broken = [], []
    for n in chosen:  # each once (refused twice above), in the order given
        try:
            sized.append((n, parameter_count(n) if n in BY_NAME or count is None else count(n)))
        except ModelError as exc:
            broken.append((n, exc))
    sized.sort(key=lambda pair: pair[1])
    kept = [(n, p) for n, p in sized if (high is None or p <= high) and (low is None or p >= low)]
    return kept, broken
