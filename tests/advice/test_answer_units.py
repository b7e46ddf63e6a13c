"""The answer's cost and batches as the user gave them: the cost in the currency of
--price (any: no symbol gpuscale was not given; ``-f json``'s ``cost_unit`` says it, null
without a price), and a batch, a count the user sets, exact with thousands separators
(``2,048``, the table's figure, not ``2.05k``)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from gpuscale.cli import app

# a 7B model over nvlink4: 4 devices advised, batch 2,048 each of a global 8,192
ASKED = (
    *("--params", "7e9", "--step-ms", "900", "--batch", "8192"),
    *("--device-name", "H100", "--interconnect", "nvlink4"),
)


def _document(*more: str) -> dict:
    result = CliRunner().invoke(app, ["advise", *ASKED, *more, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_cost_unit_is_the_prices_and_no_symbol_is_added() -> None:
    doc = _document("--price", "1.23")
    assert "--price" in doc["cost_unit"]  # the unit named: the price's own currency
    chosen = next(r for r in doc["predictions"] if r["accelerators"] == 4)
    assert chosen["cost"] > 0
    answer = " ".join(doc["answer"])
    assert "$" not in answer
    assert f"{chosen['cost']:.3g}" in answer  # the cost said, with no currency sign


def test_no_price_no_cost_unit() -> None:
    assert _document()["cost_unit"] is None


def test_batches_exact_with_separators() -> None:
    doc = _document()
    chosen = doc["decision"]["chosen"]
    per_device, global_batch = round(chosen["batch_per_device"]), round(chosen["global_batch"])
    assert (chosen["accelerators"], per_device, global_batch) == (4, 2048, 8192)
    answer = " ".join(doc["answer"])
    assert f"batch {per_device:,} per device (global {global_batch:,})" in answer
    assert "2.05k" not in answer and "8.19k" not in answer
