"""A result whose samples to converge are flagged as impossible (another unit, a logging
error: ``samples_to_converge_flag``) feeds no pooled convergence law and draws from none:
its interval rests on its own runs, and no pool reports it kept apart."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gpuscale.analysis.metrics import scaling_table
from gpuscale.analysis.score_intervals import bootstrap_intervals, measure_convergence_spread

from .tables import scores
from .test_intervals import runs_of

LOW, HIGH = "time_to_train_min_ci_low", "time_to_train_min_ci_high"
FLAG = "1 sample is more than 10x outside what the reference convergence points needed"
PACE = (1.0, 1.01, 0.99, 1.005, 0.995)


def _three_at_one_batch() -> tuple[pd.DataFrame, dict[str, list[tuple[float, float]]]]:
    """v0.7 BERT's case at one batch: ``a`` logs 2.5M samples every run; ``b`` and ``c``
    log 1 or 1.2 "samples" (flagged), their times varying with those counts as a
    pooled law would say."""
    frame = scores([("a", "A100", 8, 10.0), ("b", "A100", 16, 6.0), ("c", "A100", 16, 6.2)])
    frame["samples_to_converge"] = [2.5e6, 1.0, 1.0]
    frame["samples_to_converge_flag"] = ["", FLAG, FLAG]
    counts = (1.0, 1.0, 1.2, 1.0, 1.2)
    runs = {
        "a": [(10.0 * p, 2.5e6) for p in PACE],
        "b": [(6.0 * p * c, c) for p, c in zip(PACE, counts, strict=True)],
        "c": [(6.2 * p * c, c) for p, c in zip(PACE, counts[::-1], strict=True)],
    }
    return frame, runs


def test_flagged_results_pool_neither_with_each_other_nor_with_others() -> None:
    """Flagged, ``b`` and ``c`` are in no pool: nothing kept apart anywhere (they were
    pooled together, apart from ``a`` by 2.5e6x), and each one's interval is the one its
    runs give with no samples to converge known at all."""
    frame, runs = _three_at_one_batch()
    table = scaling_table(frame, "bert")
    ci = bootstrap_intervals(table, runs_of(runs), n_boot=500, seed=3)
    ci = ci.set_index(table["system_id"])
    assert (ci["ci_kept_apart"] == 0).all()
    assert ci["ci_kept_apart_ratio"].isna().all()

    unknown = {k: [(t, np.nan if k != "a" else s) for t, s in v] for k, v in runs.items()}
    plain = frame.assign(samples_to_converge_flag="")
    alone = bootstrap_intervals(scaling_table(plain, "bert"), runs_of(unknown), n_boot=500, seed=3)
    alone = alone.set_index(table["system_id"])
    for system in ("b", "c"):
        assert ci.loc[system, [LOW, HIGH]].tolist() == alone.loc[system, [LOW, HIGH]].tolist()
    for system in ("a", "b", "c"):  # each holds its own score
        t = float(table.set_index("system_id").loc[system, "time_to_train_min"])
        assert ci.loc[system, LOW] <= t <= ci.loc[system, HIGH]


def test_a_flag_the_round_s_scores_carry_counts_for_results_the_table_left_out() -> None:
    """``c`` outside the table (another division, say): its flag in the round's scores
    keeps its runs out of ``b``'s pool all the same."""
    frame, runs = _three_at_one_batch()
    table = scaling_table(frame[frame["system_id"] != "c"], "bert")
    ci = bootstrap_intervals(table, runs_of(runs), scores=frame, n_boot=300, seed=3)
    ci = ci.set_index(table["system_id"])
    assert (ci["ci_kept_apart"] == 0).all()
    unflagged = frame.assign(samples_to_converge_flag=["", FLAG, ""])
    pooled = bootstrap_intervals(table, runs_of(runs), scores=unflagged, n_boot=300, seed=3)
    # c unflagged is kept apart from a (2.5e6x) and b's flag still keeps b out of it
    assert pooled.set_index(table["system_id"]).loc["a", "ci_kept_apart"] == 1


@pytest.mark.parametrize("flagged", [(), ("b",)])
def test_the_spread_bound_is_measured_on_unflagged_results_only(flagged) -> None:
    """``measure_convergence_spread`` counts a flagged result in neither figure."""
    frame, runs = _three_at_one_batch()
    frame["samples_to_converge_flag"] = [FLAG if s in flagged else "" for s in frame["system_id"]]
    measured = measure_convergence_spread(runs_of(runs), frame, 0.99)
    assert measured["results"] == 3 - len(flagged)
    assert measured["pairs"] == 3 - len(flagged)  # each result at the batch against the rest


def test_the_explanation_says_once_that_their_intervals_are_their_own_runs(golden) -> None:
    """Under analyze's table: a line per flagged count, then one for their intervals."""
    from gpuscale.analysis.terminal import flagged_sentences, kept_apart_sentences

    frame, runs = _three_at_one_batch()
    table = scaling_table(frame, "bert")
    shown = pd.concat(
        [table, bootstrap_intervals(table, runs_of(runs), n_boot=200, seed=1)], axis=1
    )
    lines = flagged_sentences(shown)
    assert len(lines) == 3
    assert kept_apart_sentences(shown) == []
    golden.check("analysis/intervals_flagged", "two flagged results", "\n".join(lines))


def test_two_flagged_systems_of_one_name_are_told_apart_by_their_ids() -> None:
    """v0.7's Google "TPU v3-8192" is two systems (tpu-v3-8192-TF and -JAX), both
    flagged: each line names its system id, so no two lines read alike; a name no other
    flagged system shares stays as it is."""
    from gpuscale.analysis.terminal import flagged_sentences

    frame, _ = _three_at_one_batch()
    frame["samples_to_converge_flag"] = FLAG
    frame["system_name"] = ["Twin", "Twin", "Alone"]
    lines = flagged_sentences(scaling_table(frame, "bert"))[:3]
    assert len(set(lines)) == 3
    ids = dict(zip(frame["system_name"], frame["system_id"], strict=False))
    twins = [line for line in lines if " Twin (" in line]
    assert len(twins) == 2 and all(f"({ids['Alone']})" not in line for line in lines)
