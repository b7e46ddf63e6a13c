"""A table's headers write a column's unit as SI does (``energy_kj``: "energy kJ", not
"energy kj"), in the terminal table and in its note of the columns left out for width."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.quantities import column_label
from gpuscale.report.text_table import left_out_note


@pytest.mark.parametrize(
    ("column", "label"),
    [
        ("energy_kj", "energy kJ"),
        ("energy_per_sample_j", "energy per sample J"),
        ("energy_per_accelerator_hour_kj", "energy per accelerator hour kJ"),
        ("energy_kwh", "energy kWh"),
        ("model_state_gb", "model state GB"),
        ("device_memory_gib", "device memory GiB"),
        ("busbw_gbs", "busbw GB/s"),
        ("bucket_mb", "bucket MiB"),  # PyTorch's bucket_cap_mb counts MiB
        ("grad_mb", "grad MB"),
        ("power_w", "power W"),
        ("power_w_mean", "power W mean"),  # a unit before a statistic
        ("time_to_train_min", "time to train min"),
        ("step_ms", "step ms"),
        ("accelerators", "accelerators"),
        ("j", "j"),  # a name that is only a letter: no unit to write
    ],
)
def test_units_as_si_writes_them(column: str, label: str) -> None:
    assert column_label(column) == label


def test_the_energy_table_heads_its_units_as_si() -> None:
    done = CliRunner().invoke(app, ["energy", "-b", "bert"], env={"COLUMNS": "400"})
    assert done.exit_code == 0, done.output
    header = next(line for line in done.stdout.splitlines() if "energy" in line and "┃" in line)
    cells = [c.strip() for c in header.split("┃") if c.strip()]
    assert {"energy kJ", "energy per sample J", "energy per accelerator hour kJ"} <= set(cells)
    assert not any(c.endswith((" kj", " j")) for c in cells)


def test_the_columns_left_out_are_named_with_their_units() -> None:
    said = left_out_note(["energy_kj", "cost"], "-f csv", "", (), vertical=False)
    assert said == "(not shown, for width: energy kJ, cost; -f csv)"
