"""``analyze --decompose``'s terminal table names its counts to converge by their unit:
v0.7 DLRM's logs count epochs, and its column headed "samples to converge" held epochs
(its unit column, one value, went first when the terminal was narrow)."""

from __future__ import annotations

import re

import pytest

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.analysis.terminal import workload_view
from gpuscale.names import UnknownNameError, resolve_columns

from ..golden import Golden
from ..report.ragged import rows_of, tables_of, with_holes

SYSTEMS = (
    ("Acme", "A100-SXM4-40GB", 8, 6.0),
    ("Bolt", "A100-SXM4-40GB", 16, 3.4),
    ("Core", "A100-SXM4-40GB", 32, 2.0),
)


def _view(workload: str, per_device: int, count: float, unit: str, round_name: str):
    rows = rows_of(SYSTEMS, ((workload, per_device, count, unit),), round_name)
    options = AnalysisOptions(n_boot=100)
    [result] = analyze(tables_of(with_holes(rows, {})), [workload], options)
    return workload_view(result, options, decompose=True)


def test_epochs_are_shown_as_epochs_never_as_samples() -> None:
    view = _view("dlrm", 2048, 1.9, "epochs", "v0.7")
    assert "epochs_to_converge" in view.shown and "expected_epochs_to_converge" in view.shown
    # no column under the samples' name, nor the unit column the names now say
    assert not {"samples_to_converge", "expected_samples_to_converge"} & set(view.frame)
    assert "convergence_unit" not in view.shown
    # each system's own count (1.9 x (1 + N/512), as the rows give it), only renamed
    assert view.frame["epochs_to_converge"].round(6).tolist() == [1.929688, 1.959375, 2.01875]
    assert "epochs_to_converge" in view.drop_order  # dropped for width as samples were


def test_samples_keep_their_name() -> None:
    view = _view("bert", 48, 3_000_000.0, "samples", "v4.1")
    assert "samples_to_converge" in view.shown and "convergence_unit" in view.shown
    assert view.frame["samples_to_converge"].tolist() == [3_046_875.0, 3_093_750.0, 3_187_500.0]


@pytest.mark.parametrize("asked", ["samples_to_converge", "Expected_Samples_To_Converge"])
def test_columns_asked_by_the_samples_name_offer_the_units_column(
    asked: str, golden: Golden
) -> None:
    """``--columns samples_to_converge`` on the epochs' table is refused (no column holds
    samples), offering the column that holds the count: it offered
    ``samples_to_converge_flag``, a reason, the one name the text typed begins."""
    view = _view("dlrm", 2048, 1.9, "epochs", "v0.7")
    frame = list(view.frame.columns)
    with pytest.raises(UnknownNameError) as refused:
        resolve_columns(asked, list(view.shown), frame, view.renamed)
    offered = re.findall(r"did you mean '(\w+)'", str(refused.value))
    assert offered == [view.renamed[asked.lower()]] and offered[0] in frame
    assert refused.value.typed == asked
    golden.check(
        "analysis/converge_unit", f"--columns {asked}", refused.value.as_option("--columns")
    )
    # the name the table holds is read; samples' names where samples are counted
    assert resolve_columns(offered[0], [], frame, view.renamed) == offered
    samples = _view("bert", 48, 3_000_000.0, "samples", "v4.1")
    assert samples.renamed == {}
    shown = resolve_columns(asked, [], list(samples.frame.columns), samples.renamed)
    assert shown == [asked.lower()]
