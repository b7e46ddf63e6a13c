"""How each workload moved across rounds, per accelerator family.

Rows are (workload, accelerator family, round) for every family with scored systems:
the best time to train at the family's most common accelerator count and at the largest
count submitted, the family-reference E' of that largest system, and the equilibrium
count (largest N keeping E' >= 0.8 x best, as ``analyze``). Benchmarks renamed between
rounds are joined by workload (``ssd`` -> ``retinanet``, ``gnn`` -> ``rgat``) and said so;
a workload missing from later rounds is flagged as retired, one missing from earlier
rounds as new.
"""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.equilibrium import equilibrium
from gpuscale.analysis.metrics import scaling_table
from gpuscale.tables import TREND_COLUMNS, round_key


def trends(
    scores: pd.DataFrame, workloads: list[str] | None = None, threshold: float = 0.8
) -> pd.DataFrame:
    """The trend rows (columns: ``TREND_COLUMNS``), ordered by workload, family, round."""
    rounds = sorted(scores["round"].unique(), key=round_key)
    names = workloads or sorted(scores["workload"].unique())
    rows = []
    for workload in names:
        present = [
            r
            for r in rounds
            if (
                (scores["round"] == r)
                & (scores["workload"] == workload)
                & scores["time_to_train_min"].notna()
            ).any()
        ]
        if not present:
            continue
        folders = {
            r: sorted(
                scores.loc[
                    (scores["round"] == r) & (scores["workload"] == workload), "benchmark"
                ].unique()
            )
            for r in present
        }
        for r in present:
            table = scaling_table(scores[scores["round"] == r], workload, reference="family")
            for family, group in table.groupby("accelerator_family"):
                counts = group["accelerators"].value_counts()
                common = int(counts.index[0])
                largest = group.loc[group["accelerators"].idxmax()]
                eq = equilibrium(group, threshold=threshold)
                notes = []
                previous = [p for p in present if round_key(p) < round_key(r)]
                if previous and folders[previous[-1]] != folders[r]:
                    notes.append(f"renamed from {', '.join(folders[previous[-1]])}")
                if r == present[0] and r != rounds[0]:
                    notes.append(f"new in {r}")
                if r == present[-1] and r != rounds[-1]:
                    notes.append(f"retired after {r}")
                if largest["superlinear"]:  # E' at the largest count above 1, and why
                    notes.append(
                        f"E' {largest['normalized_efficiency']:.2f} above 1: "
                        f"{largest['superlinear']}"
                    )
                rows.append(
                    {
                        "workload": workload,
                        "accelerator_family": family,
                        "round": r,
                        "benchmark_folder": ", ".join(folders[r]),
                        "systems": len(group),
                        "common_accelerators": common,
                        "best_time_at_common_min": float(
                            group.loc[group["accelerators"] == common, "time_to_train_min"].min()
                        ),
                        "largest_accelerators": int(largest["accelerators"]),
                        "best_time_at_largest_min": float(
                            group.loc[
                                group["accelerators"] == largest["accelerators"],
                                "time_to_train_min",
                            ].min()
                        ),
                        "normalized_efficiency_at_largest": float(largest["normalized_efficiency"]),
                        "equilibrium_accelerators": eq.efficiency_threshold.accelerators
                        if eq.efficiency_threshold
                        else None,
                        "note": "; ".join(notes),
                    }
                )
    out = pd.DataFrame(rows, columns=list(TREND_COLUMNS))
    if out.empty:
        return out
    order = {r: i for i, r in enumerate(rounds)}
    return out.sort_values(
        ["workload", "accelerator_family", "round"],
        key=lambda c: c.map(order) if c.name == "round" else c,
        ignore_index=True,
    )
