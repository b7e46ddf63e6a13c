"""`gpuscale trends` and `gpuscale energy` walked as a user: a benchmark asked that has no
power logs is said, not dropped; a count (the global batch) prints whole in CSV and JSON of
every command; E' above 1 reads with its reason in words; a trend of one round says why
there is no change; no time ratio across rulesets that set other quality targets."""

from __future__ import annotations

import io
import json

import pandas as pd
from typer.testing import CliRunner

from gpuscale.analysis.superlinear import REASONS
from gpuscale.analysis.trend_words import family_trends
from gpuscale.analysis.trends import trends
from gpuscale.tables.republished import is_republished

from ..golden import Golden
from .test_trends import round_scores

VIEW = "analysis/trends_energy_walk"


def _run(*args: str):  # type: ignore[no-untyped-def]
    from gpuscale.cli import app

    return CliRunner().invoke(app, list(args))


def test_energy_says_each_benchmark_asked_without_power_logs(golden: Golden) -> None:
    """v4.1 has power logs of Llama2 70B LoRA only: `-b bert,llama2_70b_lora` showed its
    rows alone, BERT unsaid."""
    both = _run("energy", "--round", "v4.1", "-b", "bert,llama2_70b_lora", "-f", "csv")
    assert both.exit_code == 0, both.output
    rows = pd.read_csv(io.StringIO(both.stdout))
    assert set(rows["workload"]) == {"llama2_70b_lora"} and len(rows) == 1
    said = [line for line in both.stderr.splitlines() if "no power logs" in line]
    assert len(said) == 1 and "bert" in said[0] and "llama2_70b_lora" in said[0]
    golden.check(VIEW, "energy -b bert,llama2_70b_lora --round v4.1: note", said[0])
    study = _run("energy", "--round", "v4.1", "-b", "study", "-f", "csv")
    assert study.exit_code == 0, study.output
    (line,) = [x for x in study.stderr.splitlines() if "no power logs" in x]
    assert all(w in line for w in ("bert", "retinanet", "stable_diffusion"))
    # not asked: every workload is read, none named for lacking power logs
    every = _run("energy", "--round", "v4.1", "-f", "csv")
    assert every.exit_code == 0 and "no power logs" not in every.stderr


def test_the_global_batch_prints_whole_in_csv_and_json() -> None:
    """`energy -f json` gave "global_batch_size": 768.0 and `analyze -f csv` 448.0, where
    `scores` gives 768: a count, whole in every format."""
    energy = _run("energy", "--round", "v4.0", "-b", "bert", "-f", "json")
    assert energy.exit_code == 0, energy.output
    batches = [r["global_batch_size"] for r in json.loads(energy.stdout)]
    assert batches == [768, 768] and all(type(b) is int for b in batches)
    energy_csv = _run("energy", "--round", "v4.0", "-b", "bert", "-f", "csv")
    assert pd.read_csv(io.StringIO(energy_csv.stdout))["global_batch_size"].dtype == "int64"
    analyzed = _run("analyze", "--round", "v4.1", "-b", "bert", "-f", "csv")
    assert analyzed.exit_code == 0, analyzed.output
    column = analyzed.stdout.splitlines()[0].split(",").index("global_batch_size")
    cells = [line.split(",")[column] for line in analyzed.stdout.splitlines()[1:3]]
    assert cells == ["448", "448"], cells  # Krai's two RTX A5000 systems
    document = _run("analyze", "--round", "v4.1", "-b", "bert", "-f", "json")
    systems = json.loads(document.stdout)["rounds"][0]["systems"]
    assert all(type(s["global_batch_size"]) is int for s in systems)


def test_each_reason_for_e_prime_above_one_is_said_once_in_words(golden: Golden) -> None:
    """v3.0 RetinaNet's notes give "E' 1.33 above 1: above peers too" (A100-SXM4-80GB): its
    reason in words once under the table, as `analyze` says it."""
    result = _run("trends", "--round", "v3.0", "-b", "retinanet")
    assert result.exit_code == 0, result.output
    table = _run("trends", "--round", "v3.0", "-b", "retinanet", "-f", "csv")
    notes = " ".join(pd.read_csv(io.StringIO(table.stdout), keep_default_na=False)["note"])
    codes = [code for code in REASONS if f"above 1: {code}" in notes]
    assert "above peers too" in codes and "slow reference" in codes
    lines = result.stdout.splitlines()
    words = [line for line in lines if line.startswith("E' above 1, ")]
    assert [w.split(":")[0].removeprefix("E' above 1, ") for w in words] == codes
    assert all(w.endswith(REASONS[c]) for w, c in zip(words, codes, strict=True))
    golden.check(VIEW, "trends --round v3.0 -b retinanet: reasons", "\n".join(words))
    assert not any(line.startswith("E' above 1, ") for line in table.stderr.splitlines())


def test_a_trend_of_one_round_says_why_no_change(golden: Golden) -> None:
    one = _run("trends", "--round", "v4.1", "-b", "bert")
    assert one.exit_code == 0, one.output
    (headline,) = [line for line in one.stdout.splitlines() if line.startswith("largest change")]
    assert "one round" in headline and "most common accelerator count" not in headline
    golden.check(VIEW, "trends --round v4.1 -b bert: headline", headline)
    two = _run("trends", "--round", "v4.0,v4.1", "-b", "bert")
    assert "one round" not in two.stdout


def test_rounds_whose_common_counts_differ_say_why_and_the_change_at_a_count_both_ran(
    golden: Golden,
) -> None:
    """v3.0 and v5.0 BERT: H100-SXM5-80GB, the one family in both, ran mostly 8 in v3.0 and
    64 (its one system) in v5.0, so no change is at a common count; it ran 64 in both, and
    the headline gives that change (it said "none to state")."""
    import gpuscale
    from gpuscale.analysis.trends import change_at_a_count, largest_change, unpaired

    scores = pd.concat([gpuscale.load_round(r).scores for r in ("v3.0", "v5.0")])
    frame = trends(scores, ["bert"])
    assert largest_change(frame) is None
    assert unpaired(frame) == [("H100-SXM5-80GB", 8, "v3.0", 64, "v5.0")]
    near = change_at_a_count(frame)
    # the data: the family's fastest closed, first-published BERT result at 64 in each round
    h100 = scores[
        (scores["workload"] == "bert")
        & (scores["accelerator_family"] == "H100-SXM5-80GB")
        & (scores["division"] == "closed")
        & (scores["accelerators"] == 64)
        & ~is_republished(scores)
    ]
    best = h100.groupby("round")["time_to_train_min"].min()
    assert (near.accelerators, near.rounds) == (64, ("v3.0", "v5.0"))
    assert near.times_min == (best["v3.0"], best["v5.0"])
    said = _run("trends", "--round", "v3.0,v5.0", "-b", "bert")
    assert said.exit_code == 0, said.output
    headline = said.stdout.splitlines()[0]
    assert "none to state" not in headline and "at 64 accelerators" in headline
    golden.check(VIEW, "trends --round v3.0,v5.0 -b bert: headline", headline)


def test_no_time_ratio_across_another_quality_target(golden: Golden) -> None:
    """BERT's target was 0.712 in v0.7 and 0.720 from v1.0: 8 accelerators in both rounds
    gave "(0.800x the time at 8 from v0.7 to v3.0)", a time to another target."""
    frame = pd.concat(
        [
            round_scores("v0.7", "bert", "bert", [("a", "A100", 8, 50.0), ("b", "A100", 8, 55.0)]),
            round_scores("v3.0", "bert", "bert", [("c", "A100", 8, 40.0)]),
        ],
        ignore_index=True,
    )
    (said,) = family_trends(trends(frame))
    assert "50 min on 8 in v0.7" in said and "40 min on 8 in v3.0" in said
    assert "x the time" not in said and "quality target 0.72 (0.712 in v0.7)" in said
    golden.check(VIEW, "family trend across quality targets", said)
    same = pd.concat(
        [
            round_scores("v4.0", "bert", "bert", [("a", "A100", 8, 50.0)]),
            round_scores("v4.1", "bert", "bert", [("c", "A100", 8, 40.0)]),
        ],
        ignore_index=True,
    )
    (kept,) = family_trends(trends(same))
    assert "0.8x the time at 8 from v4.0 to v4.1" in kept


def test_the_reports_energy_section_says_the_workloads_without_power_logs(
    golden: Golden, tmp_path
) -> None:
    """The default report (v4.1, the study's four) listed Llama2 70B LoRA's energy alone,
    BERT, RetinaNet and Stable Diffusion unsaid."""
    from gpuscale import load_round
    from gpuscale.report.rounds_section import energy_section
    from gpuscale.report.svg import FigureFiles

    tables = load_round("v4.1")
    study = ["bert", "llama2_70b_lora", "retinanet", "stable_diffusion"]
    findings = energy_section(tables, study, FigureFiles(tmp_path, every=False)).findings
    said = [f for f in findings if f.startswith("No power logs")]
    assert len(said) == 1 and "Llama2" not in said[0]
    assert all(name in said[0] for name in ("BERT", "RetinaNet", "Stable Diffusion", "v4.1"))
    assert any(f.startswith("Llama2 70B LoRA (v4.1): ") for f in findings)
    golden.check(VIEW, "report energy section of the study's four, v4.1", said[0])
    alone = energy_section(tables, ["llama2_70b_lora"], FigureFiles(tmp_path, every=False))
    assert not any(f.startswith("No power logs") for f in alone.findings)


def test_a_folder_of_yours_beside_its_round_is_no_change_in_time(golden: Golden) -> None:
    """`trends my-results --round v4.1` read the folder by v4.1's rules as 'my results
    (v4.1)', sorted before v4.1, and headed "best time 214 min (my results (v4.1)) -> 361
    min (v4.1), 1.69x slower": two sets of results of one round, said as a change in time."""
    from gpuscale.analysis.trends import largest_change, trends_headline

    frame = pd.concat(
        [
            round_scores("my results (v4.1)", "bert", "bert", [("me", "RTX 4090", 6, 214.0)]),
            round_scores("v4.1", "bert", "bert", [("tiny", "RTX 4090", 6, 361.0)]),
        ],
        ignore_index=True,
    )
    rows = trends(frame)
    assert len(rows) == 2 and set(rows["common_accelerators"]) == {6}
    assert largest_change(rows) is None
    (headline,) = trends_headline(rows)
    assert "one round, v4.1" in headline
    golden.check(VIEW, "a folder of yours beside v4.1: headline", headline)
    (said,) = family_trends(rows)
    assert said.startswith("RTX 4090: 214 min (3.6 h) on 6 in my results (v4.1), 361 min")
    assert "x the time" not in said


def test_the_republished_note_counts_the_families_shown() -> None:
    """`trends -b bert --family MI300X` said "25 results republished in a later round ...
    are counted once": BERT's of every family, none of them MI300X's. Each family's note
    counts its own: the rows' "left out N" where each round of it has a row, and the
    families' counts add up to the note of all of them."""
    import re

    from gpuscale.analysis.trends import rounds_trends_view
    from gpuscale.mlperf.load import load_rounds

    tables = load_rounds(None, ["v4.0", "v4.1"])

    def said(families: list[str] | None) -> tuple[int, int]:
        view = rounds_trends_view(tables, ["bert"], families, republished=False)
        rows = " ".join(view.frame["note"])
        shown = sum(int(n) for n in re.findall(r"left out (\d+) republished", rows))
        note = [re.match(r"(\d+) results? republished", n) for n in view.notes]
        return shown, next((int(m.group(1)) for m in note if m), 0)

    assert said(["RTX 4090"]) == (0, 0)
    h100 = said(["H100-SXM5-80GB"])
    assert h100[0] == h100[1] > 0  # v4.0's results republished in v4.1
    scores = tables.scores[tables.scores["workload"] == "bert"]
    counted = scores["accelerators"].notna()
    families = sorted(scores.loc[counted, "accelerator_family"].astype(str).unique())
    each = sum(said([f])[1] for f in families)
    # the CPU-only systems' copies (no accelerator count: no family to ask for) in the total
    cpu_only = scores[~counted & is_republished(scores) & (scores["division"] == "closed")]
    assert each + len(cpu_only) == said(None)[1] > h100[1]


def test_command_csv_shows_a_formula_from_a_log_as_text() -> None:
    """`trends -f csv` printed a system `=HYPERLINK(1)/tinybox_green` (a submitter folder
    named so) as is: a spreadsheet opening `gpuscale trends -f csv > t.csv` runs it. Every
    command's CSV now quotes it as the written tables do (one leading ')."""
    from gpuscale.tables.views import csv_cell, records_csv

    assert csv_cell("=HYPERLINK(1)/tinybox_green") == "'=HYPERLINK(1)/tinybox_green"
    assert csv_cell(("+1", "a")) == "'+1; a" and csv_cell(-1.5) == -1.5
    assert csv_cell("tinycorp/tinybox_green") == "tinycorp/tinybox_green"
    text = records_csv([{"system": "@SUM(A1)", "minutes": 2.5}])
    assert text.splitlines() == ["system,minutes", "'@SUM(A1),2.5"]
    frame = pd.read_csv(io.StringIO(text))
    assert frame["system"].str.removeprefix("'").tolist() == ["@SUM(A1)"]  # the value back


def test_the_other_division_note_counts_the_families_shown() -> None:
    """`trends --family H100 -b resnet` said "v3.1 ResNet-50: 1 open-division result left
    out": Ailiverse's A100-SXM4-40GB result, not an H100's."""
    from gpuscale.analysis.trends import rounds_trends_view
    from gpuscale.mlperf.load import load_rounds

    tables = load_rounds(None, ["v3.0", "v3.1"])

    def open_notes(families: list[str] | None) -> list[str]:
        view = rounds_trends_view(tables, ["resnet"], families, republished=False)
        return [n for n in view.notes if "open-division" in n]

    (whole,) = open_notes(None)
    assert whole.startswith("v3.1 ResNet-50: 1 open-division result left out")
    assert open_notes(["A100-SXM4-40GB"]) == [whole]
    assert open_notes(["H100-SXM5-80GB"]) == []


def test_trends_and_energy_explain_their_columns_and_what_they_leave_out(golden: Golden) -> None:
    """``--explain``'s lines under the table (how each column is made, the results no row
    holds by why), as the terminal prints them: kept in the golden file."""
    for args in (("trends", "--round", "v4.0,v4.1", "-b", "bert"), ("energy", "--round", "v4.1")):
        plain, explained = _run(*args).stdout, _run(*args, "--explain").stdout
        assert explained.startswith(plain)
        golden.check(VIEW, f"{' '.join(args)} --explain", explained[len(plain) :].rstrip("\n"))
