"""The plan's devices per node: the one given, else the most common among the family's
systems in the rounds (TPU-v5p's hosts hold 4 chips: GPT-3 on 6,144 of them ran 1,536
hosts), else 8; carried in ``-f json``'s ``model.devices_per_node`` with its source, said
in the notes, and used by the nodes column and the memory check alike."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.planning import PlanRequest, plan_for, result
from gpuscale.planning.memory import memory_check
from gpuscale.planning.nodes import DEFAULT_PER_NODE, NOT_IN_TIME, node_size
from gpuscale.planning.systems import node_sizes

runner = CliRunner()


def _plan_json(*extra: str) -> dict:
    done = runner.invoke(app, ["plan", "-w", "gpt3", "-a", "TPU-v5p", "-n", "6144", *extra])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_tpu_v5p_nodes_are_counted_at_its_own_four_chips() -> None:
    document = _plan_json("-f", "json")
    assert document["rows"][0]["nodes"] == 1536
    assert document["model"]["devices_per_node"] == {
        "devices_per_node": 4,
        "source": "rounds",
        "systems": 11,
        "of": 11,
        "enters_time": False,
        "enters_time_why": NOT_IN_TIME,
        "partial_last_node": [],  # 6,144 = 1,536 x 4
    }
    said = [n for n in document["notes"] if n.startswith("Nodes:")]
    assert len(said) == 1 and "4 devices per node" in said[0] and "11 of 11" in said[0]


def test_devices_per_node_given_wins() -> None:
    document = _plan_json("-f", "json", "--devices-per-node", "8")
    assert document["rows"][0]["nodes"] == 768
    assert document["model"]["devices_per_node"] == {
        "devices_per_node": 8,
        "source": "given",
        "systems": None,
        "of": None,
        "enters_time": False,
        "enters_time_why": NOT_IN_TIME,
        "partial_last_node": [],
    }
    frame = gpuscale.plan(workload="gpt3", accelerator="TPU-v5p", devices=[6144])
    assert frame["nodes"].tolist() == [1536]
    frame = gpuscale.plan(
        workload="gpt3", accelerator="TPU-v5p", devices=[6144], devices_per_node=2
    )
    assert frame["nodes"].tolist() == [3072]


def test_the_node_layout_moves_the_nodes_not_the_times_and_the_json_says_so() -> None:
    """``--devices-per-node 3`` against the family's own 4: the nodes column moves, every
    time and interval is the same, and ``model.devices_per_node.enters_time`` is False,
    with why (the fit is per accelerator count); the notes say it once."""
    counts = "8192,10240"
    own = json.loads(_cli("-n", counts, "-f", "json").stdout)
    three = json.loads(_cli("-n", counts, "-f", "json", "--devices-per-node", "3").stdout)
    assert [r["nodes"] for r in own["rows"]] == [2048, 2560]
    assert [r["nodes"] for r in three["rows"]] == [2731, 3414]
    timed = ("time_to_train_min", "time_to_train_min_low", "time_to_train_min_high")
    for a, b in zip(own["rows"], three["rows"], strict=True):
        assert [a[k] for k in timed] == [b[k] for k in timed]
    for document in (own, three):
        layout = document["model"]["devices_per_node"]
        assert layout["enters_time"] is False
        assert "per accelerator count" in layout["enters_time_why"]
    explained = " ".join(_cli("-n", counts, "--devices-per-node", "3", "--explain").output.split())
    assert explained.count("The times do not depend on it") == 1


def _cli(*args: str):
    done = runner.invoke(app, ["plan", "-w", "gpt3", "-a", "TPU-v5p", *args])
    assert done.exit_code == 0, done.output
    return done


@pytest.mark.parametrize(("family", "per_node"), [("H100", 8), ("GB200", 4), ("B200", 8)])
def test_other_families_take_their_own(family: str, per_node: int) -> None:
    plan = plan_for(PlanRequest(workload="bert", accelerator=family, devices=[64]))
    assert plan.model["devices_per_node"]["source"] == "rounds"
    assert plan.model["devices_per_node"]["devices_per_node"] == per_node
    assert plan.rows[0]["nodes"] == 64 // per_node


def test_the_memory_check_counts_with_the_same_node(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def spy(workload: str, family: str, per_node: int = 8):
        seen.append(per_node)
        return memory_check(workload, family, per_node)

    monkeypatch.setattr(result, "memory_check", spy)
    plan_for(PlanRequest(workload="gpt3", accelerator="TPU-v5p", devices=[512, 6144]))
    assert seen and set(seen) == {4}
    seen.clear()
    given = PlanRequest(workload="gpt3", accelerator="TPU-v5p", devices=[512], devices_per_node=16)
    plan_for(given)
    assert set(seen) == {16}


def test_a_family_the_rounds_do_not_size_takes_eight() -> None:
    assert node_size({"per_node": {}}, "X", None) == {
        "devices_per_node": DEFAULT_PER_NODE,
        "source": "default",
        "systems": None,
        "of": None,
        "enters_time": False,
        "enters_time_why": NOT_IN_TIME,
    }
    assert DEFAULT_PER_NODE == 8


def _systems(rows: list[tuple[str, str, int, int]]) -> pd.DataFrame:
    """(family, system, nodes, accelerators) per system, each on two benchmarks."""
    return pd.DataFrame(
        [
            {
                "round": "v5.0",
                "submitter": "Acme",
                "system_name": system,
                "accelerator_family": family,
                "nodes": nodes,
                "accelerators": devices,
                "benchmark": benchmark,
            }
            for family, system, nodes, devices in rows
            for benchmark in ("bert", "resnet")
        ]
    ).astype({"nodes": "Int64", "accelerators": "Int64"})


def test_node_sizes_count_each_system_once_and_break_ties() -> None:
    sizes = node_sizes(
        _systems(
            [
                ("T", "t1", 2, 8),  # 4
                ("T", "t2", 4, 16),  # 4
                ("T", "t3", 1, 8),  # 8
                ("E", "e1", 1, 8),  # a tie of 8 and 4: 8 kept
                ("E", "e2", 2, 8),
                ("S", "s1", 1, 6),  # a tie of 6 and 2: the larger
                ("S", "s2", 1, 2),
                ("S", "s3", 2, 5),  # not whole per node: not counted
                ("N", "n1", None, 8),  # nodes not said: no size
            ]
        )
    )
    assert sizes == {
        "E": {"devices_per_node": 8, "systems": 1, "of": 2},
        "S": {"devices_per_node": 6, "systems": 1, "of": 2},
        "T": {"devices_per_node": 4, "systems": 2, "of": 3},
    }
    assert node_sizes(pd.DataFrame({"accelerator_family": ["T"]})) == {}


def test_a_count_no_multiple_of_the_node_says_its_last_node_is_partial() -> None:
    """``--devices-per-node 3``: 8,192 gives 2,731 nodes (rounded up), the last holding
    8,192 - 2,730 x 3 = 2 devices, in ``model.devices_per_node.partial_last_node`` and the
    notes; 6,144 (a multiple of 3) is in neither."""
    counts = "6144,8192"
    three = json.loads(_cli("-n", counts, "-f", "json", "--devices-per-node", "3").stdout)
    assert [r["nodes"] for r in three["rows"]] == [2048, 2731]
    partial = three["model"]["devices_per_node"]["partial_last_node"]
    assert partial == [{"accelerators": 8192, "nodes": 2731, "last_node_devices": 2}]
    assert 2730 * 3 + 2 == 8192
    said = " ".join(n for n in three["notes"] if n.startswith("Nodes:"))
    assert "The last node is partial at 8,192 (2,731 nodes, the last with 2 devices)" in said
    assert "6,144 (" not in said
    explained = " ".join(_cli("-n", counts, "--devices-per-node", "3", "--explain").output.split())
    assert "The last node is partial at 8,192 (2,731 nodes, the last with 2 devices)" in explained
    whole = json.loads(_cli("-n", counts, "-f", "json", "--devices-per-node", "4").stdout)
    assert whole["model"]["devices_per_node"]["partial_last_node"] == []
    assert not any("partial" in n for n in whole["notes"] if n.startswith("Nodes:"))


def test_a_count_below_one_node_is_said_as_one_node() -> None:
    """BERT on 2 and 8 L4s at 6 per node (the L4 systems' own): 2 is one partial node,
    said "1 node, with 2 devices" where it read "1 nodes, the last with 2 devices"."""
    result = plan_for(PlanRequest(workload="bert", accelerator="L4", devices=(2, 8)))
    assert [int(r["nodes"]) for r in result.rows] == [1, 2]
    said = next(n for n in result.notes if n.startswith("Nodes:"))
    assert "6 devices per node" in said
    assert "at 2 (1 node, with 2 devices) and 8 (2 nodes, the last with 2 devices)" in said
    assert "1 nodes" not in said
