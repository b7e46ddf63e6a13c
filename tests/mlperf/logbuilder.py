"""Builds small synthetic MLPerf rounds (system JSONs and MLLOG result logs) for tests."""

from __future__ import annotations

import functools
import io
import json
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuscale.mlperf.rcp import rcp_points
from gpuscale.mlperf.rules import known_rulesets

from .rulesolver import Solver


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


@functools.lru_cache(maxsize=512)
def convergence_point(ruleset: str, benchmark: str) -> tuple[int, float]:
    """(global batch, samples or epochs to converge) of the benchmark's smallest RCP in
    its ruleset or the nearest ruleset with RCPs for it; (256, 1000) without any."""
    rulesets = sorted(known_rulesets(), key=lambda r: abs(_number(r) - _number(ruleset)))
    for other in rulesets:
        points = rcp_points(other, benchmark)
        if points:
            return int(points[0][0]), points[0][1]
    return 256, 1000.0


def _number(ruleset: str) -> float:
    major, minor, _ = (int(x) for x in ruleset.split("."))
    return major + minor / 100


def _v(value: Any = None, **metadata: Any) -> dict[str, Any]:
    """A line's ``v``: its value and metadata."""
    return {"value": value, "metadata": metadata}


# Keys result_log writes itself; every other key the rules require gets a solved line.
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
        "weights_initialization",
        "tracked_stats",
    }
)


@dataclass
class _Lines:
    """The lines of one log being written, each one fed to the solver's state."""

    solver: Solver
    out: list[str] = field(default_factory=list)

    def put(self, key: str, v: dict[str, Any], time_ms: float, prefix: str = "") -> None:
        self.out.append(line(key, v["value"], time_ms, prefix, **v["metadata"]))
        self.solver.written(key, v)

    def solved(self, key: str, time_ms: float, wanted: Any = None) -> None:
        self.put(key, self.solver.solve(key, wanted=wanted), time_ms)


def _header(
    lines: _Lines, names: tuple[str, str, str, str, str], t: float, solve: dict[str, Any]
) -> None:
    """The submission lines, then the hyperparameters (``solve``: wanted values)."""
    for key, value in zip(
        (
            "submission_org",
            "submission_platform",
            "submission_division",
            "submission_benchmark",
            "submission_status",
        ),
        names,
        strict=True,
    ):
        lines.put(key, _v(value), t - 3000)
    lines.put("cache_clear", _v(True), t - 2500)
    for key, wanted in solve.items():
        if wanted is not None or key in lines.solver.rules.keys:
            lines.solved(key, t - 2100, wanted)
    for key in lines.solver.required(_WRITTEN):
        lines.solved(key, t - 2100)


def _evals(lines: _Lines, stop_ms: float, samples: float, converged: bool) -> None:
    """The evaluation lines: one passing (or, not converged, failing) quality line, or
    for an aggregated quality (Stable Diffusion's FID and CLIP) two groups of evals."""
    sol = lines.solver
    rules = sol.rules
    lines.put("eval_start", _v(epoch_num=samples), stop_ms - 2000)
    lines.put("eval_stop", _v(epoch_num=samples), stop_ms - 1500)
    if rules.aggregate:
        group = rules.aggregate[1]
        for k, (fid, clip) in enumerate(((120.0, 0.1), (80.0, 0.2) if converged else (95, 0.1))):
            at = samples * (k + 1) / 2
            for metric, value in (("FID", fid), ("CLIP", clip)):
                meta = {"epoch_num": at, "samples_count": at, group: at, "metric": metric}
                lines.put("eval_accuracy", {"value": value, "metadata": meta}, stop_ms - 1000)
        return
    base = {"value": None, "metadata": {"epoch_num": samples}}
    v = sol.solve("eval_accuracy", ("metadata", "samples_count"), base=base, wanted=samples)
    quality_key = rules.quality.name if rules.quality else "eval_accuracy"
    v = sol.solve(quality_key, ("value",), base=v, quality=converged)
    lines.put(quality_key, v, stop_ms - 1000)


def result_log(
    *,
    benchmark: str = "bert",
    ruleset: str = "4.1.0",
    division: str = "closed",
    minutes: float = 10.0,
    start_ms: float = 1_000_000,
    status: str = "success",
    converged: bool = True,
    gbs: int | None = 256,
    ranks: int = 1,
    noise: bool = True,
    run_stop: bool = True,
    seed: int = 1,
    samples: float | None = None,
    org: str = "Acme",
    platform: str = "box",
) -> str:
    """A log that passes the ruleset's own rules for the benchmark (unless asked
    otherwise) and takes ``minutes`` to train. ``gbs`` None writes no global batch (as
    MiniGo's logs); a value the rules refuse is replaced by one they take. The values the
    rules fix or constrain are solved from the rules (``rulesolver``); ``samples`` is
    the evaluation's progress where the rules leave it free."""
    stop_ms = start_ms + minutes * 60_000
    lines = _Lines(Solver.of(ruleset, division, benchmark))
    names = (org, platform, division, benchmark, "onprem")
    solve = {"seed": seed, "global_batch_size": gbs, "train_samples": 1000, "eval_samples": 100}
    if gbs is None:
        del solve["global_batch_size"]
    _header(lines, names, start_ms, solve)
    prefixes = [f"{rank}: " if ranks > 1 else "" for rank in range(ranks)]
    for prefix in prefixes:
        lines.put("init_start", _v(), start_ms - 2000, prefix)
    for tensor in lines.solver.tensors():
        lines.put("weights_initialization", _v(tensor=tensor), start_ms - 1000)
    lines.put("init_stop", _v(), start_ms - 10)
    for prefix in prefixes:
        lines.put("run_start", _v(), start_ms, prefix)
    lines.put("block_start", _v(samples_count=0, first_epoch_num=0, epoch_count=1), start_ms + 1)
    _evals(lines, stop_ms, samples, converged)
    lines.put("tracked_stats", _v({"throughput": 123.0}, step=1), stop_ms - 900)
    lines.put("block_stop", _v(first_epoch_num=0), stop_ms - 500)
    for prefix in prefixes if run_stop else []:
        lines.put("run_stop", _v(status=status), stop_ms, prefix)
    out = lines.out
    if noise:
        out = ["+ echo 'Beginning trial'", "Some stdout noise", *out, "ENDING TIMING RUN"]
    return "\n".join(out) + "\n"


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
        start = kwargs.pop("start_ms", 1_000_000)
        for i, m in enumerate(minutes):
            # each run its own start (a minute apart), as real runs have: two runs of one
            # result with the same start and stop are one run published twice
            self.files[f"{org}/results/{system_id}/{benchmark}/result_{i}.txt"] = result_log(
                benchmark=benchmark,
                minutes=m,
                seed=i,
                ruleset=ruleset,
                start_ms=start + i * 60_000,
                **kwargs,
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
