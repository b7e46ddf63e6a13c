"""The snapshot that guards a refactor of the advice (issue 71 item 4): for each bench file
in the repository, each shared H100 bench file (``../shared/gpu/h100``, skipped without
it) and each by-numbers example the docs show, the ``advise -f json`` document compared
with its golden record (``golden/<case>.json``) number by number (relative 1e-9) and
string by string, and the default answer and ``--explain`` compared with their golden
texts (``tests/golden/advice/answer.json``, ``explain.json``).

``pytest --update-golden`` rewrites the records and texts that differ; review the diff.

Each case runs in the folder of its bench file with the file's bare name, so that no
path of this checkout shows in the text (a longer path would wrap the lines differently),
and with no topology detected (``advice.api.topology_here``), so that the answer is the
same on a host with GPUs as on one without."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

from ..golden import UPDATE_FLAG, Golden, differences

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
RECORDS = HERE / "golden"
SHARED = ROOT.parent / "shared" / "gpu" / "h100"
REL = 1e-9

# by-numbers examples: docs/advice.md's opening block and its Python examples (the same
# requests as options), and tests/advice/test_answer_first.py's budget cases
BY_NUMBERS = {
    "docs_7m_pcie_price": (
        *("--params", "7M", "--step-ms", "2", "--batch", "64", "--interconnect", "pcie-phb"),
        *("--price", "2.5"),
    ),
    "docs_7m_pcie": (
        "--params",
        "7M",
        "--step-ms",
        "2",
        "--batch",
        "64",
        "--interconnect",
        "pcie-phb",
    ),
    "docs_4090_one_step": (
        *("--params", "6.9M", "--step-ms", "18.6", "--batch", "8"),
        *("--device-name", "RTX 4090", "--interconnect", "pcie-phb"),
    ),
    "docs_4070_two_steps": (
        *("--params", "6.9M", "--step-ms", "18.6", "--batch", "8", "--step-ms", "30.5"),
        *("--batch", "64", "--device-name", "RTX 4070 Ti SUPER", "--interconnect", "pcie-phb"),
    ),
    "docs_300m_four_nodes": (
        *("--params", "300M", "--step-ms", "10", "--batch", "16", "--nodes", "4"),
        *("--gpus-per-node", "8", "--interconnect", "nvlink4", "--inter-node", "ib-ndr400"),
        *("--workload", "llama2_70b_lora"),
    ),
    "study_4090_two_steps": (
        *("--params", "6.9M", "--step-ms", "18.6", "--batch", "8", "--step-ms", "30.5"),
        *("--batch", "64", "--device-name", "RTX 4090", "--interconnect", "pcie-phb"),
        *("--max-devices", "2"),
    ),
    "r50_a100": (
        *("--params", "25.6M", "--step-ms", "273", "--batch", "256"),
        *("--device-name", "A100 80GB", "--interconnect", "nvlink3", "--max-devices", "8"),
    ),
    # docs/memory.md's transformer shape: its FLOPs, FSDP units and activations in words
    "preset_llama3_8b_selective": (
        *("--preset", "llama3-8b", "--step-ms", "2000", "--batch", "1", "--global-batch"),
        *("64", "--checkpointing", "selective", "--device-name", "H100"),
        *("--interconnect", "nvlink4", "--strategy", "ddp"),
    ),
    "r50_a100_flops": (
        *("--params", "25.6M", "--step-ms", "273", "--batch", "256"),
        *("--device-name", "A100 80GB", "--interconnect", "nvlink3", "--max-devices", "8"),
        *("--flops-per-sample", "24.6G"),
    ),
    # no link given: the H100's SXM NVLink assumed, its range searched (the count withheld)
    "h100_7b_link_assumed": (
        *("--params", "7e9", "--step-ms", "900", "--batch", "4", "--global-batch", "64"),
        *("--device-name", "H100"),
    ),
    # no link given and no device named: pcie-phb assumed
    "link_default_assumed": ("--params", "7M", "--step-ms", "2", "--batch", "64"),
    # no link given, a PCIe card named: pcie-phb assumed, its range searched
    "pcie_card_link_assumed": (
        *("--params", "340M", "--step-ms", "60", "--batch", "48", "--device-name", "H100 PCIe"),
    ),
    # no link given, an SXM board named: its NVLink, no range (the count not withheld)
    "sxm_board_link_taken": (
        *("--params", "340M", "--step-ms", "60", "--batch", "48", "--device-name", "H100 SXM"),
    ),
    # four nodes, no --inter-node: ib-ndr400 assumed between them
    "h100_7b_four_nodes_assumed": (
        *("--params", "7e9", "--step-ms", "900", "--batch", "4", "--global-batch", "64"),
        *("--device-name", "H100", "--interconnect", "nvlink4", "--nodes", "4"),
    ),
    # pcie-phb assumed, the count withheld by the link: its low end (10 GB/s) is pcie-phb's
    "link_assumed_withheld": ("--params", "100M", "--step-ms", "200", "--batch", "32"),
    # a TPU joins its chips by ICI, no preset: its range, PCIe to nvlink5, moves the count
    "tpu_own_fabric_withheld": (
        *("--params", "7B", "--flops-per-sample", "42G", "--step-ms", "800", "--batch", "8"),
        *("--device-name", "TPU-v5p", "--max-devices", "8"),
    ),
    # memory fixes the count (16 hold a 70B model); the fabric's range moves its time
    "tpu_memory_time_unsure": (
        *("--params", "70B", "--step-ms", "900", "--batch", "256"),
        *("--device-name", "TPU-v5p", "--max-devices", "64"),
    ),
    # a count withheld at 1 device: no speedup said of it (1x against itself)
    "withheld_at_one": (
        *("-w", "gpt3", "--params", "100M", "--step-ms", "300", "--batch", "64"),
        *("--device-name", "H100"),
    ),
}
# bench files: (the folder, the file, more options); the shared ones skip without ../shared
BENCH = {
    "bench_cpu_tiny_model_gloo": (HERE, "cpu_tiny_model_gloo.jsonl", ()),
    # 2 devices run at per-device batch 8 only: the strong row (4) derived from that run
    "bench_cpu_mlp_two_sweeps_gloo": (HERE, "cpu_mlp_two_sweeps_gloo.jsonl", ()),
    "bench_h100_resnet50_bf16": (HERE, "h100_resnet50_bf16.jsonl", ()),
    "bench_h100_resnet50_bf16_large": (HERE, "h100_resnet50_bf16_large.jsonl", ()),
    "bench_report_h100_paths": (ROOT / "tests" / "report", "h100_paths.jsonl", ()),
    "bench_report_h100_sweep": (ROOT / "tests" / "report", "h100_sweep.jsonl", ()),
    "shared_h100_ladder": (SHARED, "ladder.jsonl", ()),
    "shared_h100_paths": (SHARED, "paths.jsonl", ()),
    "shared_h100_sweep": (SHARED, "sweep.jsonl", ()),
    # docs/advice.md's "How would my ResNet-18 do on this H100?"
    "shared_h100_ladder_resnet18": (
        SHARED,
        "ladder.jsonl",
        ("--params", "11.7M", "--flops-per-sample", "10.65G", "--batch", "32"),
    ),
}
CASES = sorted([*BY_NUMBERS, *BENCH])
VIEWS = {"answer": (), "explain": ("--explain",)}


def _args(case: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The options of ``case``, in the folder its bench file is read from."""
    if case in BY_NUMBERS:
        return list(BY_NUMBERS[case])
    folder, name, more = BENCH[case]
    if not (folder / name).exists():
        pytest.skip(f"{folder / name} not present (the H100 rows live beside the checkout)")
    monkeypatch.chdir(folder)
    return ["--bench", name, *more]


def _advise(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """(stdout, stdout and stderr) of ``gpuscale advise`` at 100 columns, no topology
    detected."""
    monkeypatch.setattr("gpuscale.advice.api.topology_here", lambda *_: None)
    result = CliRunner().invoke(app, ["advise", *args], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.stdout, result.output


@pytest.mark.parametrize("case", CASES)
def test_the_json_record_is_the_golden_one(
    case: str, monkeypatch: pytest.MonkeyPatch, update_golden: bool
) -> None:
    stdout, _ = _advise([*_args(case, monkeypatch), "-f", "json"], monkeypatch)
    now = json.loads(stdout)
    path = RECORDS / f"{case}.json"
    if update_golden:
        if not path.exists() or differences(json.loads(path.read_text()), now):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(now, indent=1, ensure_ascii=False) + "\n")
        return
    if not path.exists():
        pytest.fail(f"no golden record for {case}; run pytest {UPDATE_FLAG} and review it")
    found = differences(json.loads(path.read_text()), now, rel=REL)
    assert not found, f"{case}: {len(found)} differ:\n" + "\n".join(found[:40])


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("case", CASES)
def test_the_text_is_the_golden_one(
    case: str, view: str, monkeypatch: pytest.MonkeyPatch, golden: Golden
) -> None:
    _, shown = _advise([*_args(case, monkeypatch), *VIEWS[view]], monkeypatch)
    golden.check(f"advice/{view}", case, shown)


def test_the_differences_are_found() -> None:
    """The comparison itself: a number moved beyond 1e-9, a string, a key, a length."""
    golden = {"a": [1.0, 2, "x"], "b": {"c": True}}
    assert differences(golden, {"a": [1.0 + 1e-12, 2, "x"], "b": {"c": True}}) == []
    assert differences(golden, {"a": [1.0 + 1e-6, 2, "x"], "b": {"c": True}}) == [
        ".a[0]: 1.0 -> 1.000001"
    ]
    assert differences(golden, {"a": [1.0, 2, "y"], "b": {"c": True}}) == [".a[2]: 'x' -> 'y'"]
    assert differences(golden, {"a": [1.0, 2], "b": {"c": True}}) == [".a: 3 items, now 2"]
    assert differences(golden, {"a": [1.0, 2, "x"], "b": {"d": True}}) == [
        ".b: keys ['c', 'd'] differ"
    ]
    assert differences(golden, {"a": [1.0, 2, "x"], "b": {"c": 1}}) == [".b.c: True -> 1"]


@pytest.mark.parametrize("path", sorted(RECORDS.glob("*.json")), ids=lambda p: p.stem)
def test_every_assumption_is_a_number_with_its_unit(path: Path) -> None:
    """Issue 71 item 3: each assumption of ``-f json`` has a numeric value and a unit, and
    its range where it has one (low <= value <= high)."""
    for a in json.loads(path.read_text())["assumptions"]:
        assert isinstance(a["value"], int | float) and a["unit"], a
        assert (a["low"] is None) == (a["high"] is None), a
        if a["low"] is not None:
            assert a["low"] <= a["value"] <= a["high"], a


def test_the_step_the_decision_quotes_is_said_predicted(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "Decides: ... of the 13.6 ms step at 2 devices" quoted the prediction's step; the
    report sets that line beside a bench table of measured steps (a reader took 21.5 ms
    for the 22.90 ms measured there): the line says predicted, and its number is the
    predicted table's step at that count."""
    args = [*_args("docs_4090_one_step", monkeypatch), "-f", "json"]
    record = json.loads(_advise(args, monkeypatch)[0])
    (line,) = [a for a in record["answer"] if a.startswith("Decides:")]
    said = re.search(r"of the ([\d.]+) ms step predicted at 2 devices", line)
    assert said, line
    (row,) = [r for r in record["predictions"] if r["accelerators"] == 2]
    assert float(said[1]) == pytest.approx(row["step_ms"], rel=5e-3)
