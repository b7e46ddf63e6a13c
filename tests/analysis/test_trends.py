"""Trends across rounds: renamed benchmarks joined, new ones flagged, retired ones only
where the rules retired them, each result counted once."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from gpuscale.analysis.trends import TREND_COLUMNS, trends
from gpuscale.tables.republished import is_republished, mark_copies

from ..golden import Golden
from .tables import scores

VIEW = "analysis/trend_notes"
BEST_COMMON, BEST_LARGEST = "best_time_at_common_min", "best_time_at_largest_min"
E_LARGEST = "normalized_efficiency_at_largest"


def notes(out: pd.DataFrame) -> str:
    """Each row's note, by workload and round: what a golden file holds."""
    return "\n".join(f"{r.workload} {r.round}: {r.note}" for r in out.reset_index().itertuples())


def round_scores(
    name: str, benchmark: str, workload: str, rows: list[tuple[str, str, int, float]]
) -> pd.DataFrame:
    frame = scores(rows, workload=workload)
    frame["round"] = name
    frame["benchmark"] = benchmark
    return frame


def test_renamed_new_and_retired(golden: Golden) -> None:
    frame = pd.concat(
        [
            round_scores(
                "v4.0", "ssd", "retinanet", [("a", "H100", 8, 30.0), ("b", "H100", 64, 6.0)]
            ),
            round_scores("v4.1", "ssd", "retinanet", [("a", "H100", 8, 28.0)]),
            round_scores(
                "v5.0", "retinanet", "retinanet", [("a", "H100", 8, 25.0), ("c", "H100", 16, 14.0)]
            ),
            round_scores("v4.0", "gpt3", "gpt3", [("g", "H100", 512, 50.0)]),
            round_scores("v5.0", "rgat", "rgat", [("r", "H100", 8, 5.0)]),
        ],
        ignore_index=True,
    )
    out = trends(frame)
    assert tuple(out.columns) == TREND_COLUMNS
    retina = out[out.workload == "retinanet"].set_index("round")
    assert list(retina.index) == ["v4.0", "v4.1", "v5.0"]
    renamed = retina.loc["v5.0", "note"]  # said of the benchmark, not the row's family
    assert renamed.startswith("benchmark ") and renamed.endswith("from ssd")
    assert retina.loc["v4.0", BEST_COMMON] == 30.0
    assert retina.loc["v4.0", "largest_accelerators"] == 64
    assert retina.loc["v4.0", E_LARGEST] == pytest.approx(30 / 6 / 8)
    # gpt3 ran until v4.1: absent from the loaded v5.0, but not retired after v4.0; its one
    # system has no E' (against itself)
    gpt3 = out[out.workload == "gpt3"]["note"].iloc[0]
    assert "after v4.0" in gpt3 and "retired" not in gpt3 and "no E'" in gpt3
    assert "new in v5.0" in out[out.workload == "rgat"]["note"].iloc[0]
    golden.check(VIEW, "renamed, new and no longer loaded", notes(out))


def test_bundled_rounds_in_order() -> None:
    from gpuscale import load_round

    out = trends(load_round().scores, ["bert"])
    h100 = out[out.accelerator_family == "H100-SXM5-80GB"].set_index("round")
    assert h100.index.tolist() == ["v3.0", "v3.1", "v4.0", "v4.1", "v5.0"]
    # Published MLPerf records (official_scores_v3.0/v3.1.csv of mlperf_logging's
    # summarizer): BERT on 3,072 H100 (NVIDIA + CoreWeave, 384 nodes) in 0.1338 min, then on
    # 3,472 H100 (NVIDIA Eos, 434 nodes) in 0.1193 min.
    assert h100.loc["v3.0", "largest_accelerators"] == 3072
    assert h100.loc["v3.0", BEST_LARGEST] == pytest.approx(0.13380625)
    assert h100.loc["v3.1", "largest_accelerators"] == 3472
    assert h100.loc["v3.1", BEST_LARGEST] == pytest.approx(0.119275)
    # v4.0 and v4.1 republished the Eos result: those rounds' figures leave it out
    assert h100.loc["v4.0", "largest_accelerators"] < 3472
    assert "republished" in h100.loc["v4.0", "note"]


def _runs(frame: pd.DataFrame, start_ms: dict[str, float]) -> pd.DataFrame:
    """Five runs per result, starting at ``start_ms[system_id]`` (same start: same runs)."""
    rows = []
    for r in frame.itertuples():
        for k in range(5):
            begin = start_ms[r.system_id] + k * 1e6
            rows.append(
                {
                    "round": r.round,
                    "org": r.org,
                    "system_id": r.system_id,
                    "benchmark": r.benchmark,
                    "run_start_ms": begin,
                    "run_stop_ms": begin + r.time_to_train_min * 60e3,
                }
            )
    return pd.DataFrame(rows)


def test_a_republished_result_counts_once(golden: Golden) -> None:
    frame = pd.concat(
        [
            round_scores("v3.1", "bert", "bert", [("big", "H100", 3472, 0.12)]),
            round_scores("v4.0", "bert", "bert", [("big", "H100", 3472, 0.12)]),
            round_scores("v4.0", "bert", "bert", [("new", "H100", 8, 5.0)]),
            round_scores("v4.1", "bert", "bert", [("big", "H100", 3472, 0.12)]),
            round_scores("v4.1", "bert", "bert", [("new", "H100", 16, 3.0)]),
        ],
        ignore_index=True,
    )
    marked = mark_copies(frame, _runs(frame, {"big": 1.7e12, "new": 1.8e12}))
    big = marked[marked.system_id == "big"]
    assert big["first_round"].tolist() == ["v3.1"] * 3
    assert big["republished_in"].tolist() == ["v4.0, v4.1"] * 3
    assert marked[marked.system_id == "new"]["republished_in"].tolist() == ["", ""]
    out = trends(marked).set_index("round")
    assert out.loc["v3.1", "largest_accelerators"] == 3472
    assert out.loc["v4.0", "largest_accelerators"] == 8  # the copy is left out
    assert out.loc["v4.1", "largest_accelerators"] == 16
    assert "1 republished" in out.loc["v4.0", "note"]
    assert trends(marked).attrs["republished_left_out"] == 2
    every = trends(marked, republished=True).set_index("round")
    assert every.loc["v4.0", "largest_accelerators"] == 3472
    assert "1 republished" in every.loc["v4.0", "note"]
    both = f"{notes(out)}\n{notes(every)}"
    golden.check(VIEW, "a republished result left out, then included", both)


@pytest.mark.parametrize("own", ["mine (v4.1)", "mine (v4.0)", "a (v4.1)", "zz (v4.1)"])
def test_a_users_folder_never_first_publishes_a_published_result(own: str) -> None:
    """A user's folder holding the runs of a published result (a copy of their own
    submission) is read beside that round: the result was first published in the round,
    whatever the folder's name or the rules it is read by."""
    frame = pd.concat(
        [
            round_scores(own, "bert", "bert", [("mine", "H100", 4, 10.5)]),
            round_scores("v4.1", "bert", "bert", [("mine", "H100", 4, 10.5)]),
        ],
        ignore_index=True,
    )
    marked = mark_copies(frame, _runs(frame, {"mine": 1.7e12}))
    assert marked["first_round"].tolist() == ["v4.1", "v4.1"]
    assert marked["republished_in"].tolist() == [own, own]
    assert is_republished(marked).tolist() == [True, False]


def test_same_times_on_another_accelerator_count_is_another_result() -> None:
    frame = pd.concat(
        [
            round_scores("v4.0", "bert", "bert", [("a", "H100", 8, 5.0)]),
            round_scores("v4.1", "bert", "bert", [("a", "H100", 16, 5.0)]),
        ],
        ignore_index=True,
    )
    marked = mark_copies(frame, _runs(frame, {"a": 1.7e12}))
    assert not is_republished(marked).any()


def test_first_in_the_loaded_rounds(golden: Golden) -> None:
    frame = pd.concat(
        [
            round_scores("v4.0", "bert", "bert", [("a", "H100", 8, 5.0)]),
            round_scores("v4.0", "sd", "stable_diffusion", [("s", "H100", 8, 40.0)]),
            round_scores("v4.1", "sd", "stable_diffusion", [("s", "H100", 8, 30.0)]),
            round_scores("v4.1", "lora", "llama2_70b_lora", [("l", "H100", 8, 30.0)]),
        ],
        ignore_index=True,
    )
    firsts = {"stable_diffusion": "v3.1", "llama2_70b_lora": "v4.0", "bert": "v0.7"}
    out = trends(frame, first_rounds=firsts).set_index(["workload", "round"])
    assert "since v3.1" in out.loc[("stable_diffusion", "v4.0"), "note"]
    # llama2_70b_lora began in v4.0 but is absent from the loaded v4.0: seen from v4.1 on.
    assert "since v4.0" in out.loc[("llama2_70b_lora", "v4.1"), "note"]
    assert "new in" not in " ".join(out["note"])
    golden.check(VIEW, "first in the loaded rounds", notes(out))


def test_retired_only_where_the_rules_retired_it(golden: Golden) -> None:
    """BERT's last round is v5.0 (ruleset 5.1.0 has none): in v2.0 + v5.1 it is "not in
    the loaded rounds after v2.0", never "retired after v2.0"; in v5.0 + v5.1 it is
    retired after v5.0. A workload the rules still hold is never called retired."""
    from gpuscale.mlperf.benchmarks import last_rounds

    lasts = last_rounds()
    assert lasts["bert"] == "v5.0" and "llama2_70b_lora" not in lasts
    assert lasts["llama31_405b"] == lasts["dlrm_dcnv2"] == "v6.0"  # dropped in 6.1.0
    for loaded, retired in (("v2.0", False), ("v5.0", True)):
        frame = pd.concat(
            [
                round_scores(loaded, "bert", "bert", [("a", "A100", 8, 20.0)]),
                round_scores(loaded, "lora", "llama2_70b_lora", [("l", "H100", 8, 30.0)]),
                round_scores("v5.1", "lora", "llama2_70b_lora", [("l", "B200", 8, 20.0)]),
                round_scores("v6.1", "x", "llama31_8b", [("q", "B200", 8, 20.0)]),
            ],
            ignore_index=True,
        )
        out = trends(frame, last_rounds=lasts).set_index(["workload", "round"])
        bert = out.loc[("bert", loaded), "note"]
        assert ("retired" in bert) is retired and f"after {loaded}" in bert
        assert retired or "until v5.0" in bert  # the last round the rules hold it
        assert "retired" not in out.loc[("llama2_70b_lora", "v5.1"), "note"]
        golden.check(VIEW, f"BERT loaded in {loaded} and v5.1", notes(out))


def test_a_benchmark_loaded_later_without_a_score_is_said_unscored(golden: Golden) -> None:
    """v0.7 and v1.1 loaded: v1.1's BERT results are closed division without a score (they
    fail today's checks); the note said "benchmark not in the loaded rounds after v0.7",
    where v1.1 holds them, and the row of a workload absent from v1.1 still says so."""
    frame = pd.concat(
        [
            round_scores("v0.7", "bert", "bert", [("a", "A100", 8, 49.0), ("b", "A100", 16, 30.0)]),
            round_scores("v1.1", "bert", "bert", [("a", "A100", 8, float("nan"))]),
            round_scores("v0.7", "gnmt", "gnmt", [("g", "V100", 8, 20.0)]),
            round_scores("v1.1", "resnet", "resnet", [("r", "A100", 8, 30.0)]),
        ],
        ignore_index=True,
    )
    out = trends(frame).set_index(["workload", "round"])
    assert ("bert", "v1.1") not in out.index  # no scored result: no row
    bert = out.loc[("bert", "v0.7"), "note"]
    assert "not scored in the loaded rounds after v0.7 (its results in v1.1" in bert
    assert "not in the loaded rounds" in out.loc[("gnmt", "v0.7"), "note"]
    golden.check(VIEW, "loaded later without a score", notes(out))


def test_counts_are_whole_and_one_round_is_said_to_be_no_trend(golden: Golden) -> None:
    """A walk: `trends -f csv` wrote equilibrium_accelerators as 4.0, and `trends --round
    v4.1` gave a table of one round with no word that a trend needs several."""
    from typer.testing import CliRunner

    from gpuscale.cli import app

    result = CliRunner().invoke(app, ["trends", "--round", "v4.1,v5.0", "-b", "bert", "-f", "csv"])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(io.StringIO(result.stdout), dtype=str)
    for column in (
        "systems",
        "common_accelerators",
        "largest_accelerators",
        "equilibrium_accelerators",
    ):
        assert frame[column].dropna().str.fullmatch(r"\d+").all(), frame[column].tolist()
    one = CliRunner().invoke(app, ["trends", "--round", "v4.1", "-b", "bert", "-f", "csv"])
    assert one.exit_code == 0 and "one round loaded" in one.stderr and "(v4.1)" in one.stderr
    golden.check(VIEW, "trends of one round: stderr", one.stderr)
    assert "one round loaded" not in result.stderr
    # two rounds loaded, the benchmark in one: never "one round loaded"
    newest = CliRunner().invoke(app, ["trends", "--round", "v4.1,v5.0", "-b", "llama31_405b"])
    assert newest.exit_code == 0, newest.output
    assert "one round loaded" not in newest.stderr and "of the 2 rounds loaded" in newest.stderr


def test_the_reports_trend_words_are_the_tables_once_each() -> None:
    """A walk: the report's trends section read "BERT: first in the loaded rounds ...;
    first in the loaded rounds ...; one system: no E'; ..." (no family, no round, clauses
    twice) and no numbers. Each family seen in two rounds gets its best times from the
    table, and each note clause is said once, with the rows it is about."""
    import re

    from gpuscale import load_round
    from gpuscale.analysis.trend_words import family_trends, grouped_notes

    rows = trends(load_round("v4.0", "v4.1", "v5.0").scores, ["bert"])
    said = family_trends(rows)
    several = rows.groupby("accelerator_family")["round"].nunique()
    assert [s.split(":")[0] for s in said] and {s.split(":")[0] for s in said} == set(
        several[several > 1].index
    )
    for sentence in said:
        family = sentence.split(":")[0]
        own = rows[rows["accelerator_family"] == family]
        for r in own.itertuples():
            assert f"on {int(r.common_accelerators):,} in {r.round}" in sentence
        found = re.findall(r"([\d.,]+) min(?: \([\d.,-]+ (?:h|days)\))? on", sentence)
        times = [float(t.replace(",", "")) for t in found]
        assert times == pytest.approx(list(own["best_time_at_common_min"]), rel=5e-3)
    every = {c for n in rows["note"] for c in str(n).split("; ") if c}
    notes = grouped_notes(rows)
    assert len(notes) == len(every) and all(any(n.startswith(c) for n in notes) for c in every)
    for note in grouped_notes(rows):
        for label in re.findall(r"\(([^()]*v\d\.\d[^()]*)\)$", note)[:1]:
            for item in label.removeprefix("each of ").split(", "):
                family, round_name = item.rsplit(" ", 1)
                assert (
                    (rows["accelerator_family"] == family) & (rows["round"] == round_name)
                ).any()


def test_the_republished_results_trends_count_add_up_to_the_datasets() -> None:
    """`dataset` said 71 results republish an earlier one, `trends` 70 and neither said
    why: the 71st is open division, which trends leaves out; trends says so."""
    from gpuscale.analysis.dataset import written_sentence
    from gpuscale.analysis.trends import trends_view
    from gpuscale.tables.republished import counted_in_analyses

    frame = pd.concat(
        [
            round_scores("v3.1", "bert", "bert", [("big", "H100", 3472, 0.12)]),
            round_scores("v4.0", "bert", "bert", [("big", "H100", 3472, 0.12)]),
            round_scores("v4.1", "bert", "bert", [("big", "H100", 3472, 0.12)]),
            round_scores("v3.1", "bert", "bert", [("open", "H100", 64, 30.0)]),
            round_scores("v4.0", "bert", "bert", [("open", "H100", 64, 30.0)]),
            round_scores("v4.0", "bert", "bert", [("new", "H100", 8, 5.0)]),
        ],
        ignore_index=True,
    )
    frame.loc[frame["system_id"] == "open", "division"] = "open"
    marked = mark_copies(frame, _runs(frame, {"big": 1.7e12, "open": 1.6e12, "new": 1.8e12}))
    copies = marked[is_republished(marked)]
    view = trends_view(marked, None, None, republished=False, first_rounds={}, last_rounds={})
    [said] = [n for n in view.notes if "republished" in n]
    closed = int((copies["division"] == "closed").sum())
    opened = int((copies["division"] == "open").sum())
    assert said.startswith(f"{closed} result{'' if closed == 1 else 's'} republished")
    assert f"({opened} more is open division, left out)" in said
    # the dataset's count is the sum
    results = counted_in_analyses(marked)
    dataset_said = written_sentence(results, marked.iloc[:0], "out")
    assert f"; {closed + opened} of the results republish" in dataset_said


def test_a_round_of_another_quality_target_is_said_and_not_the_largest_change() -> None:
    """BERT's target was 0.712 in v0.7 and 0.720 from v1.0: an A100 family at 8 in v0.7
    and v3.0 (49 -> 16 min) is another training, said on the later row and never the
    headline's like-with-like change, which falls to the next pair (v3.0 -> v3.1 at 8)."""
    from gpuscale.analysis.trends import largest_change

    frame = pd.concat(
        [
            round_scores("v0.7", "bert", "bert", [("a", "A100", 8, 49.0), ("b", "A100", 16, 30.0)]),
            round_scores("v3.0", "bert", "bert", [("a", "A100", 8, 16.0), ("b", "A100", 16, 9.0)]),
            round_scores("v3.1", "bert", "bert", [("a", "A100", 8, 15.0), ("b", "A100", 16, 8.0)]),
        ],
        ignore_index=True,
    )
    out = trends(frame).set_index("round")
    said = "quality target 0.72 (0.712 in v0.7): its times do not compare with v0.7's"
    assert said in out.loc["v3.0", "note"]
    assert "quality target" not in out.loc["v0.7", "note"] + out.loc["v3.1", "note"]
    change = largest_change(out.reset_index())
    assert change is not None and change.rounds == ("v3.0", "v3.1")
    assert change.times_min == (16.0, 15.0)


def test_a_change_of_global_batch_is_split_from_throughput() -> None:
    """Stable Diffusion's best 8 x H100 went from 42.2 min (v4.0) to 31.7 min (v4.1), once
    said "1.33x faster: software or host"; the two ran global batch 512 and 256 (v4.1's
    RCPs added 256), 2,560,000 and 2,048,000 samples to converge, at 1,010 and 1,076
    samples/s: most of it is the samples, the throughput 1.07x."""
    from gpuscale import load_round
    from gpuscale.analysis.trend_words import family_trends
    from gpuscale.analysis.trends import trends_headline

    rows = trends(load_round("v3.1", "v4.0", "v4.1").scores, ["stable_diffusion"])
    h100 = rows[rows["accelerator_family"] == "H100-SXM5-80GB"]
    by_round = h100.set_index("round")
    assert list(by_round.loc[["v4.0", "v4.1"], "global_batch_at_common"]) == [512, 256]
    assert list(by_round.loc[["v4.0", "v4.1"], "samples_to_converge_at_common"]) == [
        2_560_000,
        2_048_000,
    ]
    assert by_round.loc["v3.1", "convergence_unit_at_common"] == "steps"
    (line,) = trends_headline(h100)
    assert "31.7 min (v4.1), 1.33x faster: 1.25x fewer samples to converge (2,560,000 -> " in line
    assert "2,048,000, global batch 512 -> 256); 1.07x higher throughput (1,010 -> 1,076 " in line
    assert line.endswith("samples/s), software or host (the same accelerators)")
    # the report's sentence, v3.1 (steps) to v4.1 (samples): one system, not software alone
    (sentence,) = family_trends(h100)
    assert sentence.endswith(
        "the same system: software and samples to converge (global batch 512 -> 256; not "
        "split: counted in steps, then samples))"
    )


def test_a_left_out_republished_result_that_changes_the_pick_is_said() -> None:
    """v4.1 BERT on H100: trends gave equilibrium 16 where `analyze` gives 8, because Dell's
    4-GPU result (first in v4.0) is left out of v4.1's row; the note said only how many
    were left out, not that the pick changed."""
    from gpuscale import load_round
    from gpuscale.analysis import AnalysisOptions, analyze

    rows = trends(load_round("v4.0", "v4.1").scores, ["bert"])
    h100 = rows[rows["accelerator_family"] == "H100-SXM5-80GB"].set_index("round")
    (result,) = analyze(
        load_round("v4.1"), ["bert"], AnalysisOptions(reference="family", n_boot=100)
    )
    (own,) = [e for e in result.by_family if e.scope == "H100-SXM5-80GB"]
    picked = own.efficiency_threshold.accelerators
    row = h100.loc["v4.1"]
    assert row["equilibrium_accelerators"] != picked
    assert (
        f"change the E' >= 0.8 x best pick: {picked} with them (as analyze gives it), "
        f"{row['equilibrium_accelerators']} without" in row["note"]
    )
    assert "pick:" not in h100.loc["v4.0", "note"]  # its copies change nothing


def test_fewer_samples_from_moved_rules_are_said_as_the_rules() -> None:
    """Stable Diffusion's best 8 x B200 went 19.5 min (v4.1) -> 13 min (v5.0), 2,240,000 ->
    1,600,000 samples at batch 256 both: v5.0's reference runs converge sooner (E(256):
    2.23M by v4.1's RCPs, 1.79M by v5.0's, more than ERA_STEP apart), so the fewer samples
    are said as the rules'; H100's v4.0 -> v4.1 (E(256) 2.37M -> 2.23M, within it) is not."""
    from gpuscale import load_round
    from gpuscale.analysis.trends import largest_change

    rows = trends(load_round("v4.0", "v4.1", "v5.0").scores, ["stable_diffusion"])
    b200 = largest_change(rows[rows["accelerator_family"] == "B200"])
    assert b200 is not None and b200.rounds == ("v4.1", "v5.0")
    assert b200.references == pytest.approx((2_232_163, 1_788_977), rel=1e-4)
    assert b200.split.rules_moved
    h100 = largest_change(rows[rows["accelerator_family"] == "H100-SXM5-80GB"])
    assert h100 is not None and h100.rounds == ("v4.0", "v4.1")
    assert h100.references == pytest.approx((2_374_904, 2_232_163), rel=1e-4)
    assert not h100.split.rules_moved


def test_a_republished_count_shared_by_rows_reads_as_each_rows() -> None:
    """The note "left out 1 republished result (H100-SXM5-80GB v4.1, H200-SXM5-141GB v5.0)" read as
    one in all where stderr said 2: the grouped clause's count times the rows it names adds
    up to the republished results the trends left out."""
    import re

    from gpuscale.analysis.trend_words import grouped_notes

    frame = pd.concat(
        [
            round_scores("v3.1", "bert", "bert", [("big", "H100", 3472, 0.12)]),
            round_scores("v4.0", "bert", "bert", [("big", "H100", 3472, 0.12)]),
            round_scores("v4.1", "bert", "bert", [("big", "H100", 3472, 0.12)]),
            round_scores("v4.0", "bert", "bert", [("new", "H100", 8, 5.0)]),
            round_scores("v4.1", "bert", "bert", [("newer", "H100", 8, 4.0)]),
        ],
        ignore_index=True,
    )
    marked = mark_copies(frame, _runs(frame, {"big": 1.7e12, "new": 1.8e12, "newer": 1.9e12}))
    rows = trends(marked, None, republished=False, first_rounds={}, last_rounds={})
    assert rows.attrs["republished_left_out"] == 2  # premise: one in each of two rounds
    total = 0
    for note in grouped_notes(rows):
        found = re.match(r"left out (\d+) republished results? .*\((each of )?([^()]*)\)$", note)
        if found:
            total += int(found[1]) * len(found[3].split(", "))
            assert (found[2] is not None) == ("," in found[3])  # each row's where several
    assert total == rows.attrs["republished_left_out"]


def test_the_samples_before_and_after_are_written_alike() -> None:
    """BERT on 8 x H100-SXM5-80GB, v4.0 -> v4.1: 2,474,623.6 samples (a mean, not whole) ->
    2,418,302 (whole) read '2,470,000 -> 2,418,302', one end rounded, the other exact; both
    are written to 3 significant figures now, two whole counts still in full."""
    from gpuscale import load_round
    from gpuscale.analysis.trend_words import change_cause
    from gpuscale.analysis.trends import largest_change

    rows = trends(load_round("v4.0", "v4.1").scores, ["bert"])
    h100 = largest_change(rows[rows["accelerator_family"] == "H100-SXM5-80GB"])
    assert h100 is not None and h100.rounds == ("v4.0", "v4.1")
    s0, s1 = h100.split.samples
    assert not float(s0).is_integer() and float(s1).is_integer()
    assert "samples to converge (2,470,000 -> 2,420,000)" in change_cause(h100.split, "")


def test_samples_that_did_not_change_offset_nothing() -> None:
    """ResNet-50 on 8 x L40S, v3.1 -> v4.0: 35 epochs both, 1.18x slower; the change read
    'partly offset by 1.00x fewer epochs to converge (35 -> 35, ...)', a change that is
    none, said to undo part of the throughput's."""
    from gpuscale import load_round
    from gpuscale.analysis.trends import largest_change, trends_headline

    rows = trends(load_round("v3.1", "v4.0").scores, ["resnet"])
    l40s = rows[rows["accelerator_family"] == "L40S"]
    change = largest_change(l40s)
    assert change is not None and change.split.samples == (35.0, 35.0)
    (line,) = trends_headline(l40s)
    assert "offset" not in line and "1.00x" not in line
    assert line.endswith(
        "1.18x lower throughput (0.01365 -> 0.01153 epochs/s), software or host (the same "
        "accelerators); the same epochs to converge (35 -> 35, global batch 2,400 -> 1,600)"
    )


def test_a_throughput_written_1_00x_is_said_the_same_and_offsets_nothing() -> None:
    """Samples 1.25x fewer beside a throughput 0.25% lower read '...; partly offset by
    1.00x lower throughput': a factor written 1.00x is no change, either side."""
    from gpuscale.analysis.trend_words import TimeSplit, change_cause

    split = TimeSplit(
        times_min=(10.0, 8.02),
        batches=(512.0, 256.0),
        samples=(2.0e6, 1.6e6),
        units=("samples", "samples"),
    )
    said = change_cause(split, "software or host")
    assert "offset" not in said and "1.00x" not in said
    assert said.startswith("1.25x fewer samples to converge (2,000,000 -> 1,600,000")
    assert "; the same throughput (3,333 -> 3,325 samples/s)" in said


def test_a_change_at_a_count_both_rounds_ran_is_in_the_rows() -> None:
    """H100's most common count moves from 8 (v4.0) to 64 (v4.1): the v4.1 row carries the
    count both rounds ran whose best time changed most (64: 10 -> 5 min, against 16:
    4 -> 3.5), the round before and both times, as the headline's ``change_at_a_count``
    states them; a row whose common count stayed, or with no row before, has none."""
    from gpuscale.analysis.trends import change_at_a_count

    frame = pd.concat(
        [
            round_scores(
                "v4.0",
                "bert",
                "bert",
                [
                    *[("a", "H100", 8, 40.0), ("b", "H100", 8, 41.0), ("c", "H100", 16, 4.0)],
                    *[("d", "H100", 64, 10.0), ("m", "MI300X", 8, 30.0), ("n", "MI300X", 16, 16.0)],
                ],
            ),
            round_scores(
                "v4.1",
                "bert",
                "bert",
                [
                    *[("e", "H100", 64, 5.0), ("f", "H100", 64, 5.5), ("g", "H100", 16, 3.5)],
                    *[("o", "MI300X", 8, 28.0), ("p", "MI300X", 16, 15.0)],
                ],
            ),
        ],
        ignore_index=True,
    )
    out = trends(frame).set_index(["accelerator_family", "round"])
    moved = out.loc[("H100", "v4.1")]
    assert (
        moved["common_accelerators"] == 64 and out.loc[("H100", "v4.0"), "common_accelerators"] == 8
    )
    assert (moved["shared_with_round"], moved["shared_accelerators"]) == ("v4.0", 64)
    assert (moved["best_time_at_shared_before_min"], moved["best_time_at_shared_min"]) == (
        10.0,
        5.0,
    )
    change = change_at_a_count(trends(frame))
    assert change is not None
    assert (change.rounds, change.accelerators, change.times_min) == (
        ("v4.0", "v4.1"),
        64,
        (10.0, 5.0),
    )
    rest = out.drop(index=[("H100", "v4.1")])
    assert rest["shared_accelerators"].isna().all() and rest["shared_with_round"].isna().all()
    assert rest["best_time_at_shared_min"].isna().all()
