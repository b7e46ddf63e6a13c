"""Plan a training run from MLPerf: time to train on N devices, with an interval.

``plan(PlanRequest(...))`` (or ``plan(workload=..., accelerator=..., devices=...)``); the
model is in ``gpuscale.planning.model``, the family fit in ``gpuscale.planning.family``.
"""

from typing import Any

from gpuscale.planning.request import PlanRequest, parse_devices

__all__ = ["PlanError", "PlanRequest", "parse_devices", "plan", "resolve_family"]


def __getattr__(name: str) -> Any:
    """``plan``, ``PlanError`` and ``resolve_family`` from :mod:`gpuscale.planning.api`,
    imported on first use (PEP 562)."""
    if name in ("PlanError", "plan", "resolve_family"):
        # lazy: pandas and the MLPerf data, kept off `gpuscale --help` (the CLI imports
        # planning.request at start, which runs this package first)
        from gpuscale.planning import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
