"""Energy's table on every bundled round at 100 columns: rows of three rounds and of two
power scopes keep the round and the power scope (what tells the AC and DC results of one
system apart); the benchmark is the workload's name in every round (RetinaNet's v4.0
folder ``ssd`` is ``retinanet``, as in its notes)."""

from __future__ import annotations

from gpuscale.analysis.energy_per_result import energy_view
from gpuscale.report.text_table import cell_text, columns_that_fit
from gpuscale.tables.rounds import RoundTables
from gpuscale.tables.views import TableView


def _view() -> TableView:
    from gpuscale.cli.common import load_tables
    from gpuscale.tables.round_requests import RoundSelection

    tables: RoundTables = load_tables(RoundSelection())
    return energy_view(tables, sorted(tables.scores["workload"].dropna().unique()))


def test_round_and_power_scope_are_kept_where_rows_differ_in_them() -> None:
    view = _view()
    frame = view.frame
    assert frame["round"].nunique() >= 2 and frame["power_scope"].nunique() >= 2
    shown = list(view.shown)
    rows = [[cell_text(frame[c].iloc[i], None) for c in shown] for i in range(len(frame))]
    numeric = [frame[c].dtype.kind in "fi" for c in shown]
    headers = [c.replace("_", " ") for c in shown]
    keep, widths, dropped = columns_that_fit(100, shown, headers, rows, numeric, view.drop_order)
    assert widths is not None and dropped
    assert {"round", "power_scope", "workload"} <= {shown[i] for i in keep}


def test_one_name_per_benchmark_in_every_round() -> None:
    frame = _view().frame
    retinanet = frame[frame["benchmark"].isin(["ssd", "retinanet"])]
    assert set(retinanet["benchmark"]) == {"ssd", "retinanet"}  # the folders, as published
    assert set(retinanet["workload"]) == {"retinanet"}
    assert "workload" in _view().shown and "benchmark" not in _view().shown
