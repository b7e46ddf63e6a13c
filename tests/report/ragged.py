"""A small scores table and the values real old rounds lack: what the property test of
every command over missing values (``test_missing_values.py``) builds its tables from.

``base_rows`` is one round of two workloads and two accelerator families, each system with
every field a scored result has; ``with_holes`` blanks chosen cells of the columns a
published round may leave empty (``NULLABLE``: every column of ``SCORES_SCHEMA`` but the
key and the run counts, which the reader always fills), as v0.7 leaves a system's
accelerator count, a result's global batch and its samples to converge empty.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd

from gpuscale.mlperf.rules import result_file_counts
from gpuscale.tables import RoundTables
from gpuscale.tables.rounds import (
    PROBLEMS_SCHEMA,
    RUNS_SCHEMA,
    SCORES_SCHEMA,
    SYSTEMS_SCHEMA,
    frame_of,
)

from ..mlperf.logbuilder import RoundBuilder, line, system_json
from ..mlperf.synthetic_rounds import HARDWARE

# Filled by the reader for every row: the key of a result and its run counts.
ALWAYS = (
    "round",
    "org",
    "system_id",
    "benchmark",
    "workload",
    "runs",
    "runs_converged",
    "runs_required",
    "kept_runs",
)
NULLABLE = tuple(c for c in SCORES_SCHEMA if c not in ALWAYS)

# (submitter, family, accelerators, minutes) per workload: three submitters of one family
# at 8 and two of them beyond, and a second family at 8 and 16.
_SYSTEMS = (
    ("Acme", "H100-SXM5-80GB", 8, 30.0),
    ("Bolt", "H100-SXM5-80GB", 8, 31.0),
    ("Core", "H100-SXM5-80GB", 8, 29.5),
    ("Acme", "H100-SXM5-80GB", 16, 17.0),
    ("Bolt", "H100-SXM5-80GB", 32, 10.0),
    ("Dyna", "B200", 8, 15.0),
    ("Dyna", "B200", 16, 8.5),
)
# (workload, global batch per accelerator, samples to converge, convergence unit)
_WORKLOADS = (
    ("bert", 48, 3_000_000.0, "samples"),
    ("llama2_70b_lora", 1, 3_000.0, "samples"),
)


def base_rows(round_name: str = "v4.1") -> list[dict[str, object]]:
    """One scored result per system and workload, every field given."""
    return rows_of(_SYSTEMS, _WORKLOADS, round_name)


def rows_of(
    systems: tuple[tuple[str, str, int, float], ...],
    workloads: tuple[tuple[str, int, float, str], ...] = _WORKLOADS[:1],
    round_name: str = "v4.1",
) -> list[dict[str, object]]:
    """One scored result per system (submitter, family, accelerators, minutes) and
    workload (name, global batch per accelerator, samples to converge, their unit), every
    field given (a workload after the first takes 1.7x the minutes)."""
    rows = []
    for w, (workload, per_device, samples, unit) in enumerate(workloads):
        for k, (submitter, family, n, minutes) in enumerate(systems):
            scale = 1.0 if w == 0 else 1.7
            rows.append(
                {
                    "round": round_name,
                    "org": submitter,
                    "submitter": submitter,
                    "system_id": f"{submitter.lower()}_{family.lower()}_n{n}_{k}",
                    "system_name": f"{submitter} {n}x{family}",
                    "division": "closed",
                    "availability": "available",
                    "accelerator_family": family,
                    "accelerator_model": f"NVIDIA {family}",
                    "nodes": max(1, n // 8),
                    "accelerators": n,
                    "benchmark": workload,
                    "workload": workload,
                    "runs": 10,
                    "runs_converged": 10,
                    "runs_required": 10,
                    "scaling_factor": 1.0,
                    "time_to_train_min": minutes * scale,
                    "score_reason": "",
                    "kept_runs": 8,
                    "global_batch_size": float(per_device * n),
                    "samples_to_converge": samples * (1 + n / 512),
                    "convergence_unit": unit,
                    "samples_to_converge_flag": "",
                    "source": "synthetic",
                    "energy_kj": 1_000.0 * n,
                    "first_round": round_name,
                    "republished_in": "",
                    "same_runs_as": "",
                    "log_flag": "",
                }
            )
    return rows


def with_holes(rows: list[dict[str, object]], holes: Mapping[str, set[int]]) -> pd.DataFrame:
    """The scores frame of ``rows`` with the cells ``holes`` names (column -> row
    positions) left empty, as a reader leaves a field a log or a system file lacks."""
    blanked = [
        {c: (None if i in holes.get(c, ()) else v) for c, v in row.items()}
        for i, row in enumerate(rows)
    ]
    return frame_of(SCORES_SCHEMA, blanked)


def tables_of(scores: pd.DataFrame) -> RoundTables:
    """Round tables holding ``scores`` alone (no systems, runs or problems rows)."""
    return RoundTables(
        frame_of(SYSTEMS_SCHEMA), frame_of(RUNS_SCHEMA), scores, frame_of(PROBLEMS_SCHEMA)
    )


# What the bare system's file lacks: every field a score copies from its system
BARE_LACKS = (
    "number_of_nodes",
    "accelerators_per_node",
    "submitter",
    "system_name",
    "division",
    "status",
    "accelerator_model_name",
)


def with_ragged(rb: RoundBuilder, ruleset: str, benchmark: str) -> RoundBuilder:
    """``rb``, a synthetic round of ``ruleset`` (``tests/mlperf/synthetic_rounds``), with
    more systems of its main family running ``benchmark`` whose files lack what real
    rounds lack (``RAGGED``): results without a system file; a system file without its
    node and accelerator counts, submitter, name, division, availability and accelerator
    (``BARE_LACKS``); logs without a global batch (so no samples to converge in samples);
    logs without the throughput they track; and power logs with no reading, for half the
    runs only."""
    model = HARDWARE[ruleset][0][1]
    minutes = [40.0 * (1 + 0.01 * i) for i in range(result_file_counts().get(benchmark, 5))]
    bare = system_json(name="bare", model=model)
    for field in BARE_LACKS:
        del bare[field]
    rb.raw("Acme/systems/bare.json", json.dumps(bare))
    rb.runs("Acme", "bare", benchmark, minutes)
    rb.runs("Acme", "nofile", benchmark, [m + 4 for m in minutes])  # no system file at all
    for system_id in ("nobatch", "nothroughput", "powerless"):
        rb.system("Acme", system_id, nodes="1", per_node="8", model=model)
    # each its own runs (the same runs under two names would be read as one result)
    rb.runs("Acme", "nobatch", benchmark, [m + 1 for m in minutes], gbs=None)
    rb.runs("Acme", "nothroughput", benchmark, [m + 2 for m in minutes])
    for rel in [r for r in rb.files if "/nothroughput/" in r]:
        kept = [x for x in rb.files[rel].decode().splitlines() if "tracked_stats" not in x]
        rb.files[rel] = ("\n".join(kept) + "\n").encode()
    rb.runs("Acme", "powerless", benchmark, [m + 3 for m in minutes])
    for i in range(len(minutes) // 2):  # power for half the runs, and none readable
        stem = f"Acme/results/powerless/{benchmark}/power/result_{i}"
        rb.raw(f"{stem}/node_0.txt", line("power_measurement_start", None, 0))
    return rb


RAGGED = ("bare", "nofile", "nobatch", "nothroughput", "powerless")  # the system ids it adds
