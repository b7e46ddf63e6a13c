"""A measurement at more devices than a node holds is launched across nodes, as the bench
docs launch it (docs/measure-results.md, "On a cluster"): ``--nnodes``, ``--node-rank`` and
``--rdzv-endpoint`` on each node, or one ``srun`` line, never ``--nproc N`` on one node.
The devices a node holds are the rows' (runs across nodes), else the question's nodes."""

from __future__ import annotations

import re
import shlex
from itertools import pairwise
from pathlib import Path

import gpuscale
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.types import BenchRun
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import load_bench
from gpuscale.bench.slurm import across_nodes
from gpuscale.bench.support import support

from ..builders import bench_record, write_jsonl


def _commands(said: str) -> list[list[str]]:
    """The shell commands a sentence gives (each between backticks), as argument lists."""
    return [shlex.split(command) for command in re.findall(r"`([^`]+)`", said)]


def _options(argv: list[str]) -> dict[str, str]:
    """An argument list's ``--option value`` pairs."""
    return {a: b for a, b in pairwise(argv) if a.startswith("--")}


def test_a_count_beyond_a_node_is_one_command_on_each_node() -> None:
    said = across_nodes("gpuscale bench --models tf-7m", " --steps 60", 16, 8)
    each_node, slurm = _commands(said)
    assert each_node[:4] == ["gpuscale", "bench", "--models", "tf-7m"]
    assert _options(each_node) == {
        "--models": "tf-7m",
        "--nproc": "8",
        "--steps": "60",
        "--nnodes": "2",
        "--node-rank": "R",
        "--rdzv-endpoint": "HOST:PORT",
    }
    # srun sets the node rank and rendezvous itself: the same command, nodes from Slurm
    assert slurm[:3] == ["srun", "--nodes=2", "--ntasks-per-node=1"]
    assert slurm[3:] == each_node[:-6]
    four = _options(_commands(across_nodes("gpuscale bench", "", 32, 8))[0])
    assert (four["--nproc"], four["--nnodes"]) == ("8", "4")
    assert across_nodes("gpuscale bench", "", 8, 8) is None  # one node holds it
    assert across_nodes("gpuscale bench", "", 12, 8) is not None  # 2 nodes of 6
    assert across_nodes("gpuscale bench", "", 9, 8) is None  # 9 do not split over 2


def test_the_bench_run_splits_its_counts_by_node() -> None:
    run = BenchRun("tf-7m", (1, 2, 4, 8, 16), more="--steps 60", per_node=8)
    within, *across = _commands(run.command())
    assert _options(within) == {"--models": "tf-7m", "--nproc": "1,2,4,8", "--steps": "60"}
    assert across == _commands(across_nodes("gpuscale bench --models tf-7m", " --steps 60", 16, 8))
    # no nodes known: one command, as before (the host note says where it runs)
    (plain,) = _commands(BenchRun("tf-7m", (1, 16), more="--steps 60", host_devices=8).command())
    assert _options(plain) == {"--models": "tf-7m", "--nproc": "1,16", "--steps": "60"}


def _multi_node_file(folder: Path) -> Path:
    """mlp-4m on 1 and 2 devices of one node and on 4 over two nodes of 2, each run 3
    steps: too few, so the advice's first remedy reruns all three."""
    rows = []
    for n, rate, sync, comm, nodes in ((1, 1000.0, 0.0, None, 1), (2, 1800.0, 1.0, 2.0, 1),
                                       (4, 3000.0, 3.0, 4.0, 2)):  # fmt: skip
        row = bench_record(
            "mlp-4m", 4_000_000, n, rate, forward_ms=2.0, backward_ms=4.0, optimizer_ms=1.0,
            sync_overhead_ms=sync, comm_ms=comm, config=BenchConfig(steps=3, batch=8),
        )  # fmt: skip
        row["config"]["nnodes"] = nodes
        rows.append(row)
    return write_jsonl(folder / "nodes.jsonl", rows)


def test_the_runs_devices_per_node_are_read_from_their_nodes(tmp_path: Path) -> None:
    table = load_bench(_multi_node_file(tmp_path)).table
    found = support(table, table)
    assert found is not None and found.counts == (1, 2, 4) and found.per_node == 2
    assert support(table[table["nnodes"] == 1], table[table["nnodes"] == 1]).per_node is None


def test_measure_first_on_runs_across_nodes_launches_them_across_nodes(tmp_path: Path) -> None:
    path = _multi_node_file(tmp_path)
    advice = gpuscale.advise(bench=path, model="mlp-4m", nodes=2, gpus_per_node=2)
    one_node, each_node, slurm = _commands(advice.decision.settle)
    assert _options(one_node)["--out"] == str(path)
    assert (_options(one_node)["--nproc"], _options(one_node)["--steps"]) == ("1,2", "110")
    # 4 devices: 2 on each of 2 nodes, never 4 processes on one node of 2
    assert _options(each_node)["--nproc"] == "2" and _options(each_node)["--nnodes"] == "2"
    assert slurm[:2] == ["srun", "--nodes=2"] and _options(slurm)["--steps"] == "110"


def test_a_wide_interval_at_a_count_beyond_a_node_measures_it_across_nodes() -> None:
    across = across_nodes("gpuscale bench", " --steps 30", 16, 8)
    said = {"width": 2.0, "devices": 16, "host": "", "again": "", "across": across}
    first, *rest = _commands(sentence("not_firm", firm=30, **said))
    assert _options(first) == {"--nproc": "1", "--steps": "30"}  # N = 1, then 16 over 2 nodes
    assert rest == _commands(across)
