"""The CLI as a demanding user meets it: names in any case, machine formats that carry data
only, one JSON shape per command, the topology as a matrix, the collectives table as
nccl-tests prints it, small words right."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

runner = CliRunner()


@pytest.mark.parametrize("name", ["JSON", "Json", "CSV"])
def test_format_names_in_any_case(name: str) -> None:
    result = runner.invoke(app, ["scores", "--round", "v4.1", "-b", "bert", "-f", name])
    assert result.exit_code == 0, result.output
    if name.lower() == "json":
        assert json.loads(result.stdout)[0]["benchmark"] == "bert"
    else:
        assert next(csv.reader(io.StringIO(result.stdout)))[0] == "round"


@pytest.mark.parametrize(
    "typed, expected", [("4.1", "4.1.0"), ("v5.0", "5.0.0"), ("V4.1.0", "4.1.0")]
)
def test_rulesets_as_people_write_them(typed: str, expected: str) -> None:
    from gpuscale.names import resolve_ruleset

    assert resolve_ruleset(typed) == expected


def test_an_unknown_ruleset_lists_the_known_ones() -> None:
    from gpuscale.names import UnknownNameError, resolve_ruleset

    with pytest.raises(UnknownNameError, match=r"unknown ruleset '9\.9'.*4\.1\.0"):
        resolve_ruleset("9.9")


def test_advise_reads_ruleset_4_1_and_suggests_workloads() -> None:
    base = ["advise", "--params", "7M", "--step-ms", "20", "--interconnect", "pcie-phb"]
    base.append("--explain")  # the sources are said in the explanation
    ok = runner.invoke(app, [*base, "--workload", "bert", "--ruleset", "4.1"])
    assert ok.exit_code == 0, ok.output
    assert "ruleset 4.1.0" in ok.stdout
    typo = runner.invoke(app, [*base, "--workload", "bret"])
    assert typo.exit_code == 2
    assert "did you mean 'bert'" in typo.output


@pytest.mark.parametrize(
    ("link", "part", "watts"),
    [("pcie-phb", "H100 PCIe 80GB", "350 W"), ("nvlink4", "H100 SXM5 80GB", "700 W")],
)
def test_a_bare_h100_says_the_part_assumed(link: str, part: str, watts: str) -> None:
    base = ["advise", "--params", "7M", "--step-ms", "20", "--interconnect", link]
    base.append("--explain")  # the power's source is said in the explanation
    bare = runner.invoke(app, [*base, "--device-name", "H100"])
    assert bare.exit_code == 0, bare.output
    said = " ".join(bare.stdout.split())
    assert "names no single part" in said and f"read as {part}" in said and watts in said
    named = runner.invoke(app, [*base, "--device-name", "H100 SXM5"])
    assert "names no single part" not in " ".join(named.stdout.split())


def test_zero_clusters_is_refused() -> None:
    result = runner.invoke(app, ["analyze", "-b", "bert", "-k", "0"])
    assert result.exit_code == 2
    # named by its long name (`--help` shows it beside -k), as every refused option is
    assert "--clusters 0: must be a whole number" in result.output


def test_dir_lists_the_lazy_api() -> None:
    import gpuscale

    assert {"advise", "analyze", "load_round", "scaling_table"} <= set(dir(gpuscale))
    assert {n for n in dir(gpuscale) if not n.startswith("_")} == set(gpuscale.__all__)


def test_run_counts_have_separators() -> None:
    from gpuscale import load_round
    from gpuscale.tables.views import ingest_summary

    tables = load_round("v4.1")
    assert len(tables.runs) >= 1000
    text = "\n".join(ingest_summary(tables)[0])
    assert f"{len(tables.runs):,} runs" in text
    assert re.search(r"\b\d{4,} runs\b", text) is None


def test_the_results_scored_are_counted_as_they_read() -> None:
    """Ingest's line: "1,003 of the 1,008 benchmark results scored", and for a round of
    one result "the benchmark result scored", never "1 of 1 benchmark results"."""
    import dataclasses

    from gpuscale import load_round
    from gpuscale.tables.views import ingest_summary

    tables = load_round("v4.1")
    scored = int(tables.scores["time_to_train_min"].notna().sum())
    assert scored < len(tables.scores)  # some unscored: the count of the whole said
    [line] = [x for x in ingest_summary(tables)[0] if x.startswith("v4.1:")]
    assert f"{scored:,} of the {len(tables.scores):,} benchmark results scored" in line
    one = dataclasses.replace(tables, scores=tables.scores.dropna(subset=["time_to_train_min"])[:1])
    [line] = ingest_summary(one)[0]
    assert "the benchmark result scored" in line and "1 of 1" not in line


def test_one_round_is_this_round() -> None:
    result = runner.invoke(app, ["energy", "--round", "v3.0", "-f", "json"])
    assert result.exit_code == 2  # no row: as every table command with none
    assert "this round has no energy results" in result.stderr


def test_analyze_json_is_one_shape(tmp_path) -> None:
    from gpuscale.bench.results_file import append_result

    from .builders import bench_record

    path = tmp_path / "r.jsonl"
    for world, sps in ((1, 100.0), (2, 180.0)):
        append_result(path, bench_record("mlp-1m", 10**6, world, sps))
    common = ["--bootstrap", "100", "-f", "json"]
    docs = {
        "rounds": runner.invoke(app, ["analyze", "--round", "v4.1", "-b", "bert", *common]),
        "bench": runner.invoke(app, ["analyze", "--bench", str(path), *common]),
        "both": runner.invoke(
            app, ["analyze", "--bench", str(path), "--round", "v4.1", "-b", "bert", *common]
        ),
    }
    parsed = {k: json.loads(r.stdout) for k, r in docs.items()}
    for doc in parsed.values():
        assert isinstance(doc, dict) and set(doc) == {"rounds", "bench", "notes"}
    assert parsed["rounds"]["bench"] is None and parsed["rounds"]["rounds"][0]["benchmark"]
    assert parsed["bench"]["rounds"] == [] and parsed["bench"]["bench"]["source"] == "bench"
    assert parsed["both"]["rounds"] and parsed["both"]["bench"]


def _dgx_h100(path):
    """A DGX H100's ``nvidia-smi topo -m``: 8 GPUs on NVSwitch, 10 NICs, two sockets."""
    gpus, nics = 8, 10
    head = [f"GPU{i}" for i in range(gpus)] + [f"NIC{k}" for k in range(nics)]
    lines = ["\t" + "\t".join([*head, "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"])]
    for i in range(gpus):
        links = [" X " if i == j else "NV18" for j in range(gpus)]
        to_nic = ["PXB" if k // 2 == i // 2 else "SYS" for k in range(nics)]
        place = ["0-55,112-167", "0"] if i < 4 else ["56-111,168-223", "1"]
        lines.append("\t".join([f"GPU{i}", *links, *to_nic, *place, "", "N/A"]))
    for k in range(nics):
        to_gpu = ["PXB" if k // 2 == i // 2 else "SYS" for i in range(gpus)]
        lines.append(
            "\t".join([f"NIC{k}", *to_gpu, *(" X " if k == m else "SYS" for m in range(nics))])
        )
    legend = "".join(f"  NIC{k}: mlx5_{k}\n" for k in range(nics))
    path.write_text("\n".join(lines) + "\n\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n" + legend)
    return path


def test_topology_is_a_matrix_at_120_columns(tmp_path, monkeypatch) -> None:
    from rich.console import Console

    console = Console(width=120, soft_wrap=False, file=io.StringIO())
    monkeypatch.setattr("gpuscale.cli.output.out", console)  # show() draws the views
    result = runner.invoke(app, ["topo", "--file", str(_dgx_h100(tmp_path / "topo.txt"))])
    assert result.exit_code == 0, result.output
    lines = console.file.getvalue().splitlines()
    assert len(lines) < 60  # the vertical records took 205
    assert max(len(x) for x in lines) <= 120
    assert any(re.search(r"GPU3 .*NV18 .*X .*NV18", x) for x in lines)  # a matrix row
    assert any(re.search(r"NIC9 .*mlx5_9", x) for x in lines)
    # the verdict first, then the tables
    assert lines[0].startswith("slowest link: NV (NVSwitch, nvlink4) -> preset nvlink4")


def test_topology_csv_is_data_only_with_named_columns(tmp_path) -> None:
    result = runner.invoke(app, ["topo", "--file", str(_dgx_h100(tmp_path / "t.txt")), "-f", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert all(rows[0]) and rows[0][0] == "gpu"  # every column named
    assert {len(r) for r in rows} == {len(rows[0])} and len(rows) == 9
    assert "slowest link" not in result.stdout and "slowest link" in result.stderr


def test_one_gpu_has_no_link_to_judge(tmp_path) -> None:
    path = tmp_path / "one.txt"
    path.write_text("\tGPU0\tCPU Affinity\nGPU0\t X \t0-31\n")
    result = runner.invoke(app, ["topo", "--file", str(path)])
    assert result.exit_code == 0, result.output
    assert "None" not in result.stdout
    assert "1 GPU: no GPU-to-GPU link to judge" in result.stdout


def test_collectives_checks_out_before_launching(tmp_path) -> None:
    pytest.importorskip("torch")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for bad, why in ((tmp_path, "is a folder"), (blocker / "c.jsonl", "is a file, not a folder")):
        result = runner.invoke(app, ["collectives", "--out", str(bad), "--nproc", "2"])
        assert result.exit_code == 2
        said = " ".join(result.output.split())
        assert why in said and "error_file" not in said


def test_collectives_table_as_nccl_tests_prints_it(monkeypatch) -> None:
    import pandas as pd
    from rich.console import Console

    from gpuscale.cli.output import Format, show
    from gpuscale.interconnect.shown import sweep_views
    from gpuscale.tables import COLLECTIVES_COLUMNS

    from .builders import sweep_rows

    rows = [
        {
            **r,
            "sweep_id": "s1",
            "count": r["size_bytes"] // 4,
            "dtype": "float32",
            "redop": "sum",
            "root": -1,
            "algbw_gbs": r["size_bytes"] / r["time_us"] / 1e3,
            "busbw_gbs": r["size_bytes"] / r["time_us"] / 1e3,
            "time_us_p99": r["time_us"] * 1.1,
            "wrong": 0,
        }
        for r in sweep_rows(12.345678, 25.0)
    ]
    console = Console(width=200, soft_wrap=False, file=io.StringIO())
    monkeypatch.setattr("gpuscale.cli.output.out", console)  # show() draws the views
    for view in sweep_views(pd.DataFrame(rows).reindex(columns=list(COLLECTIVES_COLUMNS))):
        show(view, Format.table)  # as `collectives` draws its tables
    text = console.file.getvalue()
    for header in ("algbw (GB/s)", "busbw (GB/s)", "count", "type", "redop", "#wrong"):
        assert header in text
    last = next(x for x in text.splitlines() if "128 MiB" in x)
    big = rows[-1]["busbw_gbs"]
    assert f"{big:.2f}" in last and "float32" in last and "sum" in last
    assert re.search(r"\d\.\d{3,}", last.split("float32")[1]) is None  # two decimals at most


def test_a_path_without_results_is_refused_with_the_reason(tmp_path) -> None:
    from .mlperf.logbuilder import RoundBuilder

    rb = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    parent = tmp_path / "rounds"
    one = rb.write_dir(parent)
    (parent / "training_results_v5.0").mkdir()
    (tmp_path / "empty").mkdir()
    cases = [
        ([str(parent)], "holds round folders (training_results_v4.1, training_results_v5.0)"),
        ([str(one / "Acme"), "--round", "v4.1"], "one submitter's folder"),
        ([str(tmp_path / "empty"), "--round", "v4.1"], "expected <org>/systems/*.json"),
        # without --round, the reason comes first, not "cannot tell the round from the name"
        ([str(one / "Acme")], "one submitter's folder"),
        ([str(tmp_path / "empty")], "expected <org>/systems/*.json"),
    ]
    for command in ("scores", "trends", "ingest"):
        for args, why in cases:
            extra = ["--out", str(tmp_path / "o")] if command == "ingest" else ["-f", "csv"]
            result = runner.invoke(app, [command, *args, *extra])
            assert result.exit_code == 2, (command, args, result.output)
            assert "no MLPerf results in" in result.stderr
            assert why in " ".join(result.stderr.split()), result.stderr
            assert result.stdout == ""
    good = runner.invoke(app, ["scores", str(one), "-f", "csv"])
    assert good.exit_code == 0 and "Acme" in good.stdout


@pytest.mark.slow
def test_a_round_without_the_studys_workloads_shows_its_own(tmp_path) -> None:
    """A v5.1-like round (no BERT, Llama2 LoRA or Stable Diffusion): the report shows its own
    workloads by default and says which of the study's it lacks; the page says so too."""
    from .mlperf.logbuilder import RoundBuilder

    rb = RoundBuilder(name="training_results_v5.1")
    for system, n in (("box", 8), ("rack", 16)):
        rb.system("Acme", system, accelerators=n)
        rb.runs("Acme", system, "retinanet", [30.0 * 8 / n + k for k in range(5)])
        rb.runs("Acme", system, "rgat", [60.0 * 8 / n + k for k in range(5)])
    root = rb.write_dir(tmp_path)
    out = tmp_path / "rep"
    result = runner.invoke(app, ["report", str(root), "--out", str(out)])
    assert result.exit_code == 0, result.output
    said = "v5.1 has no BERT, Llama2 70B LoRA or Stable Diffusion results"
    assert said in " ".join(result.stderr.split())
    html = (out / "index.html").read_text()
    assert said in html
    for own in ("R-GAT (v5.1)", "RetinaNet (v5.1)"):  # its own workloads, each a section
        assert f"<h2>{own}</h2>" in html


def test_the_default_workloads_of_rounds() -> None:
    from gpuscale.names import default_workloads, workload_notes

    full = ["bert", "llama2_70b_lora", "retinanet", "stable_diffusion", "gpt3"]
    assert default_workloads({"v4.1": full}) == full[:4]
    lean = {"v4.1": full, "v5.1": ["flux1", "llama2_70b_lora", "llama31_8b", "retinanet"]}
    assert default_workloads(lean) == [*full[:4], "flux1", "gpt3", "llama31_8b"]
    notes = workload_notes(lean, default_workloads(lean), asked=False)
    assert len(notes) == 1 and notes[0].startswith("v5.1 has no BERT or Stable Diffusion")
    assert workload_notes(lean, ["bert"], asked=True) == ["v5.1 has no BERT results"]


def test_wide_tables_drop_low_priority_columns_not_become_records(monkeypatch) -> None:
    from rich.console import Console

    console = Console(width=200, soft_wrap=False, file=io.StringIO())
    monkeypatch.setattr("gpuscale.cli.output.out", console)
    args = ["analyze", "-b", "bert", "-b", "llama2", "--decompose", "--bootstrap", "100"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = console.file.getvalue().splitlines()
    assert max(len(x) for x in lines) <= 200
    headers = [x for x in lines if x.startswith("┃") and "accelerators" in x]
    assert len(headers) == 2  # BERT and Llama2 both tables, not one-field-per-line records
    assert all("convergence" in " ".join(lines) for _ in headers)  # asked-for columns kept
    # the low-priority columns, after any column of one value in every row (convergence
    # unit: samples in both)
    notes = [x for x in lines if x.startswith("(not shown, for width: ") and "cluster" in x]
    assert len(notes) == 2


def test_columns_chooses_the_terminal_table(monkeypatch) -> None:
    from rich.console import Console

    console = Console(width=100, soft_wrap=False, file=io.StringIO())
    monkeypatch.setattr("gpuscale.cli.output.out", console)
    asked = "accelerators,normalized_efficiency,Superlinear,system_name"
    result = runner.invoke(app, ["analyze", "-b", "bert", "--bootstrap", "100", "--columns", asked])
    assert result.exit_code == 0, result.output
    header = next(x for x in console.file.getvalue().splitlines() if "accelerators" in x)
    cells = [c.strip() for c in header.strip("┃ ").split("┃")]
    assert cells[0] == "accelerators" and cells[-1].startswith("system")
    assert "submitter" not in console.file.getvalue()
    bad = runner.invoke(app, ["analyze", "-b", "bert", "--columns", "acelerators"])
    assert bad.exit_code == 2 and "did you mean 'accelerators'" in bad.output


def test_analyze_json_makes_no_cross_family_pick_under_the_family_rule() -> None:
    args = ["analyze", "-b", "bert", "-r", "family", "--bootstrap", "100", "-f", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["rounds"][0]
    overall = doc["equilibrium"]
    assert overall["max_speed_x_efficiency"] is None and overall["efficiency_threshold"] is None
    assert any(e["efficiency_threshold"] for e in doc["equilibrium_by_family"])
    assert {"superlinear"} <= set(doc["systems"][0])


def test_error_messages_are_not_hard_wrapped(tmp_path) -> None:
    """A log or a pipe keeps each error whole: rich's 80-column wrapping cut paths and
    commands mid-phrase ("`gpuscale \\ningest`")."""
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "training_results_v4.1"
    result = runner.invoke(app, ["scores", str(deep)])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(deep) in lines[0], result.stderr
