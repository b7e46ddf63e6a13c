"""Builds small synthetic MLPerf rounds (system JSONs and MLLOG result logs) for tests."""

from __future__ import annotations

import ast
import io
import json
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuscale.mlperf.rules import KeyRule, rules_for

QUALITY = {
    "bert": 0.725,
    "ssd": 0.35,
    "retinanet": 0.35,
    "llama2_70b_lora": 0.92,
    "gnn": 0.73,
    "dlrm_dcnv2": 0.81,
}


def line(key: str, value: Any = None, time_ms: float = 0, prefix: str = "", **metadata: Any) -> str:
    payload = {
        "namespace": "",
        "time_ms": time_ms,
        "event_type": "POINT_IN_TIME",
        "key": key,
        "value": value,
        "metadata": {"file": "train.py", "lineno": 1, **metadata},
    }
    return f"{prefix}:::MLLOG {json.dumps(payload)}"


def _candidates(rule: KeyRule) -> list[Any]:
    """Values to try for a key: the constants its checks compare with, and neighbours."""
    found: list[Any] = []
    for check in rule.checks:
        for node in ast.walk(ast.parse(check.text, mode="eval")):
            if isinstance(node, ast.Constant) and node.value not in ("value", "metadata"):
                value = node.value
                found.append(value)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    found += [value * 2, value + 1, value / 2]
    return [*found, 1, 8, 0, 0.5, True, "x"]


def _solve(rule: KeyRule) -> Any:
    """A value that passes every stateless check of the key (the real rules)."""
    stateless = [c for c in rule.checks if not c.stateful]
    for value in _candidates(rule):
        if all(c({"value": value, "metadata": {}}) for c in stateless):
            return value
    return 1


def hyperparameter_lines(ruleset: str, division: str, benchmark: str, time_ms: float) -> list[str]:
    """One passing line for every key the benchmark's real rules require that the builder
    writes no line for (optimizer settings and the like)."""
    rules = rules_for(ruleset, division, benchmark)
    return [
        line(rule.name, _solve(rule), time_ms)
        for rule in rules.keys.values()
        if rule.name not in _WRITTEN
        and rule.req in ("EXACTLY_ONE", "AT_LEAST_ONE")
        and rule.at_least_one is None
        and not (rules.aggregate and rule.name == rules.aggregate[0])
    ]


_WRITTEN = frozenset(
    {
        "submission_org",
        "submission_platform",
        "submission_division",
        "submission_benchmark",
        "submission_status",
        "cache_clear",
        "seed",
        "global_batch_size",
        "train_samples",
        "eval_samples",
        "init_start",
        "init_stop",
        "run_start",
        "run_stop",
        "block_start",
        "block_stop",
        "epoch_start",
        "epoch_stop",
        "eval_start",
        "eval_stop",
        "eval_accuracy",
    }
)


def result_log(
    *,
    benchmark: str = "bert",
    ruleset: str = "4.1.0",
    division: str = "closed",
    minutes: float = 10.0,
    start_ms: float = 1_000_000,
    status: str = "success",
    converged: bool = True,
    gbs: int = 256,
    ranks: int = 1,
    noise: bool = True,
    run_stop: bool = True,
    seed: int = 1,
    samples: float = 1000.0,
) -> str:
    """A compliant result log (unless asked otherwise) taking ``minutes`` to train."""
    stop_ms = start_ms + minutes * 60_000
    header = [
        line("submission_org", "Acme", start_ms - 3000),
        line("submission_platform", "box", start_ms - 3000),
        line("submission_division", division, start_ms - 3000),
        line("submission_benchmark", benchmark, start_ms - 3000),
        line("submission_status", "onprem", start_ms - 3000),
        line("cache_clear", True, start_ms - 2500),
        line("seed", seed, start_ms - 2100),
        line("global_batch_size", gbs, start_ms - 2100),
        line("train_samples", 1000, start_ms - 2100),
        line("eval_samples", 100, start_ms - 2100),
        *hyperparameter_lines(ruleset, division, benchmark, start_ms - 2100),
    ]
    body: list[str] = []
    for rank in range(ranks):
        prefix = f"{rank}: " if ranks > 1 else ""
        body.append(line("init_start", None, start_ms - 2000, prefix))
    body.append(line("init_stop", None, start_ms - 10))
    for rank in range(ranks):
        body.append(line("run_start", None, start_ms, f"{rank}: " if ranks > 1 else ""))
    body.append(line("block_start", None, start_ms + 1, samples_count=0))
    body.append(line("eval_start", None, stop_ms - 2000, epoch_num=samples))
    body.append(line("eval_stop", None, stop_ms - 1500, epoch_num=samples))
    quality = QUALITY.get(benchmark, 0.9)
    value = quality if converged else quality / 2
    body.append(
        line("eval_accuracy", value, stop_ms - 1000, epoch_num=samples, samples_count=samples)
    )
    body.append(line("tracked_stats", {"throughput": 123.0}, stop_ms - 900, step=1))
    body.append(line("block_stop", None, stop_ms - 500, first_epoch_num=0))
    if run_stop:
        for rank in range(ranks):
            body.append(
                line("run_stop", None, stop_ms, f"{rank}: " if ranks > 1 else "", status=status)
            )
    lines = header + body
    if noise:
        lines = ["+ echo 'Beginning trial'", "Some stdout noise", *lines, "ENDING TIMING RUN"]
    return "\n".join(lines) + "\n"


def system_json(
    *,
    name: str = "box",
    nodes: Any = "1",
    per_node: Any = "8",
    model: str = "NVIDIA H100-SXM5-80GB",
    **extra: Any,
) -> dict[str, Any]:
    desc = {
        "submitter": "Acme",
        "division": "closed",
        "status": "Available on-premise",
        "system_name": name,
        "number_of_nodes": nodes,
        "host_processors_per_node": "2",
        "host_processor_model_name": "CPU",
        "host_processor_core_count": "56",
        "accelerators_per_node": per_node,
        "accelerator_model_name": model,
        "accelerator_interconnect": "NVLink",
        "host_networking": "IB",
        "framework": "PyTorch",
        "hw_notes": "",
        "sw_notes": "",
    }
    desc.update(extra)
    return desc


@dataclass
class RoundBuilder:
    """Files of a synthetic round, keyed by their path inside ``training_results_vX.Y``."""

    name: str = "training_results_v4.1"
    files: dict[str, bytes] = field(default_factory=dict)

    def system(self, org: str, system_id: str, **kwargs: Any) -> RoundBuilder:
        self.files[f"{org}/systems/{system_id}.json"] = json.dumps(
            system_json(name=system_id, **kwargs)
        ).encode()
        return self

    def runs(
        self, org: str, system_id: str, benchmark: str, minutes: list[float], **kwargs: Any
    ) -> RoundBuilder:
        ruleset = self.name.rsplit("_v", 1)[-1] + ".0"
        for i, m in enumerate(minutes):
            self.files[f"{org}/results/{system_id}/{benchmark}/result_{i}.txt"] = result_log(
                benchmark=benchmark, minutes=m, seed=i, ruleset=ruleset, **kwargs
            ).encode()
        return self

    def raw(self, rel: str, data: bytes | str) -> RoundBuilder:
        self.files[rel] = data.encode() if isinstance(data, str) else data
        return self

    def write_dir(self, parent: Path) -> Path:
        root = parent / self.name
        for rel, data in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return root

    def write_tar(
        self, parent: Path, compression: str = "xz", extra_members: dict[str, bytes] | None = None
    ) -> Path:
        suffix = {"": ".tar", "gz": ".tar.gz", "xz": ".tar.xz"}[compression]
        path = parent / f"{self.name}{suffix}"
        mode = f"w:{compression}" if compression else "w"
        with tarfile.open(path, mode) as tar:
            members = {f"{self.name}/{k}": v for k, v in self.files.items()}
            members.update(extra_members or {})
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return path

    def write_zip(self, parent: Path) -> Path:
        path = parent / f"{self.name}.zip"
        with zipfile.ZipFile(path, "w") as zf:
            for rel, data in self.files.items():
                zf.writestr(f"{self.name}/{rel}", data)
        return path
