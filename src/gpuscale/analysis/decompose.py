"""Why efficiency falls: speedup split into a throughput factor and a convergence factor.

Time to train is samples to converge over training throughput, ``T = samples / X`` (with
``X = samples / (60 T)`` samples per second, the run's own average). Hence exactly

    ``S = T_ref / T = (X / X_ref) * (samples_ref / samples)``
           throughput factor   convergence factor

and for normalised efficiency ``E' = S * N_ref / N``:

    ``E' = [(X / X_ref) * N_ref / N] * (samples_ref / samples)``
            throughput efficiency       convergence factor

The throughput efficiency is what the hardware and communication deliver per device; the
convergence factor falls below 1 when the larger global batch of a larger system needs
more samples to reach the quality target. ``samples`` is the RCP checker's count (samples
for BERT, the LLMs and Stable Diffusion, epochs for the others: the factors are ratios,
so the unit cancels; ``throughput_per_s`` is in that unit per second, ``convergence_unit``
says which). Rows without a count (e.g. open division), or with a count flagged as
impossible (``samples_to_converge_flag``), get NaN.

Beside the measured count, ``expected_samples_to_converge`` is what the round's
reference convergence points predict at the system's global batch, ``E(B) = E_min (1 +
B / B_noise)`` fitted to ``mlperf-logging``'s RCPs of the round's ruleset
(``gpuscale.analysis.critical_batch``), and ``samples_vs_expected`` their ratio: about 1
when a system converges as the references do, below 1 when its hyperparameters beat
them.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from gpuscale.analysis.critical_batch import ConvergenceModel, rcp_model_for
from gpuscale.analysis.equilibrium import fastest_per_count
from gpuscale.analysis.metrics import plausible_samples, study_reference, with_reference


def decompose(table: pd.DataFrame) -> pd.DataFrame:
    """A scaling table with the decomposition columns added (see the module docstring)."""
    out = table.copy()
    samples = plausible_samples(out)  # a flagged count is in no factor
    out["throughput_per_s"] = samples / (out["time_to_train_min"] * 60.0)
    ref = out.assign(_samples=samples).set_index(["org", "system_id"])  # stems repeat
    ref_keys = pd.MultiIndex.from_arrays([out["reference_org"], out["reference_system_id"]])
    ref_x = ref["throughput_per_s"].reindex(ref_keys).to_numpy(float)
    ref_samples = ref["_samples"].reindex(ref_keys).to_numpy(float)
    out["throughput_factor"] = out["throughput_per_s"].to_numpy(float) / ref_x
    out["convergence_factor"] = ref_samples / samples.to_numpy(float)
    out["throughput_efficiency"] = (
        out["throughput_factor"] * out["reference_accelerators"] / out["accelerators"]
    )
    out["expected_samples_to_converge"] = [
        expected_samples(str(r), str(b), g)
        for r, b, g in zip(out["round"], out["benchmark"], out["global_batch_size"], strict=True)
    ]
    out["samples_vs_expected"] = samples / out["expected_samples_to_converge"]
    return out


def family_decomposition(table: pd.DataFrame, family: str) -> pd.Series | None:
    """The family's largest system (the fastest at its largest accelerator count),
    decomposed against the family's own reference (the study's rule within the family):
    the row ``analyze --reference family --decompose`` prints for it, whatever reference
    ``table`` was computed with. None when the family has one accelerator count."""
    group = table[table["accelerator_family"] == family]
    if group["accelerators"].nunique() < 2:
        return None
    own = decompose(with_reference(group, study_reference(group)))
    return fastest_per_count(own).iloc[-1]


def expected_samples(round_name: str, benchmark: str, global_batch: float) -> float:
    """Samples (or epochs) the round's reference convergence points predict at a global
    batch; NaN without RCPs for it (or a batch)."""
    model = round_rcp_model(round_name, benchmark)
    if model is None or not global_batch > 0:
        return float("nan")
    return model.samples(float(global_batch))


@functools.lru_cache(maxsize=128)
def round_rcp_model(round_name: str, benchmark: str) -> ConvergenceModel | None:
    # lazy: gpuscale.mlperf loads the whole round reader (~0.3 s), kept off `gpuscale --help`
    from gpuscale.mlperf.rules import ruleset_for

    ruleset, _ = ruleset_for(round_name)
    return rcp_model_for(benchmark, ruleset) if ruleset else None


def dominant_loss(row: pd.Series) -> tuple[str, float]:
    """Which factor accounts for more of E' < 1, and its share of the (log) loss."""
    log_t = np.log(row["throughput_efficiency"])
    log_c = np.log(row["convergence_factor"])
    total = log_t + log_c
    if not np.isfinite(total) or total >= 0:
        return "none", 0.0
    losses = {"throughput": min(log_t, 0.0), "convergence": min(log_c, 0.0)}
    name = min(losses, key=losses.get)
    return name, float(losses[name] / (losses["throughput"] + losses["convergence"]))
