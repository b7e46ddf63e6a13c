"""Where the report (and the advice it shows) lists why runs are weak or flagged, each kind
is said once with its count, never each run's own words one after another: the advice's
calibration note read "left out a on 2 devices: machine busy: other processes used 60%
of its CPU time; left out b on 2 devices: machine busy: ... 90% ...; left out c on 4
devices: machine busy: ... 90% ...", and "22 of the 29 runs are weak evidence: busy share
not measured and steps spread" gave no count of either."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis.bench_scaling import bench_scaling, trusted
from gpuscale.bench.results import bench_table, read_results
from gpuscale.report.bench_advice import advice_on_bench
from gpuscale.report.bench_section import build_bench_section
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record

HERE = Path(__file__).parent


def _busy(share: int) -> list[str]:
    return [f"machine busy: other processes used {share}% of its CPU time"]


def test_flagged_runs_are_said_once_per_kind_with_their_count(tmp_path: Path) -> None:
    rows = [
        bench_record("a", 10**5, 1, 100.0),
        {**bench_record("a", 10**5, 2, 150.0, sync_overhead_ms=1.0), "flags": _busy(60)},
        bench_record("b", 10**6, 1, 100.0),
        {**bench_record("b", 10**6, 2, 10.0), "flags": _busy(90)},
        bench_record("c", 10**6, 1, 100.0),
        bench_record("c", 10**6, 2, 150.0, sync_overhead_ms=1.0),
        {**bench_record("c", 10**6, 4, 10.0), "flags": ["noisy steps: p95 2x the median"]},
    ]
    bench = bench_table(rows)
    advice = advice_on_bench(bench, AdviceRequest(interconnect="pcie-phb", max_devices=4))
    assert advice.advice is not None
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=advice)
    assert section is not None
    scaling = bench_scaling(bench)
    flagged = scaling[scaling["flagged"]]

    def counted(rows: pd.DataFrame) -> dict[str, int]:
        """The kinds, counted from the table: the text before each reason's first colon."""
        kinds: dict[str, int] = {}
        for flags in rows["flags"]:
            for kind in dict.fromkeys(f.split(":", 1)[0] for f in str(flags).split("; ")):
                kinds[kind] = kinds.get(kind, 0) + 1
        return kinds

    assert counted(flagged) == {"machine busy": 2, "noisy steps": 1}  # the premise
    # the findings leave out the flagged runs the advice does not read (c on 4, the only
    # run there, it rests on: said flagged and read); its calibration leaves out all three
    read = [r.at for r in section.read if r.flagged and r.read]
    (left,) = [f for f in section.findings if f.startswith("Left out of these findings")]
    (calibrated,) = [f for f in section.findings if "Calibrated on" in f]
    for line, kinds in (
        (left, counted(flagged.drop(read))),
        (calibrated, counted(flagged)),
    ):
        assert kinds
        for kind, n in kinds.items():
            assert line.count(kind) == 1, line
            assert f"{kind} ({n} run{'s' if n > 1 else ''})" in line
        # no run's own words (its share of the CPU) repeated in the list
        assert "60%" not in line and "90%" not in line
    for at, r in zip(flagged.index, flagged.itertuples(), strict=True):
        assert (f"{r.configuration} on {r.accelerators}" in left) == (at not in read)


def test_weak_runs_are_said_once_per_kind_with_their_count(tmp_path: Path) -> None:
    lines = [*(HERE / "h100_paths.jsonl").read_text().splitlines()]
    lines += (HERE / "h100_sweep.jsonl").read_text().splitlines()
    path = tmp_path / "both.jsonl"
    path.write_text("".join(json.dumps(json.loads(line)) + "\n" for line in lines))
    bench = bench_table(read_results(path)[0])
    section = build_bench_section(bench, FigureFiles(tmp_path))
    assert section is not None
    kept = trusted(bench_scaling(bench))
    weak = kept[kept["evidence"] == "weak"]
    notes = weak["evidence_notes"].astype(str)
    # the H100 rows timed 20 steps: a spread over fewer than 21 is "over few steps"
    counts = {
        "busy share not measured": int(notes.str.contains("busy share not measured").sum()),
        "steps spread over few steps": int(notes.str.contains("steps spread over few").sum()),
    }
    assert all(counts.values())  # the premise: both kinds among the H100 rows
    (rests,) = [f for f in section.findings if f.startswith("What these findings rest on")]
    assert f"{len(weak)} of the {len(kept)} runs are weak evidence" in rests
    for kind, n in counts.items():
        assert re.search(rf"{kind} \({n} runs?\)", rests), rests
