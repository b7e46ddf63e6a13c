"""How each workload moved across rounds, per accelerator family.

Rows are (workload, accelerator family, round) for every family with scored systems:
the best time to train at the family's most common accelerator count and at the largest
count submitted, the family-reference E' of that largest system, and the equilibrium
count (largest N keeping E' >= 0.8 x best, as ``analyze``). Benchmarks renamed between
rounds are joined by workload (``ssd`` -> ``retinanet``, ``gnn`` -> ``rgat``; a folder's
workload is what its round's ruleset says it was, so v1.1's ``ssd`` is ``ssd_resnet34``)
and said so; a workload missing from later rounds is flagged as retired, one missing from
earlier rounds as new, and where the first loaded round is not the workload's first round
in MLPerf (``first_rounds``, from ``gpuscale.mlperf.benchmarks.first_rounds``) the note
says "first in the loaded rounds". Each result counts once: a result republished in a
later round (same runs, ``gpuscale.tables.republished``) is left out of the later rounds
and the note says how many were (``republished=True`` keeps them).
"""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.equilibrium import equilibrium
from gpuscale.analysis.metrics import scaling_table
from gpuscale.tables import TREND_COLUMNS, round_key
from gpuscale.tables.republished import is_republished


def trends(
    scores: pd.DataFrame,
    workloads: list[str] | None = None,
    threshold: float = 0.8,
    *,
    republished: bool = False,
    first_rounds: dict[str, str] | None = None,
) -> pd.DataFrame:
    """The trend rows (columns: ``TREND_COLUMNS``), ordered by workload, family, round."""
    rounds = sorted(scores["round"].unique(), key=round_key)
    if "first_round" not in scores.columns:
        scores = scores.assign(first_round=scores["round"], republished_in="")
    copies = is_republished(scores) & scores["time_to_train_min"].notna()
    left_out = scores[copies].groupby(["workload", "accelerator_family", "round"]).size()
    if not republished:
        scores = scores[~copies]
    first_rounds = first_rounds or {}
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
                first = first_rounds.get(workload)
                earlier = first is not None and round_key(first) < round_key(r)
                if r == present[0] and earlier:
                    notes.append(f"first in the loaded rounds (in MLPerf since {first})")
                elif r == present[0] and r != rounds[0]:
                    notes.append(f"new in {r}")
                if r == present[-1] and r != rounds[-1]:
                    notes.append(f"retired after {r}")
                copies_here = int(left_out.get((workload, family, r), 0))
                if copies_here:
                    plural = "s" if copies_here > 1 else ""
                    notes.append(
                        f"{copies_here} republished result{plural} included"
                        if republished
                        else f"left out {copies_here} republished result{plural}"
                        " (counted in the round first showing it)"
                    )
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
    wanted = left_out[left_out.index.get_level_values("workload").isin(names)]
    # How many republished results were left out (0 with republished=True), for a summary.
    out.attrs["republished_left_out"] = 0 if republished else int(wanted.sum())
    if out.empty:
        return out
    order = {r: i for i, r in enumerate(rounds)}
    ordered = out.sort_values(
        ["workload", "accelerator_family", "round"],
        key=lambda c: c.map(order) if c.name == "round" else c,
        ignore_index=True,
    )
    ordered.attrs.update(out.attrs)
    return ordered
