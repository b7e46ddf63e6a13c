"""The built-in ladder's model names and how a model name typed is read: a ladder name
whatever its case (``MLP-0.2m``), a typo offered the closest, a spec of one's own
(``FILE.py:FACTORY``) checked for its form. No torch: a name no model has is refused
before torch is imported (seconds); ``gpuscale.bench.models`` builds the ladder."""

from __future__ import annotations

import ast
import math
import os
import re
from collections.abc import Sequence

from gpuscale.bench.config import ModelError
from gpuscale.names import did_you_mean
from gpuscale.quantities import parse_size
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.requests import given_twice
from gpuscale.tables.spelling import suggested

# The ladder, smallest first: each rung's name and shape (``gpuscale.bench.models.ModelSpec``
# builds it). An MLP's input features, width and depth of hidden layers; a CNN's base width
# and blocks per stage; a transformer's width, depth, heads and vocabulary at 128 tokens.
LADDER_SHAPES: dict[str, dict[str, int | str]] = {
    "mlp-0.2m": dict(family="mlp", inputs=256, width=256, depth=3),
    "cnn-0.3m": dict(family="cnn", width=32, depth=2),
    "mlp-1m": dict(family="mlp", inputs=512, width=512, depth=4),
    "cnn-1.2m": dict(family="cnn", width=64, depth=2),
    "tf-1.5m": dict(family="transformer", width=128, depth=2, heads=4, vocab=4096, seq_len=128),
    "mlp-4m": dict(family="mlp", inputs=1024, width=1024, depth=4),
    "cnn-4.7m": dict(family="cnn", width=128, depth=2),
    "tf-7m": dict(family="transformer", width=256, depth=6, heads=4, vocab=4096, seq_len=128),
    "mlp-17m": dict(family="mlp", inputs=2048, width=2048, depth=4),
    "cnn-19m": dict(family="cnn", width=256, depth=2),
    "tf-30m": dict(family="transformer", width=512, depth=8, heads=8, vocab=8192, seq_len=128),
    "mlp-67m": dict(family="mlp", inputs=4096, width=4096, depth=4),
    "tf-100m": dict(family="transformer", width=768, depth=12, heads=12, vocab=8192, seq_len=128),
    "tf-300m": dict(family="transformer", width=1024, depth=24, heads=16, vocab=8192, seq_len=128),
}
LADDER_NAMES = tuple(LADDER_SHAPES)
SPEC_FORMS = "PKG.MODULE:FACTORY or FILE.py:FACTORY (or torchvision:NAME, timm:NAME)"


def ladder_name(name: str) -> str:
    """The ladder's name of ``name`` whatever its case, ``_`` or ``-`` (``MLP-0.2M``,
    ``mlp_0.2m``: mlp-0.2m, as ``--ops`` reads ``ALL_REDUCE``); any other name as given
    (a model of the user's, ``PKG.MODULE:FACTORY``, is spelled as its code is)."""
    if name in LADDER_NAMES or ":" in name:
        return name
    key = re.sub(r"[^a-z0-9.]", "", name.lower())
    found = [n for n in LADDER_NAMES if re.sub(r"[^a-z0-9.]", "", n) == key]
    return found[0] if len(found) == 1 else name


def closest_model(name: str) -> str:
    """`` (did you mean 'cnn-0.3m'?)`` for a name off the ladder: a size the ladder lacks of
    one of its families (``cnn-0.2m``, ``tf-1m``) is offered that family's model whose size
    has the same digits (``mlp-02m``: a dot left out), else the nearest in size (by ratio),
    never one spelt alike far in size (``tf-100m`` for ``tf-1m``); any other name the
    closest spelling (``gpuscale.names.did_you_mean``)."""
    typed = re.fullmatch(r"\s*([a-z]+)[-_ ]?(\d[\d.]*\s*[kmbg]?)\s*", name.lower())
    if typed:
        family, size = typed.groups()
        sizes = {n: n.split("-", 1)[1] for n in LADDER_NAMES if n.split("-", 1)[0] == family}
        digits = [n for n, s in sizes.items() if re.sub(r"\D", "", s) == re.sub(r"\D", "", size)]
        try:
            params = parse_size(size)
        except ValueError:
            params = 0
        if len(digits) == 1:
            return suggested(digits)
        if params > 0 and sizes:
            ratio = {n: abs(math.log(parse_size(s) / params)) for n, s in sizes.items()}
            return suggested([min(ratio, key=ratio.__getitem__)])
    return did_you_mean(name, LADDER_NAMES)


def checked_names(names: Sequence[str], options: Sequence[str] = ()) -> list[str]:
    """``names`` as the ladder reads them (:func:`ladder_name`), each a ladder model or a
    spec of the right form; :class:`ModelError` for one given twice, one the ladder lacks
    (the closest offered) and a spec of no form, before any model is built or any row
    written. ``options``: the option each name was given with (``SweepRequest.model_options``;
    ``--models`` where not said), the one a refusal names."""
    chosen = [ladder_name(n) for n in names]
    if twice := given_twice(chosen, "model"):  # `--models a --model a` ran a once, unsaid
        raise ModelError(f"--models/--model: {twice}")
    given = [*options, *["--models"] * (len(chosen) - len(options))]
    for n, option in zip(chosen, given, strict=True):
        if n not in LADDER_NAMES and ":" not in n and (lacks := factory_missing(n)):
            raise ModelError(f"{option} {n}: {lacks}")
        if n not in LADDER_NAMES and ":" not in n:
            raise ModelError(  # the option and value first, as every refused value
                f"{option} {n}: unknown model{closest_model(n)}; the ladder: "
                f"{', '.join(LADDER_NAMES)} (or torchvision:NAME, "
                "timm:NAME, PKG.MODULE:FACTORY, FILE.py:FACTORY)"
            )
        if n not in LADDER_NAMES and (problem := spec_problem(n)):
            raise ModelError(problem)
    return chosen


def factory_missing(name: str) -> str | None:
    """Where ``name`` (no ``:``) is a model's file, ``FILE.py`` or a module ``NAME`` whose
    ``NAME.py`` is here, said without its factory: the spec to give, with the file's
    top-level functions read from its source (parsed, never run: a model's own code runs
    only in guarded children); None for any other name (a ladder typo)."""
    path = name if name.endswith(".py") else f"{name}.py"
    if not os.path.isfile(path):
        if name.endswith(".py"):
            return f"no such file, and a file's model needs its factory too: {name}:FACTORY"
        return None
    try:
        with open(path, "rb") as source:
            body = ast.parse(source.read()).body
    except (OSError, SyntaxError, ValueError):  # its own import says why, as a failed row
        body = []
    defined = [
        d.name
        for d in body
        if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef) and not d.name.startswith("_")
    ]
    example = quoted_path(f"{name}:{defined[0] if defined else 'FACTORY'}")  # a shell word
    said = f" ({quoted_path(path)} defines {', '.join(defined[:8])})" if defined else ""
    return f"names no factory: give the function that builds the model, e.g. {example}{said}"


def spec_problem(name: str) -> str | None:
    """Why a model name off the ladder is no spec gpuscale can load, in one line naming it
    and the forms expected; None when it is one (``SOURCE:NAME``: a package's NAME after
    ``torchvision:`` or ``timm:``, else a module path ``PKG.MODULE`` or a ``FILE.py``
    before the colon and the factory, a Python name, after it). Checked before anything
    runs: a spec that cannot name a model never becomes a failed row."""
    source, sep, attr = name.partition(":")
    if not sep:
        return None  # a ladder name, or not: load_model / sort_models say which
    if why := _not_a_spec(source, attr):
        return f"model {name!r} is not a model spec: {why}; give {SPEC_FORMS}"
    return None


def _not_a_spec(source: str, attr: str) -> str | None:
    """What keeps ``SOURCE:ATTR`` from naming a model; None where nothing does."""
    if source in ("torchvision", "timm"):
        if attr and not any(c.isspace() or c == ":" for c in attr):
            return None
        return f"no {source} model name after the colon"
    if not source:
        return "nothing before the colon (the module or FILE.py that holds the factory)"
    if not attr:
        return "nothing after the colon (the factory to call)"
    if not attr.isidentifier():
        return f"{attr!r} after the colon is not a Python name (the factory to call)"
    if os.path.basename(source) == ".py":
        return "no file name before .py"
    if source.endswith(".py") or all(part.isidentifier() for part in source.split(".")):
        return None
    return f"{source!r} before the colon is neither a FILE.py nor a module (PKG.MODULE)"
