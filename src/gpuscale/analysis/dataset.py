"""The cross-round dataset: every result and run of the rounds given, in two tidy tables.

One row per result (system x benchmark x round; columns ``DATASET_COLUMNS``): the official
score and why there is none, the system's hardware and software, the runs counted and
kept, the RCP scaling factor, the global batch, samples to converge (in the benchmark's
``convergence_unit``) and energy; and one row per run (``DATASET_RUNS_COLUMNS``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from gpuscale.analysis.energy_per_result import energy_flags
from gpuscale.quantities import agreeing, counted
from gpuscale.sources import write_atomically
from gpuscale.sources.atomic import replacing
from gpuscale.tables import (
    DATASET_COLUMNS,
    DATASET_RUNS_COLUMNS,
    RoundTables,
    display_name,
    round_key,
)
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.republished import is_log_flagged, is_republished, is_same_runs_copy
from gpuscale.tables.written import write_table


def in_round_order(frame: pd.DataFrame, by: list[str], rounds: Sequence[str]) -> pd.DataFrame:
    """``frame`` sorted by the columns ``by``, its ``round`` column in the order of
    ``rounds`` (v4.1 before v5.0, never as text sorts), the index renumbered."""
    rank = {r: i for i, r in enumerate(rounds)}
    return frame.sort_values(
        by, key=lambda c: c.map(rank) if c.name == "round" else c, ignore_index=True
    )


def written_sentence(
    results: pd.DataFrame, runs: pd.DataFrame, folder: object, replaced: str = ""
) -> str:
    """What ``gpuscale dataset`` wrote into ``folder``, from the two tables: results (how
    many scored), runs, rounds, what it replaced there (``replaced``: ``, replacing its
    dataset of v5.0``) and the results analyses leave out (the columns that say why:
    ``same_runs_as``, ``log_flag``)."""
    rounds = ", ".join(sorted(results["round"].unique()))
    text = (
        f"{counted(len(results), 'result')} "
        f"({int(results['time_to_train_min'].notna().sum()):,} scored) "
        f"and {counted(len(runs), 'run')} of {rounds} written to {quoted_path(f'{folder}/')} "
        f"(results and runs, CSV and Parquet){replaced}"
    )
    if twins := int(is_same_runs_copy(results).sum()):
        text += (
            f"; {counted(twins, 'result')} {agreeing(twins, 'repeats', 'repeat')} the runs of "
            "another under a second system name in the same round (`same_runs_as`: analyses "
            "count those runs once; `gpuscale scores --duplicates` lists them)"
        )
    if flagged := int(is_log_flagged(results).sum()):
        text += (
            f"; {counted(flagged, 'result')} {agreeing(flagged, 'has', 'have')} logs that "
            "contradict their folder (`log_flag`: scored as MLCommons scores it, left out of "
            "analyses)"
        )
    if "first_round" in results and (again := int(is_republished(results).sum())):
        # the same runs in an earlier round's archive (``gpuscale.mlperf.earlier``: a
        # bundled round not written counts too; trends counts once those written)
        text += (
            f"; {again:,} of the results republish one of an earlier round (the same runs; "
            "`first_round` names the round that first published them)"
        )
    return text


def dataset(tables: RoundTables) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(results, runs) of every round in ``tables``, sorted by round, benchmark, system:
    one row per result of ``tables.scores`` (each with its official score or why there is
    none) and one per run. A result analyses leave out keeps its row, the column saying
    why: ``same_runs_as`` (the same runs under a second system name in its round) or
    ``log_flag`` (logs that contradict their folder); ``counted_in_analyses`` and
    ``runs_counted_once`` (``gpuscale.tables.republished``) keep what analyses count.
    Each run carries its result's ``samples_to_converge_flag`` (why the result's count,
    made of its runs', cannot be true; "" when plausible)."""
    system_facts = tables.systems[
        [
            "round",
            "org",
            "system_id",
            "accelerators_per_node",
            "framework",
            "accelerator_interconnect",
            "host_networking",
            "host_processor_model",
        ]
    ]
    key = ["round", "org", "system_id"]
    # one description per system: a second would repeat its results
    results = tables.scores.merge(system_facts.drop_duplicates(key), on=key, how="left")
    results["workload_name"] = results["workload"].map(display_name)
    results["energy_flag"] = energy_flags(results)  # as `gpuscale energy` flags it
    rounds = sorted(results["round"].unique(), key=round_key)
    results = in_round_order(results, ["round", "benchmark", "org", "system_id"], rounds)
    on = [*key, "benchmark"]
    flags = tables.scores[[*on, "samples_to_converge_flag"]]
    runs = tables.runs.merge(flags.drop_duplicates(on), on=on, how="left")
    runs["samples_to_converge_flag"] = runs["samples_to_converge_flag"].fillna("")
    runs = in_round_order(runs, ["round", "benchmark", "org", "system_id", "run_file"], rounds)
    return results[list(DATASET_COLUMNS)], runs[list(DATASET_RUNS_COLUMNS)]


def write_dataset(tables: RoundTables, out_dir: Path) -> str:
    """Write :func:`dataset`'s results and runs into ``out_dir`` as CSV and Parquet (the
    folder whole or not at all: ``OutputError``, also where it holds the dataset of a round
    these tables lack); what was written, in a sentence."""
    results, runs = dataset(tables)

    def write(folder: Path) -> None:
        for name, frame in (("results", results), ("runs", runs)):
            write_table(frame, folder, name)

    replaced = replacing(out_dir, "dataset", "dataset")
    write_atomically(out_dir, write, command="dataset", sources=tables.rounds)
    return written_sentence(results, runs, out_dir, replaced)
