"""Where two results compared share the accelerators (the same family at the same count,
or one submitter system), the difference is software, said as such, with the
frameworks named where they differ: trends' largest change and the rows it rests on, and
a system faster than the reference at the reference's own count."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuscale import load_round, scaling_table, trend_table
from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.analysis.software import (
    framework_names,
    frameworks_differ,
    reference_framework,
    with_framework,
)
from gpuscale.analysis.terminal import software_sentences
from gpuscale.analysis.trends import change_at_a_count, largest_change, trends, trends_headline
from gpuscale.mlperf import read_round
from gpuscale.tables import SCALING_COLUMNS


@pytest.mark.parametrize(
    ("field", "names"),
    [
        ("PyTorch NVIDIA Release 20.06", ("PyTorch",)),
        ("tf2.0", ("TensorFlow",)),
        ("research-tf", ("TensorFlow",)),
        ("NGC MXNet 22.09 , NGC PyTorch 22.09", ("MXNet", "PyTorch")),
        ("tinygrad, commit b5546912e24e0a864b35924da4efa5d71cfe368b", ("tinygrad",)),
        ("maxtext", ("JAX",)),
        ("LLMBoost 1.1.0", ("LLMBoost",)),
        ("", ()),
    ],
)
def test_framework_names_as_the_fields_write_them(field: str, names: tuple[str, ...]) -> None:
    assert framework_names(field) == names


def test_frameworks_differ_only_where_they_share_no_name() -> None:
    assert frameworks_differ("PyTorch NVIDIA Release 20.06", "tf2.0")
    assert not frameworks_differ("tinygrad, commit b554", "tinygrad, branch v5.0")
    assert not frameworks_differ("NGC MXNet 22.09 , NGC PyTorch 22.09", "PyTorch 2.0.1a0")
    assert not frameworks_differ("", "tf2.0")  # one unknown: nothing said


def test_the_largest_bert_change_v41_to_v50_is_one_systems_software() -> None:
    v41, v50 = load_round("v4.1"), load_round("v5.0")
    scores = pd.concat([v41.scores, v50.scores], ignore_index=True)
    systems = pd.concat([v41.systems, v50.systems], ignore_index=True)
    frame = trends(with_framework(scores, systems), ["bert"])
    change = largest_change(frame)
    assert change is not None
    assert (change.accelerator_family, change.accelerators, change.rounds) == (
        "RTX 4090",
        6,
        ("v4.1", "v5.0"),
    )
    assert change.ratio == pytest.approx(1.69, abs=0.005)
    # tinycorp's tinybox green in both rounds, tinygrad in both (another commit)
    assert change.systems == ("tinycorp/tinybox_green", "tinycorp/tinybox_green")
    assert change.same_system and not change.frameworks_differ
    assert [framework_names(f) for f in change.frameworks] == [("tinygrad",)] * 2
    (line,) = trends_headline(frame)
    # its throughput is the software's; the samples to converge moved with the batch
    assert (
        "1.68x higher throughput (140.4 -> 235.5 samples/s), software (the same system, tinycorp/"
        in line
    )
    assert line.endswith(
        "fewer samples to converge (3,036,528 -> 3,017,784, global batch 66 -> 96)"
    )
    # scores without the framework column: the system is still known; the framework is not
    bare = largest_change(trends(scores, ["bert"]))
    assert bare is not None and bare.same_system and bare.frameworks == ("", "")


def test_no_change_stated_where_the_common_counts_differ_though_one_count_repeats() -> None:
    # GPT-3 on H100-SXM5-80GB: 512 and 10,752 accelerators in both v3.1 and v4.0, but the
    # most common count is 10,752 in v3.1 and 512 in v4.0, so no pair compares at it; the
    # headline says so and gives the change at a count both ran
    v31, v40 = load_round("v3.1"), load_round("v4.0")
    scores = pd.concat([v31.scores, v40.scores], ignore_index=True)
    h100 = scores[
        (scores["workload"] == "gpt3") & (scores["accelerator_family"] == "H100-SXM5-80GB")
    ]
    both = set(h100.loc[h100["round"] == "v3.1", "accelerators"]) & set(
        h100.loc[h100["round"] == "v4.0", "accelerators"]
    )
    assert {512, 10752} <= both
    frame = trends(scores, ["gpt3"])
    rows = frame[frame["accelerator_family"] == "H100-SXM5-80GB"]
    assert list(rows["common_accelerators"]) == [10752, 512]
    assert largest_change(frame) is None
    (line,) = trends_headline(frame)
    assert line.startswith("largest change at a family's most common count: none (")
    assert "H100-SXM5-80GB 10,752 in v3.1 -> 512 in v4.0" in line
    # the change said is at a count both rounds ran, and says so
    near = change_at_a_count(frame)
    assert near.accelerators in both and near.rounds == ("v3.1", "v4.0")
    at = h100[h100["accelerators"] == near.accelerators].groupby("round")["time_to_train_min"]
    assert near.times_min == (at.min()["v3.1"], at.min()["v4.0"])
    assert (
        f"at a count a family ran in both rounds: GPT-3 175B on {near.accelerator_family}" in line
    )


@pytest.mark.shared
def test_v07_bert_dgx1_against_googles_v100_reference_is_software(shared_archive) -> None:
    tables = read_round(shared_archive("v0.7"))
    (result,) = analyze(tables, ["bert"], AnalysisOptions(n_boot=100))
    table = result.table
    row = table[table["system_id"] == "dgx1_ngc20.06_pytorch"].iloc[0]
    # the same 8 x V100-SXM2-16GB as the reference, Google's TensorFlow gpu-v100-8-TF2.0
    assert (row["reference_system_id"], row["superlinear"]) == (
        "gpu-v100-8-TF2.0",
        "faster at N_ref",
    )
    assert row["accelerators"] == row["reference_accelerators"] == 8
    reference = reference_framework(table).loc[row.name]
    assert (row["framework"], reference) == ("PyTorch NVIDIA Release 20.06", "tf2.0")
    assert frameworks_differ(row["framework"], reference)
    said = software_sentences(table)
    assert len(said) == 1 and said[0].startswith("NVIDIA dgx1_ngc20.06_pytorch: E' 1.22")


def test_the_scaling_table_carries_the_framework_its_scores_carry() -> None:
    """One join (scores x systems by round, org, system_id) puts ``framework`` on the
    scores; the scaling table keeps it after its own columns, and without it is as before."""
    v41 = load_round("v4.1")
    bare = scaling_table(v41.scores, "BERT")
    assert list(bare.columns) == list(SCALING_COLUMNS)
    joined = scaling_table(with_framework(v41.scores, v41.systems), "BERT")
    assert list(joined.columns) == [*SCALING_COLUMNS, "framework"]
    assert len(joined) == len(bare) == 29
    tinybox = joined[joined["system_id"] == "tinybox_green"]["framework"].tolist()
    assert tinybox == ["tinygrad, commit b5546912e24e0a864b35924da4efa5d71cfe368b"]
    assert (joined["framework"] != "").all()
    assert set(with_framework(v41.scores, None)["framework"]) == {""}


def test_trend_table_names_the_framework_at_the_common_count() -> None:
    frame = trend_table(load_round("v4.1", "v5.0"), "BERT").set_index(
        ["accelerator_family", "round"]
    )
    fields = frame.loc[("RTX 4090", "v5.0"), ["system_at_common", "framework_at_common"]]
    assert tuple(fields) == ("tinycorp/tinybox_green", "tinygrad, branch mlperf_training_v5.0")
    assert (frame["framework_at_common"] != "").all()
