"""The ``gpuscale`` command line: parse options, call the library, print. Nothing else.

``common`` holds the app and what the commands share; ``rounds`` (MLPerf), ``history``
(energy, trends), ``bench``,
``interconnect`` (collectives, topo), ``advice`` and ``plan`` register their commands on import.
"""

from __future__ import annotations

import gc
import sys

# Import order is registration order, the order --help lists the commands in.
# isort: off
from gpuscale.cli import rounds  # noqa: F401
from gpuscale.cli import history  # noqa: F401
from gpuscale.cli import bench  # noqa: F401
from gpuscale.cli import interconnect  # noqa: F401
from gpuscale.cli import advice  # noqa: F401
from gpuscale.cli import plan  # noqa: F401

# isort: on
from gpuscale.cli.common import app, err

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    finally:
        # The interpreter's final garbage collection walks every object of the scientific
        # stack (~0.3 s after a report) just before the memory is handed back anyway.
        gc.freeze()
