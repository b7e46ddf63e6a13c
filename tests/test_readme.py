"""The README's two set-up commands: CI runs the test one, and the main one makes the
report a user expects (run here, minus its ``pip install``)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd

from gpuscale.tables import display_name

ROOT = Path(__file__).resolve().parents[1]


def pages_text() -> str:
    """The README and every docs page, where the worked examples now live, as a reader
    reads them (HTML comments, such as the doc-number markers, left out)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return re.sub(r"<!--.*?-->", "", "\n".join(page.read_text() for page in pages), flags=re.S)


def command_after(marker: str) -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(rf"<!-- {marker} -->\n```bash\n(.+)\n```", text)
    assert match, f"README lacks a command after <!-- {marker} -->"
    return match.group(1)


def test_main_command_writes_the_study_report(tmp_path: Path) -> None:
    command = command_after("main-command")
    assert command.startswith("pip install . && ")
    argv = shlex.split(command.split(" && ", 1)[1])
    assert argv[0] == "gpuscale"
    done = subprocess.run(
        [sys.executable, "-m", "gpuscale.cli", *argv[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "gpuscale-report" / "index.html").read_text()
    from gpuscale.tables import STUDY_WORKLOADS

    for workload in STUDY_WORKLOADS:  # a section per workload of the study, headed so
        assert f"{display_name(workload)} (v4.1)" in html
    assert "<svg" in html


def test_ci_runs_the_readme_test_command() -> None:
    command = command_after("test-command")
    assert "pytest" in command and "torch==" in command  # the CPU wheel, pinned
    assert "test-command" in (ROOT / ".ci" / "run").read_text()


def test_the_cpu_wheel_is_named_before_the_test_command_installs_torch() -> None:
    """A reader going top to bottom on a machine without an NVIDIA GPU meets the CPU
    build's index before the test command's ``pip install torch``, which would otherwise
    fetch PyPI's wheel with several GB of CUDA libraries."""
    text = (ROOT / "README.md").read_text()
    command = command_after("test-command")
    assert "torch==" in command
    version = re.search(r"torch==([\d.]+)", command)
    assert version
    cpu = f"pip install torch=={version.group(1)} --index-url https://download.pytorch.org/whl/cpu"
    assert text.index(cpu) < text.index("<!-- test-command -->")


def test_readme_sentences_are_the_tools_own() -> None:
    """Every number the README's v4.1 worked examples state comes from the computation
    the report and ``analyze`` use: the sentences are regenerated and must appear
    verbatim."""
    from gpuscale import load_round
    from gpuscale.analysis import AnalysisOptions, analyze
    from gpuscale.analysis.answers import answers
    from gpuscale.report.findings import why_efficiency_falls
    from gpuscale.tables import STUDY_WORKLOADS

    readme = " ".join(pages_text().split())
    results = analyze(load_round("v4.1"), list(STUDY_WORKLOADS), AnalysisOptions(n_boot=100))
    assert len(results) == 4
    for result in results:
        sentence = why_efficiency_falls(result.table, "H100-SXM5-80GB")
        assert sentence and sentence in readme, sentence
        frame = answers(result)
        for scope in frame["scope"].unique():
            text = answer_sentence(frame, scope)
            assert text in readme, text


# (workload, accelerator counts) whose family-reference E' range the README quotes
QUOTED_RANGES = {
    "bert": [(4,), (8,), (16,), (48, 64), (3472,)],
    "llama2_70b_lora": [(4, 8), (16,), (32,), (1024,)],
    "retinanet": [(4, 8), (32, 64), (2528,)],
    "stable_diffusion": [(8,), (16,), (32, 64), (512,), (1024,)],
}


def test_readme_efficiency_ranges_are_the_tools() -> None:
    from gpuscale import load_round
    from gpuscale.analysis import AnalysisOptions, analyze

    readme = " ".join(pages_text().split())
    results = analyze(
        load_round("v4.1"), list(QUOTED_RANGES), AnalysisOptions(reference="family", n_boot=100)
    )
    for result in results:
        table = result.table[result.table["accelerator_family"] == "H100-SXM5-80GB"]
        for counts in QUOTED_RANGES[result.workload]:
            values = table.loc[table["accelerators"].isin(counts), "normalized_efficiency"]
            low, high = f"{values.min():.2f}", f"{values.max():.2f}"
            where = (
                "-".join(f"{n:,}" for n in (counts[0], counts[-1]) if n)
                if len(counts) > 1
                else f"{counts[0]:,}"
            )
            quoted = f"{low if low == high else f'{low}-{high}'} at {where}"
            assert quoted in readme, (result.workload, quoted)
    # and the trends paragraph's two examples
    from gpuscale.analysis.trends import trends

    rows = trends(load_round().scores).set_index(["workload", "accelerator_family", "round"])
    b200 = rows.loc[("bert", "B200")]
    sd = rows.loc[("stable_diffusion", "H100-SXM5-80GB")]
    example = (
        f"BERT on 8 B200s went from {b200.loc['v4.1', 'best_time_at_common_min']:.2f} min "
        f"(v4.1, one system) to {b200.loc['v5.0', 'best_time_at_common_min']:.2f} min (v5.0, "
        f"{b200.loc['v5.0', 'systems']} systems), and Stable Diffusion on 8 H100s from "
        f"{sd.loc['v4.0', 'best_time_at_common_min']:.1f} min (v4.0) to "
        f"{sd.loc['v4.1', 'best_time_at_common_min']:.1f} min (v4.1)"
    )
    assert example in readme, example
    # and the split of Stable Diffusion's change, as the headline says it
    from gpuscale.analysis.trends import trends_headline

    family = rows.reset_index()
    family = family[
        (family["workload"] == "stable_diffusion")
        & (family["accelerator_family"] == "H100-SXM5-80GB")
    ]
    (headline,) = trends_headline(family)
    fewer = re.search(r"[\d.]+x fewer samples to converge", headline)
    higher = re.search(r"[\d.]+x higher throughput", headline)
    batch = re.search(r"global batch \d+ -> \d+", headline)
    assert fewer and higher and batch, headline
    split = f"{fewer[0]} ({batch[0]}), {higher[0]}"
    assert f"{example}: {split}." in readme, split


def answer_sentence(frame: pd.DataFrame, scope: str) -> str:
    """One sentence of a workload's answers in one scope, e.g. ``BERT (v4.1), within
    H100-SXM5-80GB: fastest 3,472, knee 4, speed x efficiency 64, E' >= 0.8 x best 8.``"""
    part = frame[frame["scope"] == scope]
    first = part.iloc[0]
    picks = ", ".join(f"{r.criterion} {_count(r.accelerators, r.note)}" for r in part.itertuples())
    where = "over all systems" if scope == "all systems" else f"within {scope.split(' (')[0]}"
    return f"{display_name(first['workload'])} ({first['round']}), {where}: {picks}."


def _count(accelerators: float, note: str) -> str:
    if not pd.isna(accelerators):
        return f"{int(accelerators):,}"
    return "n/a (not across families)" if note else "none"
