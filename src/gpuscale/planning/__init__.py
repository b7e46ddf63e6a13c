"""Plan a training run from MLPerf: time to train on N devices, with an interval.

``plan(PlanRequest(...))`` (or ``plan(workload=..., accelerator=..., devices=...)``): a
DataFrame; ``plan_for`` the same plan as plain data (no pandas: what ``gpuscale plan``
prints). The model is in ``gpuscale.planning.pooled`` (fit) and ``predict``, its intervals
in ``calibrate``, the fits cached per data version in ``cache``.
"""

from typing import TYPE_CHECKING

from gpuscale.planning.request import PlanRequest, parse_devices

if TYPE_CHECKING:  # the lazy names' types; loaded by __getattr__ at run time
    from gpuscale.planning.api import plan
    from gpuscale.planning.result import PlanError, plan_for, resolve_family

__all__ = ["PlanError", "PlanRequest", "parse_devices", "plan", "plan_for", "resolve_family"]


def __getattr__(name: str) -> object:
    """``plan`` (pandas) from :mod:`gpuscale.planning.api`; ``PlanError``, ``plan_for`` and
    ``resolve_family`` from :mod:`gpuscale.planning.result`, imported on first use (PEP 562)."""
    if name == "plan":
        # lazy: pandas, kept off `gpuscale --help` and off `gpuscale plan`'s fast path
        from gpuscale.planning import api

        return api.plan
    if name in ("PlanError", "plan_for", "resolve_family"):
        # lazy: the accelerator catalogue and the fits, not needed for --help
        from gpuscale.planning import result

        return getattr(result, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
