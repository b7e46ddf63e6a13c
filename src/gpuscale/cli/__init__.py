"""The ``gpuscale`` command line: parse options, call the library, print. Nothing else.

``common`` holds the app, the options several commands declare alike and reading with a
progress bar; ``options`` makes a command's options from the requests it takes;
``output`` is everything printed (a library's table view drawn: ``show``); ``rounds`` (MLPerf),
``energy_trends`` (energy, trends), ``bench``, ``interconnect`` (collectives, topo),
``advice`` and ``plan`` register their commands on import.
"""

from __future__ import annotations

# Import order is registration order, the order --help lists the commands in.
# isort: off
from gpuscale.cli import rounds  # noqa: F401
from gpuscale.cli import energy_trends  # noqa: F401
from gpuscale.cli import bench  # noqa: F401
from gpuscale.cli import interconnect  # noqa: F401
from gpuscale.cli import advice  # noqa: F401
from gpuscale.cli import plan  # noqa: F401

# isort: on
from gpuscale.cli.common import app
from gpuscale.cli.options import OnceEach
from gpuscale.cli.output import err
from gpuscale.sources.signals import run_until_signalled
from gpuscale.tables.command_line import help_paragraphs

for _registered in app.registered_commands:  # every command's help, however registered
    _doc = _registered.help or (_registered.callback and _registered.callback.__doc__)
    _registered.help, _registered.cls = help_paragraphs(_doc) if _doc else None, OnceEach

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point: the app, ended cleanly by SIGINT, SIGTERM and SIGHUP
    (``gpuscale.sources.signals``)."""
    run_until_signalled(app, lambda text: err.print(text, highlight=False))
