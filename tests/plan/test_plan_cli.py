"""``gpuscale plan`` as a user calls it, on the bundled rounds."""

from __future__ import annotations

import csv
import io
import json
import re

from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.tables.plan import NEAREST_KEYS

from ..golden import Golden

runner = CliRunner()
VIEW = "plan/cli_notes"
FAMILY = "H100-SXM5-80GB"  # what H100 is read as
ASK = ["plan", "--workload", "llama2_70b_lora", "--accelerator", "H100", "--devices"]


def test_json_is_one_document_with_the_promised_fields() -> None:
    result = runner.invoke(app, [*ASK, "8,16,64,256", "-f", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert [r["accelerators"] for r in rows] == [8, 16, 64, 256]
    for r in rows:
        assert 0 < r["time_to_train_min_low"] < r["time_to_train_min"] < r["time_to_train_min_high"]
        assert r["global_batch"] > 0 and isinstance(r["extrapolated"], bool)
        assert r["nearest"] and {
            "round",
            "submitter",
            "system",
            "accelerators",
            "time_to_train_min",
        } <= set(r["nearest"][0])
    # more devices, less time; the measured 8-device H100 systems take 20-40 minutes
    minutes = [r["time_to_train_min"] for r in rows]
    assert minutes == sorted(minutes, reverse=True)
    assert 15 < minutes[0] < 40


def test_csv_is_one_table_with_a_column_per_field_of_nearest() -> None:
    """Each system a count leans on gets a column per field, as JSON keeps them (its
    family, its time unrounded), not a sentence in one cell."""
    asked = [*ASK, "8-64"]
    result = runner.invoke(app, [*asked, "-f", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [int(r["accelerators"]) for r in rows] == [8, 16, 32, 64]
    assert "nearest" not in rows[0]
    document = json.loads(runner.invoke(app, [*asked, "-f", "json"]).stdout)
    for row, kept in zip(rows, document["rows"], strict=True):
        for i, system in enumerate(kept["nearest"], start=1):
            assert row[f"nearest_{i}_family"] == system["family"]
            assert float(row[f"nearest_{i}_time_to_train_min"]) == system["time_to_train_min"]
            assert int(row[f"nearest_{i}_accelerators"]) == system["accelerators"]
        assert all(row[f"nearest_3_{k}"] == "" for k in NEAREST_KEYS) == (len(kept["nearest"]) < 3)


def test_table_says_how_the_accelerator_was_read_the_classes_and_what_it_leans_on(
    golden: Golden,
) -> None:
    """The answer says how the name was read and each count's class in words; --explain
    says the classes, what each count leans on and the intervals' rule."""
    result = runner.invoke(app, [*ASK, "8,16,24"])
    assert result.exit_code == 0, result.output
    (read,) = [line for line in result.output.splitlines() if line.startswith("'H100' read")]
    assert f" {FAMILY}," in read  # the family it is read as
    assert [w for w in ("measured", "between measured") if w in result.stdout] == [
        "measured",
        "between measured",
    ]
    assert "class i" not in result.output and "lean on" not in result.output
    result = runner.invoke(app, [*ASK, "8,16,24", "--explain"])
    assert result.exit_code == 0, result.output
    assert read in result.output
    document = json.loads(runner.invoke(app, [*ASK, "8,16,24", "-f", "json"]).stdout)
    classes = {r["accelerators"]: r["count_class"] for r in document["rows"]}
    assert classes == {8: "i", 16: "i", 24: "ii_in"}  # the classes the notes say
    lines = result.output.splitlines()
    said = [line for line in lines if "(class i" in line]
    assert len(said) == 2 and "(class i): 8, 16" in said[0] and "(class ii): 24" in said[1]
    assert any(line.startswith("24 accelerators") and "lean on" in line for line in lines)
    golden.check(VIEW, "Llama2 70B LoRA on 8, 16, 24 H100: classes", "\n".join(said[:2]))
    (rule,) = [line for line in lines if line.startswith("80% intervals")]
    assert "multiplied" in rule and "divided" in rule  # a factor each way


def test_far_counts_are_marked_extrapolated() -> None:
    """Llama2 LoRA ran on 4 to 1,024 devices: 2 (fewer than any system) and 100,000 (6.6
    octaves beyond) are extrapolated and get no time (they had one: the bug); 4,096 is
    extrapolated, with a wider interval than 8's."""
    result = runner.invoke(app, [*ASK, "2,8,4096,100000", "-f", "json"])
    rows = json.loads(result.stdout)["rows"]
    assert [r["extrapolated"] for r in rows] == [True, False, True, True]
    assert [r["time_to_train_min"] is None for r in rows] == [True, False, False, True]
    widths = [r["time_to_train_min_high"] / r["time_to_train_min_low"] for r in rows[1:3]]
    assert widths[1] > widths[0]


def test_a_plan_with_no_time_at_any_count_exits_1_after_saying_why() -> None:
    """Every count beyond what the plan may say (100,000 devices) or below what ran
    (GPT-3 on 1 and 2): each row says why, in every format, and the exit status tells a
    script it got no time; one count with a time is an answer (0)."""
    for ask in (
        ["-w", "bert", "-a", "H100", "-n", "100000"],
        ["-w", "gpt3", "-a", "H100", "-n", "1,2"],
    ):
        for fmt in ([], ["-f", "json"], ["-f", "csv"], ["--explain"]):
            result = runner.invoke(app, ["plan", *ask, *fmt])
            assert result.exit_code == 1, (ask, fmt, result.output)
            assert "Traceback" not in result.output
    result = runner.invoke(app, ["plan", "-w", "bert", "-a", "H100", "-n", "100000", "-f", "json"])
    (row,) = json.loads(result.stdout)["rows"]
    assert row["time_to_train_min"] is None and row["accelerators"] == 100_000
    # GPT-3 on 1 device: two reasons (none ran so few; the state does not fit), one line
    # that says "no time" once, then each reason
    short = runner.invoke(
        app, ["plan", "-w", "gpt3", "-a", "H100", "-n", "1"], env={"COLUMNS": "400"}
    )
    (line,) = [t for t in short.stdout.splitlines() if t.startswith("1: ")]
    assert line.count("no time") == 1 and "fewer than 64" in line and "model state" in line
    answered = runner.invoke(app, ["plan", "-w", "bert", "-a", "H100", "-n", "8,100000"])
    assert answered.exit_code == 0, answered.output


def test_typos_get_suggestions_without_traceback(golden: Golden) -> None:
    result = runner.invoke(app, ["plan", "-w", "llama2_70b_lroa", "-a", "H100"])
    assert result.exit_code == 2 and "'llama2_70b_lora'" in result.output  # the closest
    golden.check(VIEW, "a workload mistyped", result.output)
    result = runner.invoke(app, ["plan", "-w", "bert", "-a", "Guadi2"])
    assert result.exit_code == 2 and "'Gaudi2'" in result.output
    golden.check(VIEW, "an accelerator mistyped", result.output)
    assert "Traceback" not in result.output


def test_bad_device_counts_are_refused(golden: Golden) -> None:
    result = runner.invoke(app, ["plan", "-w", "bert", "-a", "H100", "-n", "8,lots"])
    assert result.exit_code == 2 and "'lots'" in result.output  # the item that is no count
    golden.check(VIEW, "a count that is no number", result.output)
    result = runner.invoke(app, ["plan", "-w", "bert"])
    assert result.exit_code == 2 and "--accelerator" in result.output


def test_one_measured_system_says_why_beyond_it_is_wide_and_batches_are_whole(
    golden: Golden,
) -> None:
    """MI300X ran BERT once, on 8 devices (batch 1,024): 64 is three octaves beyond it,
    its batch the workload's typical one at 64 times MI300X's ratio to it at 8."""
    result = runner.invoke(app, ["plan", "-w", "bert", "-a", "MI300X", "-n", "8,64", "--explain"])
    assert result.exit_code == 0, result.output
    assert "inf%" not in result.output
    (wide,) = [line for line in result.stderr.splitlines() if "is wide" in line]
    assert "at 64 " in wide and "3.0 octaves" in wide  # log2(64 / 8) beyond its one count
    golden.check(VIEW, "BERT on 64 MI300X: why wide", wide)
    data = runner.invoke(app, ["plan", "-w", "bert", "-a", "MI300X", "-n", "8,64", "-f", "json"])
    rows = json.loads(data.stdout)["rows"]
    assert rows[0]["global_batch"] == 1024 and isinstance(rows[1]["global_batch"], int)
    assert rows[1]["global_batch"] > 1024 and rows[1]["count_class"] == "ii_out"


def test_a_batch_beyond_any_result_is_flagged_in_json_and_on_the_terminal(
    golden: Golden,
) -> None:
    """A walk: 2 H100s planned at 448 samples per device, BERT's results at most 256, said
    nowhere. JSON's row carries the flag, out of the Pareto front; the answer says it
    under the table; 4, a count H100 ran at its own batch, is not flagged."""
    asked = ["plan", "-w", "bert", "-a", "H100", "-n", "2,4"]
    rows = json.loads(runner.invoke(app, [*asked, "-f", "json"]).stdout)["rows"]
    assert [r["batch_per_accelerator"] for r in rows] == [448, 224]
    assert rows[0]["flags"].startswith("batch beyond the data: 448 samples per accelerator")
    assert "(at most 256: H100-PCIe-80GB in v4.0, " in rows[0]["flags"]
    assert (rows[0]["pareto"], rows[1]["flags"], rows[1]["pareto"]) == (False, "", True)
    answer = runner.invoke(app, asked)
    assert answer.exit_code == 0, answer.output
    said = " ".join(answer.stdout.split())
    (line,) = re.findall(r"2: batch beyond the data: .*? min", said)
    golden.check(VIEW, "BERT on 2 H100: a batch beyond the data", line)


def test_a_batch_below_any_result_is_flagged_in_json_and_on_the_terminal(
    golden: Golden,
) -> None:
    """A walk: 1,024 A100s planned at 3 samples per device, BERT's results at least 4,
    unflagged and picked by "speed x efficiency". JSON's row carries the flag, out of the
    picks; the answer says it once under the table for every count below (its own batch
    is the table's), with the plan at the nearest smaller count that keeps 4 a device,
    the same for both; 512, at 6 a device, is not flagged."""
    asked = ["plan", "-w", "bert", "-a", "A100-SXM4-80GB", "-n", "512,1024,2048"]
    rows = json.loads(runner.invoke(app, [*asked, "-f", "json"]).stdout)["rows"]
    assert [r["batch_per_accelerator"] for r in rows] == [6, 3, 3]
    for row in rows[1:]:
        assert row["flags"].startswith("batch below the data: fewer samples per accelerator")
        assert "(at least 4: H100-SXM5-80GB in v3.1, and 1 other result)" in row["flags"]
        assert (row["pareto"], row["stops_paying"]) == (False, "")
        assert "on 976 accelerators, the nearest smaller count that keeps it" in row["flags"]
    assert (rows[0]["flags"], rows[0]["pareto"]) == ("", True)
    answer = runner.invoke(app, asked)
    assert answer.exit_code == 0, answer.output
    said = " ".join(answer.stdout.split())
    (line,) = re.findall(r"1,024 and 2,048: batch below the data: .*? gives [\d.]+ min", said)
    golden.check(VIEW, "BERT on 1,024 and 2,048 A100: a batch below the data", line)


def test_unknown_is_not_offered_as_an_accelerator_family() -> None:
    result = runner.invoke(app, ["plan", "-w", "bert", "-a", "FooBar9000"])
    assert result.exit_code == 2
    assert "valid: " in result.output and "unknown" not in result.output.split("valid: ")[1]


def test_json_and_csv_keep_the_notes_the_table_says() -> None:
    """The model, its rounds and the class of each count qualify every format's numbers."""
    asked = ["plan", "-w", "bert", "-a", "MI300X", "-n", "8,64"]
    table = runner.invoke(app, [*asked, "--explain"])
    notes = [line for line in table.stderr.splitlines() if line.strip()]
    assert notes[0].startswith("Model: ") and any("beyond the family" in n for n in notes)
    document = json.loads(runner.invoke(app, [*asked, "-f", "json"]).stdout)
    assert document["notes"] == notes
    model = document["model"]
    assert (model["workload"], model["family"]) == ("bert", "MI300X")
    assert model["classes"] == [row["count_class"] for row in document["rows"]] == ["i", "ii_out"]
    as_csv = runner.invoke(app, [*asked, "-f", "csv"])
    # and the pick (or why none), which the table says on stdout, before them
    picked = [line for line in table.stdout.splitlines() if line.startswith(("picks ", "no pick"))]
    assert [n for n in as_csv.stderr.splitlines() if n.strip()] == [*picked, *notes]
    assert [int(r["accelerators"]) for r in csv.DictReader(io.StringIO(as_csv.stdout))] == [8, 64]


def test_the_batch_per_accelerator_is_the_global_batch_shown_over_the_count() -> None:
    """It was of the fitted batch: 478.93 per device beside a global batch of 479 on one
    RTX 4090 (a user walk), as the schema says: ``global_batch / accelerators``."""
    result = runner.invoke(
        app, ["plan", "-w", "bert", "-a", "RTX 4090", "--devices", "1,2,6,64", "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    for row in json.loads(result.stdout)["rows"]:
        if row["time_to_train_min"] is None:  # no time, no batch (1: none ran so few)
            assert row["global_batch"] is None and row["batch_per_accelerator"] is None
            continue
        assert row["global_batch"] == int(row["global_batch"])
        assert row["batch_per_accelerator"] == row["global_batch"] / row["accelerators"]


def test_each_column_the_answer_leaves_out_is_in_explain_by_the_same_name() -> None:
    """The answer leaves out columns for width and points to --explain for them ("(not
    shown, for width: picked by, nodes, global batch; --explain or -f csv)"); --explain
    called `picked by` `stops paying`, so the pointer led nowhere."""
    asked = ["plan", "-w", "bert", "-a", "H200", "-n", "8-512", "--price", "3", "--power", "700"]
    narrow = {"COLUMNS": "80"}
    answer = runner.invoke(app, asked, env=narrow)
    assert answer.exit_code == 0, answer.output
    pointer = re.search(r"not shown, for width: ([^;]+);", " ".join(answer.stdout.split()))
    assert pointer is not None, answer.stdout
    left_out = pointer.group(1).lower().split(", ")
    assert "picked by" in left_out
    explained = runner.invoke(app, [*asked, "--explain"], env=narrow)
    labels = {re.split(r"\s{2,}", line)[0].lower() for line in explained.stdout.splitlines()}
    assert set(left_out) <= labels, set(left_out) - labels


def test_minutes_past_ten_thousand_are_written_whole_never_with_an_exponent() -> None:
    """Llama 3.1 405B on 288 RTX 4090s (a family that never ran it; 256 cannot hold its
    state in the usable 23.2 GB of each) plans 8,578 minutes, its interval's high end past
    10,000 (once shown as "1.642e+04"): every minute on the terminal and in --explain is
    written as the minutes column writes it, the interval's ends equal to the row's to 4
    significant digits."""
    argv = ["plan", "-w", "llama31_405b", "-a", "RTX 4090", "-n", "288,512"]
    rows = json.loads(runner.invoke(app, [*argv, "-f", "json"]).stdout)["rows"]
    assert max(r["time_to_train_min_high"] for r in rows) >= 10_000  # the case asked for
    for extra in ([], ["--explain"]):
        result = runner.invoke(app, [*argv, *extra], env={"COLUMNS": "250"})
        assert result.exit_code == 0, result.output
        assert not re.search(r"\d[eE][+-]?\d", result.output), result.output
    table = runner.invoke(app, argv, env={"COLUMNS": "250"}).stdout
    for r in rows:
        line = next(x for x in table.splitlines() if re.match(rf"\W+{r['accelerators']} ", x))
        low, high = re.search(r"([\d,.]+)-([\d,.]+)", line).groups()
        for said, value in ((low, r["time_to_train_min_low"]), (high, r["time_to_train_min_high"])):
            assert float(said.replace(",", "")) == float(f"{value:.4g}")


def test_a_count_below_the_familys_counts_is_called_below_not_beyond() -> None:
    """BERT on H100 ran 4 to 3,472: 3 was called "beyond measured", as 4,096 is; a count
    under the family's smallest is below it, on the table, in --explain and in the notes."""
    ask = ["plan", "-w", "bert", "-a", "H100", "-n", "3,8,4096"]
    result = runner.invoke(app, ask)
    assert result.exit_code == 0, result.output
    words = {
        int(m[1].replace(",", "")): m[2].strip()
        for m in re.finditer(r"│\s+([\d,]+) │.*│ (\w+ ?\w*)\s+│\n", result.stdout)
    }
    assert words == {3: "below measured", 8: "measured", 4096: "beyond measured"}, result.stdout
    explained = runner.invoke(app, [*ask, "--explain"]).output
    assert "ii_out (below measured)" in explained and "ii_out (beyond measured)" in explained
    assert "not measured, below the family's counts (class ii): 3 (" in explained
    assert "not measured, beyond the family's counts (class ii): 4,096 (" in explained


def test_a_name_with_pattern_characters_is_refused_not_read_as_the_name_without_them() -> None:
    """`-a "H100*"` planned H100-SXM5-80GB in silence, as if the star were not typed."""
    for option, name in (("-a", "H100*"), ("-a", "H10?"), ("-w", "bert*")):
        ask = {"-w": "bert", "-a": "H100", "-n": "8"} | {option: name}
        result = runner.invoke(app, ["plan", *[x for kv in ask.items() for x in kv]])
        assert result.exit_code == 2, result.output
        assert f"{name}: a pattern (*, ? or [...]) is not read" in result.output
        assert "Traceback" not in result.output


def test_a_workload_of_other_numbers_is_offered_no_name() -> None:
    """`-w llama3_8b` was offered llama31_405b, another model (two of its numbers
    changed); a digit off is still offered (`gpt33`: gpt3)."""
    result = runner.invoke(app, ["plan", "-w", "llama3_8b", "-a", "H100"])
    assert result.exit_code == 2 and "unknown benchmark; valid: " in result.output
    assert "did you mean" not in result.output
    result = runner.invoke(app, ["plan", "-w", "gpt33", "-a", "H100"])
    assert result.exit_code == 2 and "(did you mean 'gpt3'?)" in result.output


def test_a_part_of_two_workloads_offers_both() -> None:
    """`-w lama` is in llama2_70b_lora and llama31_405b: plan offered neither where
    `analyze -b lama` (one of them in its round) offered its one; both are candidates."""
    result = runner.invoke(app, ["plan", "-w", "lama", "-a", "H100"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    said = " ".join(result.output.split())
    offered = said.split("(did you mean ", 1)[1].split("?)", 1)[0]
    assert offered.replace("'", "").split(" or ") == ["llama2_70b_lora", "llama31_405b"]
    result = runner.invoke(app, ["plan", "-w", "mlp", "-a", "H100"])  # none holds it
    assert result.exit_code == 2 and "did you mean" not in result.output
