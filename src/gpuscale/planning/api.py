"""``gpuscale.planning``: time to train on N devices of an accelerator, from MLPerf.

Returns the plan table (``gpuscale.tables.plan.PLAN_COLUMNS``, one row per device count)
with ``attrs["notes"]`` (the sentences saying which law, which rounds, what was
extrapolated or borrowed) and ``attrs["model"]`` (the fitted model's facts). Prints
nothing; bad input raises ``ValueError`` (``UnknownNameError``, ``PlanError``) with a
message for people.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from gpuscale.analysis.equilibrium import equilibrium
from gpuscale.mlperf.accelerators import UNKNOWN_FAMILY, normalise_accelerator
from gpuscale.mlperf.bundled import load_round
from gpuscale.names import _key, resolve_choice, resolve_workloads
from gpuscale.planning.family import FamilyModel, PlanError, borrow, fit_family
from gpuscale.planning.request import PlanRequest
from gpuscale.tables.plan import PLAN_COLUMNS
from gpuscale.tables.workloads import round_key


def resolve_family(name: str, valid: list[str]) -> tuple[str, str]:
    """The accelerator family ``name`` means among ``valid``, and a note when it was read
    (``H100`` -> ``H100-SXM5-80GB``: the catalogue's default form factor and memory).
    Exact family names, then the accelerator catalogue, then unambiguous prefixes;
    ``UnknownNameError`` (with the closest name) otherwise."""
    exact = [v for v in valid if _key(v) == _key(name)]
    if exact:
        return exact[0], ""
    known = normalise_accelerator(name)
    if known.known and known.family in valid:
        return known.family, f"{name!r} read as the accelerator family {known.family}"
    found = resolve_choice(name, valid, "accelerator family")
    return found, f"{name!r} read as the accelerator family {found}"


def _model_for(scores: pd.DataFrame, workload: str, family: str) -> FamilyModel:
    fitted = fit_family(scores, workload, family)
    return fitted if fitted is not None else borrow(scores, workload, family)


def _equilibrium_marks(table: pd.DataFrame, family: str, workload: str, threshold: float):
    """(Pareto mask, criteria picking each count) of the predicted counts."""
    n = table["devices"].to_numpy(float)
    t = table["minutes"].to_numpy(float)
    speedup = t[0] / t
    frame = pd.DataFrame(
        {
            "workload": workload,
            "org": "plan",
            "submitter": "plan",
            "system_id": [str(int(x)) for x in n],
            "system_name": [f"{int(x)} x {family}" for x in n],
            "accelerator_family": family,
            "accelerators": n.astype(int),
            "time_to_train_min": t,
            "gpu_hours": n * t / 60,
            "speedup": speedup,
            "efficiency": speedup / n,
            "normalized_efficiency": speedup * n[0] / n,
        }
    )
    result = equilibrium(frame, threshold=threshold, scope=family)
    pareto = frame["system_id"].map(lambda s: f"plan/{s}" in result.pareto).to_numpy()
    picks: dict[int, list[str]] = {}
    for pick in result.picks:
        picks.setdefault(pick.accelerators, []).append(pick.label)
    return pareto, [", ".join(picks.get(int(x), [])) for x in n]


def _notes(model: FamilyModel, request: PlanRequest, asked: str, read_as: str) -> list[str]:
    fitted = model.choice.fitted
    params = {
        "ideal": "",
        "power": f" (exponent {fitted.params[0]:.2f})" if fitted.params else "",
        "amdahl": f" (serial fraction {1 - fitted.params[0]:.3f})" if fitted.params else "",
        "usl": f" (contention {fitted.params[0]:.3g}, coherency {fitted.params[1]:.3g})"
        if len(fitted.params) == 2
        else "",
    }[fitted.law]
    tested = {law: v for law, v in model.choice.scores.items() if np.isfinite(v)}
    chosen = (
        "chosen by leave-one-system-out error ("
        + ", ".join(f"{law} {100 * v:.1f}%" for law, v in tested.items())
        + ")"
        if tested
        else "taken as the default: no law can be tested by leaving a system out"
    )
    rounds = sorted(set(model.systems["round"].astype(str)), key=round_key)
    notes = [read_as] if read_as else []
    if model.borrowed_from:
        notes.append(
            f"No {model.family} system ran {model.workload}: times are those of "
            f"{model.borrowed_from}; every count is marked extrapolated and the interval "
            "widened. Memory is not modelled: check that the model fits this part."
        )
    notes.append(
        f"Model: time = samples to converge at the batch / throughput; the throughput law is "
        f"{fitted.law}{params}, {chosen}, over "
        f"{len(model.systems)} measured system(s) of rounds {', '.join(rounds)} (republished "
        f"results counted once), each round at its own level; the plan uses the newest, "
        f"{model.latest_round}."
    )
    a, b = model.batch
    if model.rcp is not None:
        notes.append(
            f"Global batch B = {math.exp(a):.3g} x N^{b:.2f} (fitted on the submissions); "
            f"samples to converge E(B) from the {model.rcp.source}."
        )
    else:
        notes.append("No reference convergence points: the batch's effect is not modelled.")
    measured = model.measured
    outside = [d for d in request.devices if d < measured.min() or d > measured.max()]
    if outside and not model.borrowed_from:
        notes.append(
            f"{', '.join(map(str, outside))} devices lie outside the measured "
            f"{int(measured.min())}-{int(measured.max())}: extrapolated, intervals widened."
        )
    if request.interconnect:
        notes.append(f"Interconnect {request.interconnect!r} noted, not modelled.")
    return notes


def plan(
    request: PlanRequest | None = None,
    *,
    scores: pd.DataFrame | None = None,
    **fields: Any,
) -> pd.DataFrame:
    """The plan table for ``request`` (or a request built from ``fields``), on ``scores``
    (default: the bundled rounds)."""
    if request is None:
        request = PlanRequest(**fields)
    elif fields:
        raise TypeError("give a PlanRequest or its fields as keywords, not both")
    return plan_and_model(request, scores)[0]


def plan_and_model(
    request: PlanRequest, scores: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, FamilyModel]:
    """:func:`plan`'s table and the fitted model behind it (``model.predict`` draws the
    curve at any other count without fitting again)."""
    if scores is None:
        scores = load_round().scores
    if scores.empty:
        raise PlanError("no MLPerf results in the data given")
    workload = resolve_workloads([request.workload], scores["workload"].dropna().unique())[0]
    # a system that names no accelerator is in no family one could plan for
    families = sorted(set(scores["accelerator_family"].dropna().astype(str)) - {UNKNOWN_FAMILY})
    family, read_as = resolve_family(request.accelerator, families)
    model = _model_for(scores, workload, family)
    table = model.predict(list(request.devices))
    n = table["devices"].to_numpy(float)
    tau, e = np.exp(table["log_tau"].to_numpy()), table["expected_samples"].to_numpy()
    table = table.drop(columns="log_tau")
    table["nodes"] = np.ceil(n / request.devices_per_node).astype(int)
    table["throughput_efficiency"] = tau[0] * n[0] / (tau * n)
    table["convergence_factor"] = e[0] / e
    table["nearest"] = [model.nearest(int(x)) for x in n]
    table["device_hours"] = n * table["minutes"] / 60
    price, power = request.price_per_device_hour, request.power_w
    table["cost"] = table["device_hours"] * (price if price is not None else math.nan)
    table["energy_kwh"] = table["device_hours"] * (power / 1000 if power is not None else math.nan)
    table["pareto"], table["stops_paying"] = _equilibrium_marks(
        table, family, workload, request.threshold
    )
    table = table[list(PLAN_COLUMNS)]
    table.attrs["notes"] = _notes(model, request, request.accelerator, read_as)
    table.attrs["model"] = {
        "workload": workload,
        "family": family,
        "law": model.choice.fitted.law,
        "params": list(model.choice.fitted.params),
        "loo_error": dict(model.choice.scores),
        "latest_round": model.latest_round,
        "systems": len(model.systems),
        "sigma_log": model.sigma,
        "borrowed_from": model.borrowed_from,
    }
    return table, model


__all__ = ["PlanError", "PlanRequest", "plan", "plan_and_model", "resolve_family"]
