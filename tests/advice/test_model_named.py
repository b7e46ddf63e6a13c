"""The headline names the model advised on, and where the largest model of the bench file
was passed over, why (a walk: the largest model, tf-1.5m, was all flagged; the advice
was on mlp-1m and said only "predicted training, 1.06M parameters")."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import gpuscale
from gpuscale.bench.results_file import append_result
from gpuscale.cli import app
from gpuscale.plausibility import loss_flags

from ..builders import bench_record

NAN_LOSS = loss_flags(float("nan"))


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "results.jsonl"
    for model, params, flags in (("mlp-1m", 1_060_000, []), ("tf-1.5m", 1_500_000, NAN_LOSS)):
        for world in (1, 2):
            record = bench_record(model, params, world, 1000.0 * world**0.8, flags=flags)
            append_result(path, record)
    return path


def test_the_headline_names_the_model_and_why_the_larger_was_not_used(tmp_path: Path) -> None:
    path = _file(tmp_path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    largest = max(rows, key=lambda r: r["config"]["params"])["config"]["model"]
    trusted = [r["config"]["model"] for r in rows if not r["flags"]]
    assert largest == "tf-1.5m" and set(trusted) == {"mlp-1m"}  # the premise, from the file
    args = [
        "advise",
        "--explain",
        "--bench",
        str(path),
        "--max-devices",
        "2",
        "--interconnect",
        "pcie-phb",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    title = next(line for line in lines if line.startswith("predicted"))  # under the answer
    assert "mlp-1m" in title
    advice = gpuscale.advise(bench=path, max_devices=2, link="pcie-phb")
    first = advice.explanation[0]
    assert "mlp-1m" in first and largest in first and "loss not finite" in first
    assert advice.caveats[0] == first
    # asked for by name: nothing passed over, nothing said
    named = gpuscale.advise(bench=path, model="mlp-1m", max_devices=2, link="pcie-phb")
    assert not any(largest in line for line in named.explanation[:1])


def test_the_largest_of_several_models_is_said_chosen_with_the_others(tmp_path: Path) -> None:
    """A file of several models, the largest advised on: which one, and the others that
    --model could choose (a walk: five models in a file, one advised without a word)."""
    path = tmp_path / "results.jsonl"
    sizes = {"mlp-1m": 1_060_000, "mlp-4m": 4_200_000, "tf-7m": 7_000_000}
    for model, params in sizes.items():
        for world in (1, 2):
            append_result(path, bench_record(model, params, world, 1000.0 * world**0.8))
    largest = max(sizes, key=sizes.get)
    advice = gpuscale.advise(bench=path, max_devices=2, link="pcie-phb")
    [said] = [s for s in advice.explanation if s.startswith("Advised on")]
    assert said.startswith(f"Advised on {largest} ")
    assert f"the largest of the {len(sizes)} models" in said
    assert all(other in said.split("model=")[1] for other in sizes if other != largest)
    # one model in the file, or the model named: nothing to choose, nothing said
    named = gpuscale.advise(bench=path, model=largest, max_devices=2, link="pcie-phb")
    assert not any(s.startswith("Advised on") for s in named.explanation)
