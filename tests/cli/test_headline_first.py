"""The answer first: ``analyze --bench``, ``topo``, ``collectives``, ``trends``, ``energy``
and ``report`` each print the answer on its first line (report: under that one), its
numbers those of ``-f json``'s fields or the page's table (compared as numbers, not
words), then the detail; ``analyze --bench``'s whole table is ``--explain``'s."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

from typer.testing import CliRunner

from gpuscale.cli import app

from ..builders import bench_record
from ..golden import Golden

WIDTH = 100
VIEW = "cli/headlines"
SCALE = {"k": 1e3, "M": 1e6, "B": 1e9, "T": 1e12, "": 1.0}


def _run(args: list[str]) -> str:
    """stdout of the command on a terminal ``WIDTH`` columns wide (exit 0 asserted)."""
    result = CliRunner().invoke(app, args, env={"COLUMNS": str(WIDTH)})
    assert result.exit_code == 0, result.output
    return result.stdout


def _numbers(line: str) -> list[float]:
    """The numbers of a line (not shares: 95%), thousands separators and k/M/B read."""
    found = re.findall(r"(\d[\d,]*(?:\.\d+)?)([kMBT]?)(?![\d.%])", line)
    return [float(n.replace(",", "")) * SCALE[unit] for n, unit in found]


def _close(value: float, said: list[float], digits: int = 3) -> bool:
    """``value`` among the numbers said, to the digits they are printed with."""
    return any(math.isclose(value, s, rel_tol=10 ** (1 - digits)) for s in said)


def _crossing(tmp_path: Path) -> Path:
    """Two models on 1 and 2 processes: the small one slower on 2, the large one faster."""
    rows = [
        bench_record(model, params, n, rate)
        for model, params, rates in (
            ("mlp-1m", 10**6, (1000.0, 800.0)),
            ("mlp-10m", 10**7, (500.0, 700.0)),
        )
        for n, rate in zip((1, 2), rates, strict=True)
    ]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_analyze_bench_says_the_break_even_first(tmp_path: Path, golden: Golden) -> None:
    path = str(_crossing(tmp_path))
    first = _run(["analyze", "--bench", path]).splitlines()[0]
    document = json.loads(_run(["analyze", "--bench", path, "-f", "json"]))["bench"]
    size = document["break_even_params"]["2"]
    assert 10**6 < size < 10**7
    assert first.startswith("break-even") and _close(size, _numbers(first))
    golden.check(VIEW, "analyze --bench: a crossing", first)
    runs = {(r["model"], r["accelerators"]): r["speedup"] for r in document["runs"]}
    assert runs[("mlp-1m", 2)] < 1 < runs[("mlp-10m", 2)]  # the crossing the line names


def test_analyze_bench_is_short_and_its_explain_is_the_whole_table(tmp_path: Path) -> None:
    """The default: the answer's columns and the caveats counted; --explain: every column
    and each sentence (it printed the default's bytes); both lead with the break-even."""
    path = str(_crossing(tmp_path))
    answer, explained = (
        _run(["analyze", "--bench", path]),
        _run(["analyze", "--bench", path, "--explain"]),
    )
    assert answer != explained
    assert answer.splitlines()[0] == explained.splitlines()[0]
    assert len(answer.split()) < len(explained.split())
    for detail in ("speedup and efficiency (N > 1 only)", "weak evidence mlp-1m on 1"):
        assert detail not in answer and detail in explained
    assert "overhead" not in answer and "overhead" in explained  # a column of the whole
    assert [line for line in answer.splitlines() if len(line) > WIDTH] == []


def test_analyze_bench_of_one_device_says_there_is_no_break_even_yet(
    tmp_path: Path, golden: Golden
) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(bench_record("mlp-1m", 10**6, 1, 1000.0)) + "\n")
    first = _run(["analyze", "--bench", str(path)]).splitlines()[0]
    document = json.loads(_run(["analyze", "--bench", str(path), "-f", "json"]))["bench"]
    assert document["break_even_params"] == {}
    assert first.startswith("break-even") and _numbers(first)[0] == len(document["runs"])
    golden.check(VIEW, "analyze --bench: one device", first)


def _topo(path: Path) -> Path:
    """Two GPUs through a PCIe host bridge, as `nvidia-smi topo -m` prints them."""
    rows = ["\tGPU0\tGPU1\tCPU Affinity", "GPU0\t X \tPHB\t0-15", "GPU1\tPHB\t X \t0-15"]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_topo_says_its_verdict_first(tmp_path: Path, golden: Golden) -> None:
    path = str(_topo(tmp_path / "topo.txt"))
    lines = _run(["topo", "--file", path]).splitlines()
    info = json.loads(_run(["topo", "--file", path, "-f", "json"]))
    assert info["slowest_link"] in lines[0]
    golden.check(VIEW, "topo: PHB", lines[0])
    assert _close(info["expected_busbw_gbs"], _numbers(lines[0]))
    assert lines[1].startswith("GPU topology")  # then the detail


def test_topo_says_the_part_a_gpu_name_left_open_was_read_as(tmp_path: Path) -> None:
    """`topo --file X --gpu H100` read the GPUs as one H100 part (behind PCIe, the PCIe
    card) and said so only in `-f json`'s `device.assumed`: a terminal printed the verdict
    as if the part were named. The sentence follows the verdict (the answer stays first);
    the part named in full says nothing more."""
    path = str(_topo(tmp_path / "topo.txt"))
    lines = _run(["topo", "--file", path, "--gpu", "H100"]).splitlines()
    info = json.loads(_run(["topo", "--file", path, "--gpu", "H100", "-f", "json"]))
    assumed = info["device"]["assumed"]
    part = info["device"]["name"]
    assert part.startswith("H100 ") and f"read as {part}" in assumed
    assert info["slowest_link"] in lines[0] and lines[1] == assumed
    assert lines[2].startswith("GPU topology")
    named = _run(["topo", "--file", path, "--gpu", part]).splitlines()
    assert named[1].startswith("GPU topology")


def test_collectives_says_its_verdict_first(tmp_path: Path, monkeypatch, golden: Golden) -> None:
    """The verdict of each collective before the NCCL settings and the sweep's tables
    (the sweep itself read from a file here: the command's order is what is tested)."""
    from gpuscale.bench import collectives_sweep
    from gpuscale.interconnect.records import read_sweeps

    out = tmp_path / "coll.jsonl"
    head = {"schema": "gpuscale.collectives/2", "kind": "sweep", "sweep_id": "s"}
    head |= {"backend": "gloo", "device": "cpu", "nodes": 1}
    rows = [
        {
            "schema": "gpuscale.collectives/2",
            "kind": "result",
            "sweep_id": "s",
            "op": "all_reduce",
            "placement": "in-place",
            "status": "ok",
            "size_bytes": size,
            "ranks": 2,
            "busbw_gbs": busbw,
            "algbw_gbs": busbw,
            "time_us": 100.0,
            "time_us_p50": 100.0,
            "time_us_p99": 110.0,
        }
        for size, busbw in ((1 << 20, 3.0), (1 << 22, 5.5))
    ]
    out.write_text("".join(json.dumps(r) + "\n" for r in (head, *rows)))

    def sweep(*_args, **_kwargs):  # the run the command would start, read back
        sweeps = read_sweeps(out)
        return collectives_sweep.SweepRun("s", sweeps, sweeps.of("s"), "cpu", {})

    monkeypatch.setattr(collectives_sweep, "run_collectives", sweep)
    asked = ["collectives", "--nproc", "2", "--interconnect", "pcie4-x16", "--out", str(out)]
    lines = _run(asked).splitlines()
    assert lines[0].startswith("all_reduce: ")
    assert _close(5.5, _numbers(lines[0]))  # the sweep's peak busbw, as measured
    golden.check(VIEW, "collectives: all_reduce on pcie4-x16", lines[0])
    assert lines[1].startswith("all_reduce on 2")  # then the table


def test_trends_says_its_largest_change_first() -> None:
    args = ["trends", "-b", "bert", "--family", "H100-SXM5-80GB"]
    first = _run(args).splitlines()[0]
    rows = json.loads(_run([*args, "-f", "json"]))
    pairs = [
        (a["best_time_at_common_min"], b["best_time_at_common_min"])
        for a, b in itertools.pairwise(rows)
        if a["common_accelerators"] == b["common_accelerators"]
    ]
    before, after = max(pairs, key=lambda p: abs(math.log(p[0] / p[1])))
    said = _numbers(first)
    assert first.startswith("largest change:")
    assert _close(before, said) and _close(after, said)
    ratio = max(before / after, after / before)
    assert any(math.isclose(ratio, s, abs_tol=0.006) for s in said)


def test_energy_says_its_most_efficient_result_first(golden: Golden) -> None:
    args = ["energy", "-b", "bert"]
    first = _run(args).splitlines()[0]
    rows = json.loads(_run([*args, "-f", "json"]))
    best = min(rows, key=lambda r: r["energy_kj"])
    said = _numbers(first)
    golden.check(VIEW, "energy: BERT", first)
    assert _close(best["energy_kj"], said) and _close(best["energy_per_sample_j"], said)
    assert best["system_name"] in first


def test_energy_over_several_benchmarks_says_why_its_benchmark(golden: Golden) -> None:
    """Without -b the headline is the most counted benchmark's least energy, said so: it
    read "least energy to train: Llama2 70B LoRA 6,114 kJ" over BERT's 1,949 kJ."""
    first = _run(["energy"]).splitlines()[0]
    rows = json.loads(_run(["energy", "-f", "json"]))
    golden.check(VIEW, "energy: every benchmark", first)
    counts = {w: sum(r["workload"] == w for r in rows) for w in {r["workload"] for r in rows}}
    least = {w: min(r["energy_kj"] for r in rows if r["workload"] == w) for w in counts}
    (named,) = [w for w, kj in least.items() if _close(kj, _numbers(first))]
    assert counts[named] == max(counts.values())
    assert min(least.values()) < least[named]  # another benchmark's result takes less


def test_report_says_where_it_is_and_the_headline_its_page_leads_with(
    tmp_path: Path, golden: Golden
) -> None:
    """It printed only "report written to ..."; now also the first screen's answer: each
    workload's recommended count and 95% range, the numbers of the page's own table."""
    out = tmp_path / "report"
    lines = _run(["report", "--round", "v4.1", "-b", "bert", "--out", str(out)]).splitlines()
    assert lines[0].endswith(f" {out / 'index.html'}")
    golden.check(VIEW, "report: BERT v4.1", "\n".join(lines), paths={str(tmp_path): "<tmp>"})
    html = (out / "index.html").read_text(encoding="utf-8")
    table = html[html.index('<table class="recommended">') : html.index("</table>")]
    row = table.split("<tbody>")[1]
    cells = re.findall(r"<td[^>]*>(?:<b>)?([^<]*)", row)
    workload, count, band = cells[0], cells[1], cells[2]  # BERT (v4.1), 8, 8-16
    family = re.search(r'class="family">([^<]*)', row).group(1)
    assert len(lines) == 2 and lines[1].startswith(workload)
    head, rest = lines[1][len(workload) :].split(family, 1)
    assert _numbers(head) == [float(count)]
    assert _numbers(rest.split(";")[0]) == [float(n) for n in band.split("-")]


def test_a_failed_run_mended_and_run_again_is_said_as_such(tmp_path, golden: Golden) -> None:
    """A factory that failed, mended and benched again keeps no 'error ... on 1' line
    under the answer, as if nothing ran there."""
    import pandas as pd

    from gpuscale.analysis.bench_sentences import trouble_lines

    scaling = pd.DataFrame(
        {
            "model": ["mine.py:make"],
            "accelerators": [1],
            "configuration": ["mine"],
            "flagged": [False],
        }
    )
    failed = pd.DataFrame(
        {
            "model": ["mine.py:make", "other"],
            "accelerators": [1, 1],
            "status": ["error", "error"],
            "error": ["boom", "boom"],
        }
    )
    mended, still = trouble_lines(scaling, failed)
    assert "an ok run" in mended and "an ok run" not in still
    golden.check(VIEW, "a failed run mended, another not", f"{mended}\n{still}")
