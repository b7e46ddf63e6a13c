"""``advise -f csv`` says on stderr every warning the default answer says (a new user's
walk: docs/advice.md's 300M llama2_70b_lora example said "IMPLAUSIBLE: 1 device predicted
to train in 0.0422 min ..." by default and nothing with ``-f csv``; a bench file with
flagged runs, read with ``--allow-flagged``, lost "WARNING: 1 flagged run used"), and
stdout stays the CSV alone."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.plausibility import FlagKind

H100 = Path(__file__).parents[1] / "advice" / "h100_resnet50_bf16.jsonl"
BUSY = f"{FlagKind.BUSY}: other processes used 30% of its CPU time during the timed steps"
# docs/advice.md's opening example, less its -f json: the command line, and the same request
LORA = "--params 300M --step-ms 10 --batch 16 --nodes 4 --gpus-per-node 8 --interconnect nvlink4"
LORA_ARGV = [*LORA.split(), "--inter-node", "ib-ndr400", "--workload", "llama2_70b_lora"]
LORA_REQUEST = {"params": 3e8, "step_ms": 10, "batch": 16, "nodes": 4, "gpus_per_node": 8}
LORA_REQUEST |= {"link": "nvlink4", "inter_node": "ib-ndr400", "workload": "llama2_70b_lora"}


def _csv(argv: list[str]) -> tuple[list[dict[str, str]], str]:
    """The rows -f csv prints on stdout, and its stderr, one line per note."""
    result = CliRunner().invoke(app, ["advise", *argv, "-f", "csv"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout))), " ".join(result.stderr.split())


def test_an_implausible_time_is_said_on_stderr_with_csv() -> None:
    advice = gpuscale.advise(**LORA_REQUEST)
    assert advice.below_mlperf  # the premise: every count predicted under MLPerf's fastest
    warnings = advice.decision.warnings
    assert any(w.startswith("IMPLAUSIBLE") for w in warnings)
    rows, stderr = _csv(LORA_ARGV)
    assert [int(r["accelerators"]) for r in rows] == list(advice.predictions["accelerators"])
    for warning in warnings:  # each whole (unwrapped), as the answer says it
        assert " ".join(warning.split()) in stderr


def test_flagged_runs_used_are_said_on_stderr_with_csv(tmp_path: Path) -> None:
    records = [json.loads(line) for line in H100.read_text(encoding="utf-8").splitlines()]
    records[-1]["flags"] = [*(records[-1].get("flags") or []), BUSY]  # its N = 2 run
    path = tmp_path / "one flagged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    # the command's words: the option named as the command line names it
    advice = replace(gpuscale.advise(bench=path, allow_flagged=True), keywords=False)
    assert advice.calibration.runs.evidence.untrusted == 1  # the premise: one flagged, used
    warnings = advice.decision.warnings
    assert warnings and all(w.startswith("WARNING") for w in warnings)
    rows, stderr = _csv(["--bench", str(path), "--allow-flagged"])
    assert len(rows) == len(advice.predictions)
    for warning in warnings:
        assert " ".join(warning.split()) in stderr
