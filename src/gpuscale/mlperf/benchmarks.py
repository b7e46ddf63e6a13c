"""What a benchmark folder of a round was: its workload, from the round's own ruleset.

A folder name does not say which benchmark it held: ``ssd`` is SSD-ResNet34 (COCO mAP
target 0.23) up to ruleset 1.1.0 and RetinaNet (mAP 0.34) from 2.0.0 on. The workload is
decided by the quality target the ruleset's closed config sets for the folder's
benchmark (``ATLEAST_ONE_CHECK``), matched against ``gpuscale.tables.workloads.TARGETS``;
a folder without such a distinction keeps the cross-round name ``workload_of`` gives.
"""

from __future__ import annotations

import ast
import functools

from gpuscale.mlperf.rules import rules_for, ruleset_for
from gpuscale.tables import benchmark_of_folder, workload_of
from gpuscale.tables.workloads import TARGETS


@functools.lru_cache(maxsize=256)
def quality_target(ruleset: str, benchmark: str) -> float | None:
    """The number the closed quality check compares the metric with (``v['value'] >=
    0.23`` -> 0.23); None when the ruleset has no such check for the benchmark."""
    rules = rules_for(ruleset, "closed", benchmark)
    quality = rules.quality
    if rules.missing or quality is None or quality.at_least_one is None:
        return None
    tree = ast.parse(quality.at_least_one.text, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.GtE | ast.Gt):
            bound = node.comparators[0]
            if isinstance(bound, ast.Constant) and isinstance(bound.value, int | float):
                return float(bound.value)
    return None


@functools.lru_cache(maxsize=1024)
def workload_in_round(folder: str, round_name: str) -> str:
    """The workload a round's benchmark folder held (``ssd`` in v1.1 -> ``ssd_resnet34``)."""
    benchmark = benchmark_of_folder(folder)
    candidates = TARGETS.get(benchmark)
    ruleset, _ = ruleset_for(round_name)
    if not candidates or ruleset is None:
        return workload_of(folder)
    target = quality_target(ruleset, benchmark)
    if target is None:
        return workload_of(folder)
    return min(candidates, key=lambda c: abs(c[1] - target))[0]
