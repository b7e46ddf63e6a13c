"""The figures docs/advice-accuracy.md quotes of the published-tables check are the output file's
(``benchmarks/results/advice_published.json``, written by
``benchmarks/advice_published.py``), and the output file is of the tables as committed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
RESULT = json.loads((ROOT / "benchmarks" / "results" / "advice_published.json").read_text())
DOC = (ROOT / "docs" / "advice-accuracy.md").read_text()
RAW = DOC.split("<!-- published-tables:begin")[1].split("<!-- published-tables:end")[0]
BLOCK = " ".join(RAW.split())
LABELS = {"all": None, "NVLink": "nvlink", "PCIe with P2P": "pcie-p2p", "through the host": "host"}


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _summary(label: str) -> dict:
    name = LABELS[label]
    return RESULT["held_out"] if name is None else RESULT["held_out_by_link_class"][name]


def test_the_held_out_table_is_the_output_files() -> None:
    for label in LABELS:
        s = _summary(label)
        b = s["baselines"]
        cells = [
            str(s["rows"]),
            _pct(s["median_abs_error"]),
            _pct(b["linear"]),
            _pct(b["borrowed_ratio"]),
            _pct(b["amdahl_fit"]),
            _pct(s["coverage"]),
            f"{s['median_width']:.3f}",
        ]
        (line,) = [x for x in RAW.splitlines() if x.startswith(f"| {label} |")]
        said = [c.strip().strip("*") for c in line.strip(" |").split("|")[1:]]
        assert said[: len(cells)] == cells, (label, said, cells)


def test_the_sentences_quote_the_output_file() -> None:
    held, dev = RESULT["held_out"], RESULT["development"]
    assert f"Development rows: {_pct(dev['median_abs_error'])}" in BLOCK
    goals = RESULT["goals"]
    low, high = goals["coverage"]

    def met(ok: bool) -> str:
        return "met" if ok else "**not met**"

    error_met = held["median_abs_error"] <= goals["median_abs_error"]
    assert f"{met(error_met)} ({_pct(held['median_abs_error'])})" in BLOCK
    assert f"{met(low <= held['coverage'] <= high)} ({_pct(held['coverage'])})" in BLOCK
    width_met = held["median_width"] <= goals["median_width"]
    assert f"{met(width_met)} ({held['median_width']:.3f})" in BLOCK
    # on PCIe with P2P the advice is said to be among the baselines, within their range
    p2p = RESULT["held_out_by_link_class"]["pcie-p2p"]
    baselines = sorted(p2p["baselines"].values())
    assert baselines[0] < p2p["median_abs_error"] < baselines[-1]
    said_error = _pct(p2p["median_abs_error"])
    against = f"{said_error} against {100 * baselines[0]:.1f}-{_pct(baselines[-1])}"
    assert f"on PCIe with P2P it is among them ({against}" in BLOCK
    assert f"{len(RESULT['flagged'])} rows (Lambda's BERT at 4-8 GPUs)" in BLOCK
    assert f"NVIDIA's {dev['rows']} ResNet-50 rows" in BLOCK
    rows = RESULT["rows"]

    def speedups(table: str, model: str, part: str, n: int, batch: int | None = None) -> str:
        (r,) = [
            r
            for r in rows
            if (r["table"], r["model"], r["part"], r["n_gpus"]) == (table, model, part, n)
            and batch in (None, r["batch_per_gpu"])
        ]
        return f"{r['predicted']:.2f} for {r['published']:.2f}"

    h100 = speedups("lambda_pytorch_fp16", "ResNet-50 v1.5", "H100 SXM5 80GB", 8)
    vgg = speedups("servergear_tf_cnn_fp16", "VGG16", "RTX 3090", 8, 64)
    assert f"8 x H100 SXM5: {h100} published" in BLOCK
    assert f"8 x RTX 3090: {vgg})" in BLOCK


def test_the_tables_row_counts_and_the_output_are_of_the_committed_tables() -> None:
    """Each table's rows as the doc counts them, and each output row's published speedup
    is its table's (an output left stale by an edited table fails here)."""
    rows = RESULT["rows"]
    for path in sorted((ROOT / "benchmarks" / "published").glob("*.csv")):
        table = pd.read_csv(path, comment="#")
        mine = [r for r in rows if r["table"] == path.stem]
        assert len(mine) == len(table), path.name
        published = (table["throughput_n"] / table["throughput_1"]).tolist()
        assert [round(r["published"], 9) for r in mine] == [round(p, 9) for p in published]
    counts = {
        path.stem: len(pd.read_csv(path, comment="#"))
        for path in (ROOT / "benchmarks" / "published").glob("*.csv")
    }
    for stem, phrase in (
        ("lambda_pytorch_fp16", "Lambda's PyTorch benchmark"),
        ("servergear_tf_cnn_fp16", "server-gear's tf_cnn_benchmarks"),
        ("nvidia_dle_pytorch", "NVIDIA DeepLearningExamples"),
    ):
        row = re.search(rf"\| {re.escape(phrase)}[^|]*\| (\d+) \|", BLOCK)
        assert row is not None and int(row.group(1)) == counts[stem], stem
