"""Models named off the ladder: ``torchvision:NAME`` and ``timm:NAME`` (those packages'
models, no weights downloaded, on their image sizes) and your own factory,
``PKG.MODULE:FACTORY`` or ``path/to/file.py:FACTORY`` (what it may return: the
``gpuscale.bench.models`` docstring). A spec is checked before anything runs
(:func:`spec_problem`); loading one turns every failure into a :class:`ModelError`."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Iterable
from types import ModuleType

import torch
import torch.nn as nn

from gpuscale.bench.config import ModelError
from gpuscale.bench.ladder_names import spec_problem
from gpuscale.bench.model_base import Batch, BenchModel, MakeBatch
from gpuscale.names import did_you_mean
from gpuscale.quantities import filled
from gpuscale.tables.commands import quoted_path

# how gpuscale calls the user's callables, and what each returns (docs/measure.md)
FACTORY_CALL = "FACTORY() (no arguments), returning a BenchModel or (module, make_batch[, loss])"
MAKE_BATCH_CALL = "make_batch(batch_size, device), returning (inputs, targets)"
LOSS_CALL = "loss(output, targets), returning a scalar"


def call_problem(function: object, arguments: int, called_as: str) -> str | None:
    """Why ``function`` cannot be called with ``arguments`` positional arguments as
    gpuscale calls it (``called_as``): not callable, or a signature that will not take
    them, said with the parameters it has and how it is called; None where it can (or its
    signature cannot be read, as of some builtins: the call itself will say)."""
    if not callable(function):
        return f"is {type(function).__name__}, not a function; gpuscale calls {called_as}"
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*[None] * arguments)
    except TypeError:
        return f"takes {signature}; gpuscale calls {called_as}"
    return None


def _from_factory(made: object, name: str) -> BenchModel:
    if isinstance(made, tuple) and len(made) in (2, 3) and isinstance(made[0], nn.Module):
        made = BenchModel(*made)  # (module, make_batch[, loss])
    if isinstance(made, nn.Module):  # the model alone: the bench cannot make its batches
        raise ModelError(
            f"{name} returned the module {type(made).__name__} alone: return (module, "
            f"make_batch[, loss]), called as {MAKE_BATCH_CALL} (docs/measure.md)"
        )
    if not isinstance(made, BenchModel):
        raise ModelError(
            f"{name} returned {type(made).__name__}; expected a BenchModel or "
            "(module, make_batch[, loss])"
        )
    # checked here, once, not as a TypeError in every rank after the launch
    for part, called_as in (("make_batch", MAKE_BATCH_CALL), ("loss", LOSS_CALL)):
        if problem := call_problem(getattr(made, part), 2, called_as):
            raise ModelError(f"{name}: its {part} {problem}")
    return made


def _images(classes: int, size: tuple[int, int, int]) -> MakeBatch:
    def make(batch: int, device: torch.device) -> Batch:
        x = torch.randn(batch, *size)  # torch's default generator, seeded per rank
        y = torch.randint(0, classes, (batch,))
        return x.to(device), y.to(device)

    return make


def _user_module(source: str) -> ModuleType:
    """The module ``source`` names: ``path/to/file.py`` (relative to the current
    directory, its folder importable as for ``python file.py``) or ``PKG.MODULE`` with the
    current directory importable (after the installed packages), as for ``python -m``."""
    if source.endswith(".py"):
        path = os.path.abspath(source)
        if not os.path.isfile(path):
            raise ImportError(f"no file {quoted_path(path)}")
        if (folder := os.path.dirname(path)) not in sys.path:
            sys.path.append(folder)
        unique = "gpuscale_user_" + re.sub(r"\W", "_", path)
        spec = importlib.util.spec_from_file_location(unique, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {quoted_path(path)} as a module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[unique] = module  # dataclasses and pickling look it up there
        spec.loader.exec_module(module)
        return module
    if (here := os.getcwd()) not in sys.path:  # torchrun workers and the console script
        sys.path.append(here)
    return importlib.import_module(source)


# the module that lists a model hub's models (``list_models``)
_MODEL_PACKAGES = {"torchvision": "torchvision.models", "timm": "timm"}


def load_spec(name: str, ladder: Iterable[str]) -> BenchModel:
    """The :class:`BenchModel` a name off the ladder stands for (``torchvision:``,
    ``timm:``, ``PKG.MODULE:FACTORY`` or ``path/to/file.py:FACTORY``); :class:`ModelError`
    when it cannot be built (an unknown name is told the ``ladder``'s names)."""
    if problem := spec_problem(name):
        raise ModelError(problem)
    source, sep, attr = name.partition(":")
    if not sep or not attr:
        raise ModelError(
            f"unknown model {name!r}{did_you_mean(name, ladder)}: a ladder name "
            f"({', '.join(ladder)}), "
            "torchvision:NAME, timm:NAME, PKG.MODULE:FACTORY or FILE.py:FACTORY"
        )
    try:
        if source in ("torchvision", "timm"):
            package = importlib.import_module(_MODEL_PACKAGES[source])
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
                + filled("; it has {}", ", ".join(callables[:8]))
                + filled(" (and {:,} more)", max(0, len(callables) - 8))
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
    if problem := call_problem(factory, 0, FACTORY_CALL):
        raise ModelError(
            f"{name}: {attr} {problem}: give its parameters defaults, or name a factory "
            f"of no arguments that calls it (def make(): return {attr}(...))"
        )
    try:
        made = factory()
    except Exception as exc:  # the user's factory raised: its cause, not a traceback
        raise ModelError(f"{name} raised {type(exc).__name__}{filled(': {}', str(exc))}") from exc
    return _from_factory(made, name)
