"""Energy to train per result: per sample, per accelerator-hour, and the compute share.

From the ``scores`` energy (the official rule over the kept runs, kJ) and the ``runs``
split into compute (nodes) and interconnect (switches):
``energy_per_sample_j = 1000 * energy_kj / samples_to_converge`` (where the convergence
count is in samples and not flagged as impossible),
``energy_per_accelerator_hour_kj = energy_kj / (N * T / 60)``.
"""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.metrics import plausible_samples
from gpuscale.tables import RoundTables, Unit


def energy_table(tables: RoundTables) -> pd.DataFrame:
    """Scores with an energy result and the derived energy columns."""
    scores = tables.scores.dropna(subset=["energy_kj"]).copy()
    if scores.empty:
        return scores
    kept = tables.runs[tables.runs["kept"].astype(bool)]
    parts = kept.groupby(["round", "org", "system_id", "benchmark"])[
        ["compute_energy_kj", "interconnect_energy_kj"]
    ].sum()
    keys = pd.MultiIndex.from_frame(scores[["round", "org", "system_id", "benchmark"]])
    compute = parts["compute_energy_kj"].reindex(keys).to_numpy()
    total = compute + parts["interconnect_energy_kj"].reindex(keys).to_numpy()
    scores["compute_share"] = compute / total
    hours = scores["accelerators"] * scores["time_to_train_min"] / 60.0
    scores["energy_per_accelerator_hour_kj"] = scores["energy_kj"] / hours
    per_sample = 1000.0 * scores["energy_kj"] / plausible_samples(scores)
    scores["energy_per_sample_j"] = per_sample.where(
        scores["convergence_unit"] == str(Unit.SAMPLES)
    )
    return scores.sort_values(["round", "benchmark", "accelerators"]).reset_index(drop=True)
