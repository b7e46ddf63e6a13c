"""A view that carries its command's whole answer (``TableView.document``): ``-f json``
prints that document alone, the other formats the rows, as ``advise`` renders through
one call."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from gpuscale.cli.output import Format, show
from gpuscale.tables.views import TableView

FRAME = pd.DataFrame({"accelerators": [1, 2], "speedup": [1.0, 1.7]})
VIEW = TableView(FRAME, ["accelerators", "speedup"], notes=("a caveat",), document={"k": [1, 2]})


def test_json_of_a_view_with_a_document_is_that_document(
    capsys: pytest.CaptureFixture,
) -> None:
    show(VIEW, Format.json)
    printed = capsys.readouterr()
    assert json.loads(printed.out) == VIEW.document
    assert "a caveat" not in printed.err  # the document holds its own notes


def test_csv_of_a_view_with_a_document_is_its_rows(capsys: pytest.CaptureFixture) -> None:
    show(VIEW, Format.csv)
    printed = capsys.readouterr()
    assert printed.out.splitlines()[0] == "accelerators,speedup"
    assert len(printed.out.splitlines()) == 1 + len(FRAME)
    assert "a caveat" in printed.err
