"""The devices per node a plan counts its nodes with (its ``nodes`` column and the memory
check's node, ``gpuscale.planning.memory``): the ones given, else the most common among
the family's systems in the rounds planned from (``systems.node_sizes``, carried in the
fits: TPU-v5p's hosts hold 4 chips, a DGX 8 GPUs), else ``DEFAULT_PER_NODE``.

The choice is a record (the plan's ``model["devices_per_node"]`` in ``-f json``) with its
``source``: ``given``, ``rounds`` (with how many of the family's systems ran it) or
``default`` (no system of the family says its nodes), ``enters_time`` (False),
``enters_time_why`` and ``partial_last_node`` (each count asked that is no multiple of the
node: its nodes, rounded up, and the devices on its last node), and one sentence for the
notes.

The node layout never enters the planned time: the model is fitted per accelerator count
(each MLPerf result at its devices, whatever its hosts), so ``--devices-per-node`` moves the
nodes column and the memory check (a state sharded within a node), not the minutes.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuscale.planning.records import Facts, Fits
from gpuscale.quantities import counted, joined

# A node's devices where the rounds say nothing of a family's: the common 8-GPU server
DEFAULT_PER_NODE = 8

# Why the times do not move with the node layout (the record's ``enters_time_why``)
NOT_IN_TIME = (
    "the model is fitted per accelerator count (each result at its devices, whatever its "
    "nodes): the nodes column and the memory check count with the node, the times do not"
)
NOT_IN_TIME_NOTE = (
    "The times do not depend on it (the model is fitted per accelerator count, whatever "
    "the node layout): it counts the nodes and the memory check's node only."
)


def _layout(facts: Facts) -> Facts:
    """``facts`` with whether (never) and why the node layout enters the times."""
    return facts | {"enters_time": False, "enters_time_why": NOT_IN_TIME}


def node_size(fits: Fits, family: str, given: int | None) -> Facts:
    """``{"devices_per_node", "source", "systems", "of", "enters_time",
    "enters_time_why"}`` for ``family`` (``systems`` and ``of``: None but where the rounds
    say it; ``enters_time``: False, the times being per accelerator count)."""
    if given is not None:
        return _layout(
            {"devices_per_node": int(given), "source": "given", "systems": None, "of": None}
        )
    seen = (fits.get("per_node") or {}).get(family)
    if seen:
        return _layout(
            {
                "devices_per_node": seen["devices_per_node"],
                "source": "rounds",
                "systems": seen["systems"],
                "of": seen["of"],
            }
        )
    return _layout(
        {"devices_per_node": DEFAULT_PER_NODE, "source": "default", "systems": None, "of": None}
    )


def partial_nodes(counts: Sequence[int], per_node: int) -> list[Facts]:
    """``[{"accelerators", "nodes", "last_node_devices"}]``: each count that is no multiple
    of ``per_node``, its nodes rounded up (the nodes column) and the devices its last,
    partial node holds (8,192 at 3 per node: 2,731 nodes, the last holding 2)."""
    return [
        {"accelerators": n, "nodes": -(-n // per_node), "last_node_devices": n % per_node}
        for n in counts
        if n % per_node
    ]


def node_note(node: Facts, family: str) -> str:
    """The plan's sentence on the devices per node its nodes are counted with, and where a
    count is no multiple of it, that its last node is partial."""
    n = node["devices_per_node"]
    each = f"{n:,} device{'s' * (n != 1)} per node"
    if node["source"] == "given":
        return f"Nodes: counted at {each}, as given. {NOT_IN_TIME_NOTE}{_partial(node)}"
    change = "--devices-per-node sets another"
    if node["source"] == "rounds":
        return (
            f"Nodes: counted at {each}, assumed: the most common among the {family} "
            f"systems in these rounds ({node['systems']:,} of {node['of']:,}; {change}). "
            f"{NOT_IN_TIME_NOTE}{_partial(node)}"
        )
    return (
        f"Nodes: counted at {each}, assumed: no {family} system in these rounds says its "
        f"nodes ({change}). {NOT_IN_TIME_NOTE}{_partial(node)}"
    )


def _partial(node: Facts) -> str:
    """`` The last node is partial at 8,192 (2,731 nodes, the last with 2 devices).``"""
    partial = node.get("partial_last_node") or []
    if not partial:
        return ""
    at = [
        f"{p['accelerators']:,} ({counted(p['nodes'], 'node')}, "
        f"{'the last ' * (p['nodes'] > 1)}with {counted(p['last_node_devices'], 'device')})"
        for p in partial
    ]
    return f" The last node is partial at {joined(at)}: the count is no multiple of the node."
