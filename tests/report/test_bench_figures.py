"""The own-hardware figures say what their bars are."""

from __future__ import annotations

import pytest

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.results import bench_table
from gpuscale.report.bench_figures import PHASES, speedup_by_size, step_breakdown

from ..builders import bench_record


def test_step_breakdown_title_does_not_call_the_ddp_bar_plain() -> None:
    """The 1-device bar is DDP's one-rank step (it carries a DDP's-own-overhead segment),
    not the bare module's "plain" step: the title tells the bars apart by their fill."""
    records = [
        bench_record("m", 10**6, 1, 100.0, sync_overhead_ms=0.5, plain_step_ms=3.0),
        bench_record("m", 10**6, 2, 150.0, sync_overhead_ms=2.5, comm_ms=8.0),
    ]
    chart = step_breakdown(bench_scaling(bench_table(records)))
    title = chart.figure.axes[0].get_title()
    overhead_on_one = [t for t in chart.labels["bar-1-2-0"] if t.startswith("DDP's own overhead")]
    assert overhead_on_one and not overhead_on_one[0].startswith("DDP's own overhead 0%")
    assert "plain" not in title
    assert "1 device (solid) vs 2 (hatched)" in title and "DDP" in title


def test_the_sync_step_beyond_its_communication_is_drawn_as_waiting() -> None:
    """4.15 ms of sync overhead beyond DDP's own against 3.84 ms of communication timed:
    the bar draws no more communication than there was, and the rest as waiting, so the
    segments still cover the whole step."""
    records = [
        bench_record("m", 10**6, 1, 100.0, sync_overhead_ms=0.5),
        bench_record("m", 10**6, 2, 150.0, sync_overhead_ms=0.5 + 4.15, comm_ms=3.84),
    ]
    chart = step_breakdown(bench_scaling(bench_table(records)))
    heights = {p.get_gid(): p.get_height() for p in chart.figure.axes[0].patches}
    names = [name for _, name in PHASES]
    waiting = heights[f"bar-2-{names.index('waiting for the slowest rank')}-0"]
    exposed = heights[f"bar-2-{names.index('exposed communication')}-0"]
    assert 0 < waiting < exposed
    assert sum(h for gid, h in heights.items() if gid.startswith("bar-2-")) == pytest.approx(1)


def _two_runs_of_one_model() -> list[dict]:
    """What the README's bench line then docs/measure.md's into the same file give: the
    same model measured twice (two sweeps), both rows kept."""
    return [
        bench_record("m", 10**6, n, rate, sweep_id=sweep, plain_step_ms=3.0)
        for sweep, rates in (("s1", (100.0, 150.0)), ("s2", (110.0, 90.0)))
        for n, rate in zip((1, 2), rates, strict=True)
    ]


def test_every_bench_figure_draws_a_model_run_twice() -> None:
    """Each bench figure draws a file holding the same model twice (it raised ValueError,
    duplicate labels), one bar per run, the runs told apart in their labels."""
    scaling = bench_scaling(bench_table(_two_runs_of_one_model()))
    chart = step_breakdown(scaling)
    ticks = [t.get_text() for t in chart.figure.axes[0].get_xticklabels()]
    assert len(ticks) == 2 and len(set(ticks)) == 2 and all(t.startswith("m") for t in ticks)
    bars = [key for key in chart.labels if key.startswith("bar-2-")]
    # both runs' N = 2 bars, every phase each but FSDP's own overhead (DDP runs)
    assert len(bars) == 2 * (len(PHASES) - 1)
    speedups = speedup_by_size(scaling).labels["points-2"]
    assert len(speedups) == 2 and speedups[0] != speedups[1]


def test_a_parameter_axis_writes_every_tick_one_way() -> None:
    """Models of 0.1M to 30M parameters: the x ticks read 100k, 1M, 10M, never 100000
    beside 1e+06 (the class: every plain log axis, style.plain_log)."""
    records = [
        bench_record(f"m{k}", params, n, 100.0 * (n if k else 0.5))
        for k, params in enumerate((10**5, 10**6, 3 * 10**7))
        for n in (1, 2)
    ]
    chart = speedup_by_size(bench_scaling(bench_table(records)))
    ax = chart.figure.axes[0]
    chart.figure.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert {"100k", "1M", "10M"} <= set(ticks), ticks
    assert not [t for t in ticks if "e+" in t or (t.isdigit() and len(t) > 4)], ticks


def test_an_fsdp_runs_own_overhead_is_not_called_ddps() -> None:
    """On the H100 rows tf-30m ran FSDP: its own work was drawn and counted as "DDP's own
    overhead", where the advice beside it says FSDP's work holds no DDP copies (its bare
    step lowered here by 10 ms: on the real row FSDP's step is no slower than the bare
    module's, so its own work is 0 and nothing is drawn)."""
    from pathlib import Path

    from gpuscale.bench.results import read_results
    from gpuscale.report.bench_words import bench_findings

    records = read_results(Path(__file__).parent / "h100_paths.jsonl")[0]
    for record in records:  # FSDP's step 10 ms over its bare module's, so it has own work
        if record["config"]["strategy"] == "fsdp":
            record["timing"]["plain_step_ms_mean"] = record["timing"]["step_ms_mean"] - 10.0
    scaling = bench_scaling(bench_table(records))
    fsdp = scaling[scaling["strategy"] == "fsdp"]
    assert len(fsdp) == 1 and fsdp["fsdp_overhead_ms"].iloc[0] > 0  # the premise
    chart = step_breakdown(scaling)
    names = [name for _, name in PHASES]

    def labels(phase: str) -> list[str]:
        own = names.index(phase)
        return [
            t for gid, texts in chart.labels.items() if gid.split("-")[2] == str(own) for t in texts
        ]

    assert not [t for t in labels("DDP's own overhead") if ": tf-30m" in t]
    on_fsdp = [t for t in labels("FSDP's own overhead") if ": tf-30m" in t]
    assert on_fsdp and all(t.startswith("FSDP's own overhead") for t in on_fsdp)
    legend = [t.get_text() for t in chart.figure.axes[0].get_legend().get_texts()]
    assert {"DDP's own overhead", "FSDP's own overhead"} <= set(legend)
    # the findings count the FSDP run apart from DDP's
    gpu = scaling[(scaling["accelerators"] == 1) & (scaling["device"] == "cuda")]
    ddp_runs = int((gpu["strategy"] == "ddp").sum())
    found = [s for s in bench_findings(scaling) if "bare module's throughput" in s and "H100" in s]
    ddp = [s for s in found if "DDP's step reaches" in s]
    fsdp_said = [s for s in found if "FSDP's step reaches" in s]
    assert len(ddp) == 1 and f"the {ddp_runs} N = 1 runs" in ddp[0], found
    assert len(fsdp_said) == 1 and "(the N = 1 run," in fsdp_said[0], found


def test_a_long_model_name_is_drawn_whole_in_the_step_breakdown() -> None:
    """A model given by its path (``--model`` with a long file name), its tick label
    rotated, reaches past a fixed margin: every character of its label is drawn, inside
    the figure."""
    from gpuscale.analysis.bench_scaling import bench_scaling
    from gpuscale.bench.results import bench_table
    from gpuscale.report.bench_figures import step_breakdown

    from ..builders import one_and_two
    from .figure_checks import clipped_texts

    name = "/home/someone/experiments/my models/transformer_with_a_long_name.py:make_model"
    rows = one_and_two(name, 10**6, family="custom") + one_and_two("tf-7m", 7 * 10**6)
    figure = step_breakdown(bench_scaling(bench_table(rows))).figure
    assert clipped_texts(figure) == []
    drawn = [t.get_text().replace("\n", "") for t in figure.axes[0].get_xticklabels()]
    assert name in drawn


@pytest.mark.parametrize(
    "title",
    [
        # the README's bench: its title reached past the figure's left edge ('redicted ...')
        "Advice: Predicted training of mlp-0.2m (200k parameters) with DDP on CPU processes",
        "Advice: Predicted training of /home/someone/my models/transformer_with_a_long_name.py"
        ":make_model (1.2M parameters) with FSDP on 8 x NVIDIA H100 80GB HBM3 within one node",
    ],
    ids=["readme", "path"],
)
def test_the_advice_figure_draws_its_whole_title_inside(title: str) -> None:
    import pandas as pd

    from gpuscale.report.bench_figures import predicted_scaling

    from .figure_checks import clipped_texts

    predicted = pd.DataFrame(
        {"accelerators": [1, 2], "speedup": [1.0, 0.16], "speedup_low": [1.0, 0.01]}
    ).assign(speedup_high=[1.0, 2.0])
    figure = predicted_scaling(predicted, None, title).figure
    assert clipped_texts(figure) == []
    drawn = figure.axes[0].get_title()
    assert " ".join(drawn.split()) == " ".join(title.split())  # every word, in order
    assert "\n" in drawn
