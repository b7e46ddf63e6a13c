"""Every option the advice suggests with a value (``(--strategy fsdp)``, ``--scaling
weak``, ``--global-batch 16``, ``--interconnect nvlink4``, ...) is a change: never the value
the request already gives. The suggestions are read where the words name them (each request
field the phrasebook names with a value), not from the prose."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale.advice.explain.phrasebook as phrasebook
from gpuscale.cli import app

# A template's value names that say the request's own value back (``{--interconnect:given}
# is not a link the H100 has``): a description of what was given, not a suggestion.
NAMES_GIVEN = {"given", "asked"}
# The peak's reading says which option runs at it (``as --precision fp32 runs them``), said
# only where fp32 is the precision: a description too.
DESCRIBED = {"=fp32"}

BIG = [
    *("--params", "70B", "--step-ms", "500", "--batch", "4", "--nodes", "4"),
    *("--gpus-per-node", "4", "--interconnect", "nvlink4", "--inter-node", "ib-ndr400"),
]
SMALL = ["--params", "25M", "--step-ms", "10", "--batch", "32"]
HERE = Path(__file__).parent
H100 = ["--bench", str(HERE / "h100_resnet50_bf16.jsonl")]
GPT2 = [*("--preset", "gpt2-xl", "--step-ms", "300", "--batch", "8", "--interconnect", "nvlink4")]
REQUESTS = [
    [*BIG, "--strategy", "fsdp"],
    [*BIG, "--strategy", "zero2"],
    [*BIG, "--strategy", "fsdp", "--global-batch", "16"],
    [*BIG, "--scaling", "weak"],
    [*SMALL, "--interconnect", "pcie-phb"],
    [*SMALL, "--scaling", "weak", "--interconnect", "nvlink4"],
    [*SMALL, "--scaling", "strong", "--global-batch", "96", "--interconnect", "nvlink4"],
    [*SMALL, "--strategy", "ddp", "--max-devices", "16", "--gpus-per-node", "8"],
    [*SMALL, "--precision", "fp32", "--interconnect", "nvlink4"],
    [*H100, "--strategy", "fsdp"],
    [*H100, "--interconnect", "pcie-phb", "--max-devices", "16"],
    [*H100, "--scaling", "weak", "--strategy", "zero2"],
    [*H100, "--scaling", "strong", "--global-batch", "512"],
    ["--bench", str(HERE / "cpu_tiny_model_gloo.jsonl"), "--strategy", "zero2"],
    [*GPT2, "--checkpointing", "full"],
    [*GPT2, "--checkpointing", "none", "--strategy", "fsdp"],
]


def _given(args: list[str]) -> dict[str, str]:
    """The request's options given with a value, by field (``global_batch``: ``16``)."""
    pairs = pairwise(args)
    return {a[2:].replace("-", "_"): v for a, v in pairs if a.startswith("--")}


def _same(given: str, suggested: object) -> bool:
    if str(suggested) == given:
        return True
    try:
        return float(given) == float(suggested)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


@pytest.fixture
def suggested(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """(field, value) of each request field the advice's words name with a value, those
    that say the request's own value back (:data:`NAMES_GIVEN`, :data:`DESCRIBED`) left
    out."""
    found: list[tuple[str, object]] = []
    naming: list[bool] = []
    field, ref = phrasebook.Phrasing._field, phrasebook.ref

    def named(self: phrasebook.Phrasing, name: str, spec: str) -> str:
        naming.append(spec.partition("~")[0] in NAMES_GIVEN or spec in DESCRIBED)
        try:
            return field(self, name, spec)
        finally:
            naming.pop()

    def recorded(name: str, *value: object, **how: object) -> str:
        if value and not (naming and naming[-1]):
            found.append((name, value[0]))
        return ref(name, *value, **how)  # type: ignore[arg-type]

    monkeypatch.setattr(phrasebook.Phrasing, "_field", named)
    monkeypatch.setattr(phrasebook, "ref", recorded)
    return found


@pytest.mark.parametrize("args", REQUESTS, ids=lambda a: " ".join(Path(x).name for x in a))
def test_no_suggestion_is_the_value_given(
    args: list[str], suggested: list[tuple[str, object]]
) -> None:
    result = CliRunner().invoke(app, ["advise", *args, "-f", "json"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["answer"]  # the words were made
    given = _given(args)
    repeated = [(f, v) for f, v in suggested if f in given and _same(given[f], v)]
    assert not repeated, f"suggested as a change what the request gives: {repeated}"


def test_a_fallback_strategy_is_still_named_as_the_option() -> None:
    """No --strategy given: the fewest devices holding the model are FSDP's, a change from
    the DDP asked, so the option is named."""
    result = CliRunner().invoke(app, ["advise", *BIG, "-f", "json"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert any("(--strategy fsdp)" in line for line in json.loads(result.output)["answer"])
