"""A workload typed as a prefix or another name (``llama2``, ``llama2_70b_lor``, ``ber``)
is read as one workload, and every command that reads it so says which, once, on stderr
(as ``plan`` does); the Python advice says it with its warnings. An exact name says
nothing."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.names import workloads_read_as

ADVISE = ["advise", "--preset", "llama3-8b", "--step-ms", "500", "--batch", "8"]
READ = re.compile(r"'([^']+)' read as (\w+)")


def _read(args: list[str]) -> list[tuple[str, str]]:
    """The (typed, workload) pairs the command's stderr says it read."""
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return READ.findall(" ".join(result.stderr.split()))


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("llama2", [("llama2", "llama2_70b_lora")]),
        ("llama2_70b_lor", [("llama2_70b_lor", "llama2_70b_lora")]),
        ("llama2_70b_lora", []),
    ],
)
def test_advise_says_the_workload_a_near_name_read_as(typed: str, said: list) -> None:
    assert _read([*ADVISE, "--workload", typed, "--device-name", "H100-SXM5-80GB"]) == said


@pytest.mark.parametrize(("typed", "said"), [("ber", [("ber", "bert")]), ("bert", [])])
def test_scores_says_the_workload_a_prefix_read_as(typed: str, said: list) -> None:
    assert _read(["scores", "--round", "v4.1", "-b", typed, "-f", "csv"]) == said


def test_the_python_advice_says_it_with_its_warnings() -> None:
    def read(workload: str) -> list[tuple[str, str]]:
        advice = gpuscale.advise(preset="llama3-8b", step_ms=500, batch=8, workload=workload)
        return [p for w in advice.decision.warnings for p in READ.findall(str(w))]

    assert read("llama2_70b_lor") == [("llama2_70b_lor", "llama2_70b_lora")]
    assert read("llama2_70b_lora") == []


def test_study_all_and_exact_names_are_no_reading() -> None:
    available = ["bert", "resnet", "llama2_70b_lora"]
    assert workloads_read_as(["study", "all", "bert", "BERT"], available) == []
    assert [READ.findall(s)[0] for s in workloads_read_as(["res", "bert"], available)] == [
        ("res", "resnet")
    ]
