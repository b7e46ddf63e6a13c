"""Plan a training run from MLPerf: time to train on N devices, with an interval.

``plan(PlanRequest(...))`` (or ``plan(workload=..., accelerator=..., devices=...)``); the
model is in ``gpuscale.planning.model``, the family fit in ``gpuscale.planning.family``.
"""

from gpuscale.planning.api import PlanError, plan, resolve_family
from gpuscale.planning.request import PlanRequest, parse_devices

__all__ = ["PlanError", "PlanRequest", "parse_devices", "plan", "resolve_family"]
