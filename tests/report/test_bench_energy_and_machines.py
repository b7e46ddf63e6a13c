"""The report's bench table shows why a run's energy is not used (``energy_flag``: its power
meter dropped out, so ``advise`` leaves its energy and power out) on that run's row, and on
how many machines a run spanned where one spanned several; the terminal's bench tables
(``gpuscale bench``, ``analyze --bench``) show the machines too. Neither column where no
run needs it."""

from __future__ import annotations

import json
from pathlib import Path

from markupsafe import escape
from typer.testing import CliRunner

from gpuscale.analysis.bench_answer import bench_answer_view
from gpuscale.analysis.bench_view import bench_view
from gpuscale.bench.results import bench_table, read_results
from gpuscale.cli import app
from gpuscale.report.bench_section import COLUMNS, build_bench_section
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record
from ..mlperf.logbuilder import RoundBuilder

H100 = Path(__file__).parent / "h100_paths.jsonl"
EVIL = "<script>alert(1)</script>:make"
ENERGY, MACHINES = COLUMNS["energy_flag"], COLUMNS["nnodes"]


def _dropouts(records: list[dict], model: str, dropouts: int, uncovered: float) -> list[dict]:
    """``records`` with ``model``'s runs given ``dropouts`` meter dropouts over
    ``uncovered`` seconds (the fields the bench's sampled power records)."""
    for r in records:
        if r["config"]["model"] == model and r.get("nvml"):
            r["nvml"] |= {"power_dropouts": dropouts, "power_uncovered_s": uncovered}
    return records


def _records() -> list[dict]:
    return [json.loads(line) for line in H100.read_text().splitlines() if line.strip()]


def test_a_run_whose_meter_dropped_out_says_its_energy_is_not_used(tmp_path: Path) -> None:
    table = bench_table(_dropouts(_records(), "tf-7m", 3, 0.8))
    section = build_bench_section(table, FigureFiles(tmp_path))
    assert section is not None and ENERGY in section.columns
    said = {row["Model"]: row[ENERGY] for row in section.rows}
    assert said.pop("tf-7m").startswith("power meter dropouts: 3 readings")
    (flagged,) = [row for row in section.rows if row["Model"] == "tf-7m"]
    assert "0.8 s" in flagged[ENERGY] and "left out of the advice's energy" in flagged[ENERGY]
    assert set(said.values()) == {""}  # every other run's energy stands
    # its times stand: the run is no flagged run
    assert flagged["Not trusted because"] == ""
    # a file whose meters never dropped out: no such column
    plain = build_bench_section(bench_table(_records()), FigureFiles(tmp_path))
    assert ENERGY not in plain.columns and MACHINES not in plain.columns


def test_the_energy_flag_is_rendered_escaped_beside_an_untrusted_name(tmp_path: Path) -> None:
    rows = [bench_record(EVIL, 10**5, n, 100.0 * n, power_w=200.0) for n in (1, 2)]
    _dropouts(rows, EVIL, 2, 1.5)
    bench = tmp_path / "b.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    root = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    out = tmp_path / "r"
    args = ["report", str(root.write_dir(tmp_path)), "--bench", str(bench), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    html = (out / "index.html").read_text()
    assert "<script>alert" not in html and str(escape(EVIL)) in html
    assert str(escape(ENERGY)) in html
    assert html.count("power meter dropouts: 2 readings") == 2  # each run's row


def _across_machines() -> list[dict]:
    """A run on 1 and 2 processes of one machine, and on 4 over 2 machines."""
    rows = [bench_record("a", 10**6, n, 100.0 * n) for n in (1, 2, 4)]
    four = rows[-1]
    four["config"]["nnodes"] = 2
    four["key"] = four["key"].replace("nnodes=1", "nnodes=2")
    return rows


def test_a_run_over_several_machines_is_shown_with_them(tmp_path: Path) -> None:
    table = bench_table(_across_machines())
    assert sorted(table["nnodes"]) == [1, 1, 2]
    section = build_bench_section(table, FigureFiles(tmp_path))
    assert {r["Devices"]: r[MACHINES] for r in section.rows} == {"1": "1", "2": "1", "4": "2"}
    for view in (bench_view(table), bench_answer_view(table)):
        assert "nnodes" in view.shown
        at = list(view.shown).index("accelerators")
        assert view.shown[at + 1] == "nnodes"  # beside the devices it counts
        assert list(view.frame["nnodes"]) == [1, 1, 2]
    # every run on one machine: no column of ones
    one = bench_table(_across_machines()[:2])
    assert "nnodes" not in bench_view(one).shown
    assert "nnodes" not in bench_answer_view(one).shown
    assert MACHINES not in build_bench_section(one, FigureFiles(tmp_path)).columns


def test_the_sweeps_table_shows_the_machines(tmp_path: Path) -> None:
    """``gpuscale bench``'s printed table is ``bench_view`` of its sweep."""
    path = tmp_path / "r.jsonl"
    rows = [{**r, "sweep_id": "s1"} for r in _across_machines()]  # one `gpuscale bench` call
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = bench_table(read_results(path)[0])
    view = bench_view(table, sweep="s1", path=path)
    assert "nnodes" in view.shown and list(view.frame["nnodes"]) == [1, 1, 2]
