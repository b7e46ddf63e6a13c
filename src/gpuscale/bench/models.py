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

import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

from gpuscale.bench.config import ModelError
from gpuscale.names import did_you_mean
from gpuscale.quantities import parse_size
from gpuscale.tables.requests import given_twice

Batch = tuple[Any, Any]
MakeBatch = Callable[[int, torch.device], Batch]


def cross_entropy(output: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over the last dimension (a sequence dimension is flattened)."""
    if output.dim() > 2:
        return F.cross_entropy(output.reshape(-1, output.shape[-1]), targets.reshape(-1))
    return F.cross_entropy(output, targets)


@dataclass
class BenchModel:
    """A model to time: the module, how to make a batch, and the loss."""

    module: nn.Module
    make_batch: MakeBatch
    loss: Callable[[Any, Any], torch.Tensor] = cross_entropy
    family: str = "custom"

    def forward_loss(self, module: nn.Module, batch: Batch) -> torch.Tensor:
        inputs, targets = batch
        output = module(*inputs) if isinstance(inputs, tuple) else module(inputs)
        return self.loss(output, targets)


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

    def make_batch(self, size: int, device: Any) -> Batch:
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


def _tf(name: str, width: int, depth: int, heads: int, vocab: int) -> ModelSpec:
    return ModelSpec(
        name=name,
        family="transformer",
        width=width,
        depth=depth,
        heads=heads,
        vocab=vocab,
        seq_len=128,
    )


LADDER: tuple[ModelSpec, ...] = (
    ModelSpec(name="mlp-0.2m", family="mlp", inputs=256, width=256, depth=3),
    ModelSpec(name="cnn-0.3m", family="cnn", width=32, depth=2),
    ModelSpec(name="mlp-1m", family="mlp", inputs=512, width=512, depth=4),
    ModelSpec(name="cnn-1.2m", family="cnn", width=64, depth=2),
    _tf("tf-1.5m", 128, 2, 4, 4096),
    ModelSpec(name="mlp-4m", family="mlp", inputs=1024, width=1024, depth=4),
    ModelSpec(name="cnn-4.7m", family="cnn", width=128, depth=2),
    _tf("tf-7m", 256, 6, 4, 4096),
    ModelSpec(name="mlp-17m", family="mlp", inputs=2048, width=2048, depth=4),
    ModelSpec(name="cnn-19m", family="cnn", width=256, depth=2),
    _tf("tf-30m", 512, 8, 8, 8192),
    ModelSpec(name="mlp-67m", family="mlp", inputs=4096, width=4096, depth=4),
    _tf("tf-100m", 768, 12, 12, 8192),
    _tf("tf-300m", 1024, 24, 16, 8192),
)
BY_NAME = {spec.name: spec for spec in LADDER}


def first_batch(bench: BenchModel, name: str, size: int, device: Any) -> Batch:
    """``bench.make_batch(size, device)``, checked to be ``(inputs, targets)``:
    :class:`ModelError` naming ``make_batch`` otherwise (a bare tensor read as "too many
    values to unpack (expected 2)", naming nothing; a user walk)."""
    batch = bench.make_batch(size, device)
    if not (isinstance(batch, tuple | list) and len(batch) == 2):
        got = f"{len(batch)} values" if isinstance(batch, tuple | list) else type(batch).__name__
        raise ModelError(
            f"{name}: make_batch({size}, device) returned {got}, not (inputs, targets)"
        )
    return tuple(batch)


def _from_factory(made: Any, name: str) -> BenchModel:
    if isinstance(made, BenchModel):
        return made
    if isinstance(made, tuple) and len(made) in (2, 3) and isinstance(made[0], nn.Module):
        return BenchModel(*made) if len(made) == 3 else BenchModel(made[0], made[1])
    raise ModelError(
        f"{name} returned {type(made).__name__}; expected a BenchModel or "
        "(module, make_batch[, loss])"
    )


def _images(classes: int, size: tuple[int, int, int]) -> MakeBatch:
    def make(batch: int, device: Any) -> Batch:
        x = torch.randn(batch, *size)  # torch's default generator, seeded per rank
        y = torch.randint(0, classes, (batch,))
        return x.to(device), y.to(device)

    return make


def _user_module(source: str) -> Any:
    """The module ``source`` names: ``path/to/file.py`` (relative to the current
    directory, its folder importable as for ``python file.py``) or ``PKG.MODULE`` with the
    current directory importable (after the installed packages), as for ``python -m``."""
    if source.endswith(".py"):
        path = os.path.abspath(source)
        if not os.path.isfile(path):
            raise ImportError(f"no file {path}")
        if (folder := os.path.dirname(path)) not in sys.path:
            sys.path.append(folder)
        unique = "gpuscale_user_" + "".join(c if c.isalnum() else "_" for c in path)
        spec = importlib.util.spec_from_file_location(unique, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path} as a module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[unique] = module  # dataclasses and pickling look it up there
        spec.loader.exec_module(module)
        return module
    if (here := os.getcwd()) not in sys.path:  # torchrun workers and the console script
        sys.path.append(here)
    return importlib.import_module(source)


SPEC_FORMS = "PKG.MODULE:FACTORY or FILE.py:FACTORY (or torchvision:NAME, timm:NAME)"


def spec_problem(name: str) -> str | None:
    """Why a model name off the ladder is no spec gpuscale can load, in one line naming it
    and the forms expected; None when it is one (``SOURCE:NAME``: a package's NAME after
    ``torchvision:`` or ``timm:``, else a module path ``PKG.MODULE`` or a ``FILE.py``
    before the colon and the factory, a Python name, after it). Checked before anything
    runs: a spec that cannot name a model never becomes a failed row."""
    source, sep, attr = name.partition(":")
    if not sep:
        return None  # a ladder name, or not: load_model / sort_models say which
    if source in ("torchvision", "timm"):
        named = attr and not any(c.isspace() or c == ":" for c in attr)
        why = None if named else f"no {source} model name after the colon"
    elif not source:
        why = "nothing before the colon (the module or FILE.py that holds the factory)"
    elif not attr:
        why = "nothing after the colon (the factory to call)"
    elif not attr.isidentifier():
        why = f"{attr!r} after the colon is not a Python name (the factory to call)"
    elif source.endswith(".py"):
        why = None if os.path.basename(source) != ".py" else "no file name before .py"
    elif not all(part.isidentifier() for part in source.split(".")):
        why = f"{source!r} before the colon is neither a FILE.py nor a module (PKG.MODULE)"
    else:
        why = None
    return f"model {name!r} is not a model spec: {why}; give {SPEC_FORMS}" if why else None


def load_model(name: str) -> BenchModel:
    """The :class:`BenchModel` a name stands for (ladder, ``torchvision:``, ``timm:``,
    ``PKG.MODULE:FACTORY`` or ``path/to/file.py:FACTORY``); :class:`ModelError` when it
    cannot be built."""
    if name in BY_NAME:
        return BY_NAME[name].bench_model()
    if problem := spec_problem(name):
        raise ModelError(problem)
    source, sep, attr = name.partition(":")
    if not sep or not attr:
        raise ModelError(
            f"unknown model {name!r}{did_you_mean(name, BY_NAME)}: a ladder name "
            f"({', '.join(BY_NAME)}), "
            "torchvision:NAME, timm:NAME, PKG.MODULE:FACTORY or FILE.py:FACTORY"
        )
    try:
        if source in ("torchvision", "timm"):
            package = importlib.import_module(
                f"{source}.models" if source == "torchvision" else source
            )
            if attr not in (known := package.list_models()):
                said = did_you_mean(attr, known)
                raise ModelError(f"cannot build {name!r}: {source} has no model {attr!r}{said}")
        if source == "torchvision":
            module = package.get_model(attr, weights=None)
            return BenchModel(module, _images(1000, (3, 224, 224)), family="torchvision")
        if source == "timm":
            module = package.create_model(attr, pretrained=False)
            size = tuple(module.default_cfg.get("input_size", (3, 224, 224)))
            return BenchModel(module, _images(module.num_classes, size), family="timm")
        module = _user_module(source)
        if not hasattr(module, attr):
            callables = sorted(
                n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
            )
            raise ModelError(
                f"cannot build {name!r}: {source} has no {attr!r}{did_you_mean(attr, callables)}"
                + (f"; it has {', '.join(callables[:8])}" if callables else "")
            )
        factory = getattr(module, attr)
    except ModelError:
        raise
    except ImportError as exc:
        raise ModelError(f"cannot import {source!r} for {name!r}: {exc}") from None
    except AttributeError as exc:
        raise ModelError(f"cannot build {name!r}: {exc}") from None
    except Exception as exc:  # the user's module or the package failed while loading
        raise ModelError(f"cannot build {name!r}: {type(exc).__name__}: {exc}") from None
    try:
        made = factory()
    except Exception as exc:  # the user's factory raised: its cause, not a traceback
        said = f": {exc}" if str(exc) else ""
        raise ModelError(f"{name} raised {type(exc).__name__}{said}") from exc
    return _from_factory(made, name)


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


def ladder_name(name: str) -> str:
    """The ladder's name of ``name`` whatever its case, ``_`` or ``-`` (``MLP-0.2M``,
    ``mlp_0.2m``: mlp-0.2m, as ``--ops`` reads ``ALL_REDUCE``); any other name as given
    (a model of the user's, ``PKG.MODULE:FACTORY``, is spelled as its code is)."""
    if name in BY_NAME or ":" in name:
        return name
    key = re.sub(r"[^a-z0-9.]", "", name.lower())
    found = [n for n in BY_NAME if re.sub(r"[^a-z0-9.]", "", n) == key]
    return found[0] if len(found) == 1 else name


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
    chosen = [ladder_name(n) for n in names] if names else list(BY_NAME)
    if twice := given_twice(chosen, "model"):  # `--models a --model a` ran a once, unsaid
        raise ModelError(f"--models/--model: {twice}")
    for n in chosen:
        if n not in BY_NAME and ":" not in n:
            raise ModelError(
                f"unknown model {n!r}{did_you_mean(n, BY_NAME)}; the ladder: "
                f"{', '.join(BY_NAME)} (or torchvision:NAME, "
                "timm:NAME, PKG.MODULE:FACTORY, FILE.py:FACTORY)"
            )
        if n not in BY_NAME and (problem := spec_problem(n)):
            raise ModelError(problem)  # before any model is built or any row written
    low = parse_size(min_params) if min_params else None
    high = parse_size(max_params) if max_params else None
    sized, broken = [], []
    for n in chosen:  # each once (refused twice above), in the order given
        try:
            sized.append((n, parameter_count(n) if n in BY_NAME or count is None else count(n)))
        except ModelError as exc:
            broken.append((n, exc))
    sized.sort(key=lambda pair: pair[1])
    kept = [(n, p) for n, p in sized if (high is None or p <= high) and (low is None or p >= low)]
    return kept, broken
