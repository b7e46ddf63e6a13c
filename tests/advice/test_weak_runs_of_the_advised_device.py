"""The advice's weak-evidence warning counts the runs of the model it reads: those on the
calibrated run's hardware. On a file of mlp-4m on 1 and 2 CPU processes and on the H100
(N = 1, the latest: the advice's), it said "3 of the 3 bench runs of mlp-4m the advice
uses (on 1 and 2 devices)", the two CPU runs among them; the calibration left them out
("left out 2 runs of another device")."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gpuscale.advice.api import advise
from gpuscale.advice.request import AdviceRequest
from gpuscale.bench.results import bench_table, read_results

ROWS = Path(__file__).parent.parent / "report"


def test_the_weak_warning_counts_only_the_runs_on_the_advised_device(tmp_path: Path) -> None:
    def rows(name: str) -> list[dict]:
        return [json.loads(line) for line in (ROWS / name).read_text().splitlines()]

    mine = [r for r in rows("h100_paths.jsonl") if r["config"]["model"] == "mlp-4m"]
    mine += [
        r
        for r in rows("h100_sweep.jsonl")
        if r["config"]["model"] == "mlp-4m" and r["config"]["batch_per_device"] == 8
    ]
    path = tmp_path / "mlp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in mine))
    table = bench_table(read_results(path)[0])
    advice = advise(AdviceRequest(bench=str(path)), bench=table)
    (warning,) = [line for line in advice.explanation if line.startswith("WARNING: weak")]
    # "the bench run", "both bench runs", "all 3 bench runs" or "1 of the 3 bench runs"
    found = re.search(
        r"(the|both|all (\d+)|(\d+) of the (\d+)) bench runs? of mlp-4m the advice uses "
        r"\(on (.+?)\)",
        warning,
    )
    assert found, warning
    said = {"the": (1, 1), "both": (2, 2)}.get(found[1])
    if said is None:
        said = (int(found[2]), int(found[2])) if found[2] else (int(found[3]), int(found[4]))
    # the table's runs of mlp-4m on the device advised on (the H100: the latest N = 1)
    on = table[
        (table["model"] == "mlp-4m")
        & (table["device_name"] == mine[-1]["environment"]["device_name"])
    ]
    weak = on[on["evidence"] == "weak"]
    assert said == (len(weak), len(on))
    assert sorted(set(on["accelerators"])) == [1]  # the H100 ran mlp-4m on one device only
    assert found[5] == "1 device"
