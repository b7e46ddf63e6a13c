"""``--optimizer adamw`` and ``--precision bf16`` (``fp16``, ``amp``): the names other tools
give a state the memory model holds under another name (``advice.request.SAME_STATE``)
are refused naming ours and why they are the same, never with no hint; the name given
back is one the request accepts, and holds the bytes per parameter the alias means."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gpuscale.advice.request import SAME_STATE, AdviceRequest
from gpuscale.cli import app
from gpuscale.hardware.memory import state_bytes
from gpuscale.tables.requests import FieldError

ASKED = ("--params", "7e9", "--step-ms", "900", "--batch", "8192")


@pytest.mark.parametrize(
    ("option", "value", "ours"),
    [
        ("--optimizer", "adamw", "adam"),
        ("--optimizer", "AdamW", "adam"),
        ("--precision", "bf16", "mixed"),
        ("--precision", "fp16", "mixed"),
    ],
)
def test_refused_naming_ours(option: str, value: str, ours: str, golden) -> None:
    result = CliRunner().invoke(app, ["advise", *ASKED, option, value])
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    said = result.output.strip()
    assert f"{option} {value}" in said and f"give {ours}" in said
    golden.check("advice/refusals", f"advise {option} {value}", said)
    # the name given back is accepted
    ok = CliRunner().invoke(app, ["advise", *ASKED, option, ours, "-f", "json"])
    assert ok.exit_code == 0, ok.output


def test_each_alias_names_a_known_state() -> None:
    """Every alias gives back a name with a row in ``data/state_bytes.csv``."""
    known = state_bytes()
    for field, aliases in SAME_STATE.items():
        at = 0 if field == "optimizer" else 1
        names = {pair[at] for pair in known}
        for alias, (ours, why) in aliases.items():
            assert ours in names and ours != alias and why


def test_python_request_refused_on_the_field() -> None:
    with pytest.raises(FieldError) as refused:
        AdviceRequest(params=7e9, step_ms=900.0, batch=8192, precision="bf16")
    assert refused.value.field == "precision"
