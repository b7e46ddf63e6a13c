"""What a benchmark folder of a round was: its workload, from the round's own ruleset.

A folder name does not say which benchmark it held: ``ssd`` is SSD-ResNet34 (COCO mAP
target 0.23) up to ruleset 1.1.0 and RetinaNet (mAP 0.34) from 2.0.0 on. The workload is
decided by the quality target the ruleset's closed config sets for the folder's
benchmark (``ATLEAST_ONE_CHECK``), matched against ``gpuscale.tables.workloads.TARGETS``;
a folder without such a distinction keeps the cross-round name ``workload_of`` gives. A
ruleset without a target for the benchmark (0.6.0, or a folder its rules no longer name)
takes the target of the nearest ruleset that has one.
"""

from __future__ import annotations

import ast
import functools

from gpuscale.mlperf.rules import (
    _ruleset_config,
    benchmarks_of,
    known_rulesets,
    quality_key,
    rules_for,
    ruleset_for,
)
from gpuscale.tables import benchmark_of_folder, workload_of
from gpuscale.tables.workloads import TARGETS


@functools.lru_cache(maxsize=256)
def quality_target(ruleset: str, benchmark: str) -> float | None:
    """The number the closed quality check compares the metric with, higher or lower
    better (``v['value'] >= 0.23`` -> 0.23, ``(v['value'] <= 0.925) and v['value'] > 0.0``
    -> 0.925, not its 0.0); None when the ruleset has no such check for the benchmark."""
    rules = rules_for(ruleset, "closed", benchmark)
    quality = rules.quality if not rules.missing else None
    if quality is None:  # 0.6.0: one config per benchmark, no division
        config = _ruleset_config(ruleset, f"{benchmark}.yaml")
        quality = quality_key(getattr(config, "keys", {}))
    if quality is None or quality.at_least_one is None:
        return None
    tree = ast.parse(quality.at_least_one.text, mode="eval")
    # the target is the metric's inclusive bound ("reach the target"); the strict ones
    # bound it on the other side (``< 1.0`` for an accuracy, ``> 0.0`` for a loss)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue  # a chained range (``0.0 <= FID <= 90.0``) names no one target
        if isinstance(node.ops[0], ast.GtE | ast.LtE):
            sides = (node.left, node.comparators[0])
            numbers = [s.value for s in sides if _is_number(s)]
            if len(numbers) == 1 and any(_is_metric(s) for s in sides):
                return float(numbers[0])
    return None


def _is_number(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    )


def _is_metric(node: ast.expr) -> bool:
    """``v['value']`` or ``v['value']['BBOX']``: the logged metric, not a setting (``s``)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "v"


@functools.lru_cache(maxsize=1024)
def workload_in_round(folder: str, round_name: str) -> str:
    """The workload a round's benchmark folder held (``ssd`` in v1.1 -> ``ssd_resnet34``)."""
    benchmark = benchmark_of_folder(folder)
    candidates = TARGETS.get(benchmark)
    ruleset, _ = ruleset_for(round_name)
    if not candidates or ruleset is None:
        return workload_of(folder)
    target = quality_target(ruleset, benchmark)
    if target is None:  # no target in this ruleset: the nearest ruleset's that has one
        known = [(r, t) for r in known_rulesets() if (t := quality_target(r, benchmark))]
        if not known:
            return workload_of(folder)
        nearest = min(known, key=lambda rt: abs(_number(rt[0]) - _number(ruleset)))
        target = nearest[1]
    return min(candidates, key=lambda c: abs(c[1] - target))[0]


def _number(ruleset: str) -> float:
    major, minor, *_ = (int(x) for x in ruleset.split("."))
    return major + minor / 100


@functools.lru_cache(maxsize=1)
def first_rounds() -> dict[str, str]:
    """{workload: the first round whose ruleset has it} over mlperf-logging's rulesets
    (``benchmark_meta``): e.g. ``stable_diffusion`` -> ``v3.1``."""
    out: dict[str, str] = {}
    for ruleset in known_rulesets():
        round_name = "v" + ruleset.rsplit(".", 1)[0]
        for folder in benchmarks_of(ruleset):
            out.setdefault(workload_in_round(folder, round_name), round_name)
    return out


@functools.lru_cache(maxsize=1)
def last_rounds() -> dict[str, str]:
    """{workload: the last round whose ruleset has it} for the workloads the newest
    ruleset in mlperf-logging no longer has (retired): e.g. ``bert`` -> ``v5.0``,
    ``llama31_405b`` -> ``v6.0``. A workload still in the newest rules is not in it."""
    out: dict[str, str] = {}
    rulesets = known_rulesets()
    for ruleset in rulesets:
        round_name = "v" + ruleset.rsplit(".", 1)[0]
        for folder in benchmarks_of(ruleset):
            out[workload_in_round(folder, round_name)] = round_name
    newest = "v" + rulesets[-1].rsplit(".", 1)[0] if rulesets else None
    return {w: r for w, r in out.items() if r != newest}
