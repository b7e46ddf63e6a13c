"""A bench file's refusal of a request's field names it as the caller gave it: the
Python API's keyword (``model=``), the command line's option (``--model``), never the
other's (a new user's walk: ``gpuscale.advise(bench=..., model="tf-3m")`` said "give one
of them to --model"); and a model named by a part of its name (``resnet``) is pointed at
the file's model that holds it (``torchvision:resnet50``), as other names are."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.cli import app

H100 = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"


def _models() -> list[str]:
    records = [json.loads(line) for line in H100.read_text().splitlines() if line.strip()]
    return sorted({r["config"]["model"] for r in records})


@pytest.mark.parametrize(
    ("keywords", "field", "option"),
    [({"model": "tf-3m"}, "model", "--model"), ({"fixed_ms": 1e6}, "fixed_ms", "--fixed-ms")],
    ids=["model", "fixed_ms"],
)
def test_python_says_the_keyword_and_the_cli_the_option(keywords, field, option) -> None:
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=H100, **keywords)
    said = str(refused.value)
    assert f"{field}=" in said
    assert not re.search(r"--[a-z]", said), said  # no option of the command line
    value = next(iter(keywords.values()))
    typed = [option, value if isinstance(value, str) else f"{value:g}"]
    cli = CliRunner().invoke(app, ["advise", "--bench", str(H100), *typed])
    assert cli.exit_code != 0
    out = " ".join(cli.output.split())
    assert option in out and f"{field}=" not in out


def test_a_part_of_a_models_name_points_at_that_model() -> None:
    (resnet,) = [m for m in _models() if "resnet" in m]
    with pytest.raises(CalibrationError, match=f"did you mean '{re.escape(resnet)}'"):
        gpuscale.advise(bench=H100, model="resnet")
    cli = CliRunner().invoke(app, ["advise", "--bench", str(H100), "--model", "resnet"])
    assert f"did you mean '{resnet}'" in " ".join(cli.output.split())
