"""``help(gpuscale.advise)`` and ``help(gpuscale.plan)`` are titled by the names they are
called by, with their own signatures and docstrings."""

from __future__ import annotations

import inspect
import pydoc

import pytest

import gpuscale
from gpuscale.advice.api import advise_by_keywords


@pytest.mark.parametrize("name", ["advise", "plan"])
def test_help_is_titled_by_the_name_called(name: str) -> None:
    function = getattr(gpuscale, name)
    text = pydoc.render_doc(function, renderer=pydoc.plaintext)
    title, body = text.split("\n\n", 1)
    assert title.startswith(f"Python Library Documentation: function {name} ")
    assert body.startswith(f"{name}(")
    assert (function.__name__, function.__qualname__) == (name, name)


def test_advise_keeps_its_signature_and_docstring() -> None:
    assert gpuscale.advise is gpuscale.advise  # one function, not one per lookup
    assert inspect.signature(gpuscale.advise) == inspect.signature(advise_by_keywords)
    assert gpuscale.advise.__doc__ == advise_by_keywords.__doc__
