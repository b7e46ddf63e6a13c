"""Plan a training run from MLPerf: time to train on N devices, with an interval.

``plan(PlanRequest(...))`` (or ``plan(workload=..., accelerator=..., devices=...)``); the
model is in ``gpuscale.planning.model``, the family fit in ``gpuscale.planning.family``.
"""

from typing import Any

from gpuscale.planning.request import PlanRequest, parse_devices

__all__ = ["PlanError", "PlanRequest", "parse_devices", "plan", "resolve_family"]


def __getattr__(name: str) -> Any:
    """The plan model's names, loaded when first asked for: ``gpuscale --help`` reads the
    request's option help (``planning.request``) without pandas."""
    if name in ("PlanError", "plan", "resolve_family"):
        from gpuscale.planning import api  # lazy: pandas (the plan model), not for --help

        return getattr(api, name)
    raise AttributeError(f"module 'gpuscale.planning' has no attribute {name!r}")
