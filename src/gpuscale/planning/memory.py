"""Whether a planned count holds the workload's model state: the one memory model
(``gpuscale.hardware.memory``) applied to a plan.

At ``N`` devices of a family the model state each device holds under the workload's own
sharding (its MLPerf submissions' strategy: DDP for the small models, full sharding for
the LLMs and DLRM's tables) must fit the usable share of the device's memory
(``AcceleratorMemory.usable_gb``, as every memory check); a count where it does not has
no time (``limits.NO_TIME``), and the reason names the fewest devices that hold it.
Activations are not counted: a count that holds the state may still not hold a batch.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuscale.hardware.capacity import AcceleratorMemory, accelerator_memory
from gpuscale.hardware.memory import (
    DeviceMemory,
    ModelState,
    fewest_devices,
    state_per_device,
    workload_state,
)
from gpuscale.planning.limits import NO_TIME
from gpuscale.quantities import counted, joined, with_article

SHARDING_WORDS = {
    "ddp": "whole on each device",
    "shard_grad_op": "gradients and optimizer states sharded",
    "full_shard": "fully sharded",
    "hybrid_shard": "fully sharded within a node",
}


@dataclass(frozen=True, slots=True)
class MemoryCheck:
    """What the plan knows of a workload's memory on a family: the model ``state``
    (None: parameters not in the table), the device's ``memory`` (None: not known) and
    the ``fewest`` devices that hold the state (None: none, or not known)."""

    workload: str
    family: str
    state: ModelState | None
    memory: AcceleratorMemory | None
    fewest: int | None
    per_node: int

    def at(self, devices: int) -> DeviceMemory | None:
        """The model state each of ``devices`` holds; None where not known."""
        if self.state is None:
            return None
        return state_per_device(self.state, devices, group=self.per_node)

    def refusal(self, devices: int) -> str:
        """Why ``devices`` cannot hold the state (a ``NO_TIME`` reason naming no count but
        the fewest that hold it, so the counts refused group under one), else ""."""
        held = self.at(devices)
        if held is None or self.memory is None or held.total_gb <= self.memory.usable_gb:
            return ""
        how = SHARDING_WORDS[held.sharding.value]
        total = sum(p.gb * p.sharded_over for p in held.parts)
        which = (
            f"fewer than {counted(self.fewest, f'{self.family} device')} cannot hold"
            if self.fewest
            else f"no count of {self.family} devices holds"
        )
        # no "; " inside: the plan's flags are joined by it
        return (
            f"{NO_TIME}{which} the model state alone, {_gb(total)} {how} "
            f"({joined(p.name for p in held.parts)}), in a device's memory "
            f"({self.memory.said()}), activations not counted"
        )

    def note(self) -> str:
        """One sentence on memory for the plan's notes."""
        if self.state is None:
            return (
                f"Memory not checked: the parameters of {self.workload} are not in the "
                "memory model's table."
            )
        if self.memory is None:
            return (
                f"Memory not checked: the memory of {with_article(self.family)} device is not "
                "known."
            )
        one = self.at(1)
        assert one is not None  # a state is known
        total = sum(p.gb * p.sharded_over for p in one.parts)
        where = f"from {self.fewest:,}" if self.fewest else "at no count"
        return (
            f"Memory: {self.workload}'s model state is {_gb(total)}, "
            f"{SHARDING_WORDS[one.sharding.value]} as its submissions run it; "
            f"{self.family}'s memory ({self.memory.said()}) holds it {where} "
            f"device{'s' * (self.fewest != 1)} (activations not counted)."
        )

    def facts(self) -> dict[str, object]:
        """The check as plain data (the plan's JSON ``model.memory``)."""
        out: dict[str, object] = {
            "workload_state_gb": None,
            "sharding": None,
            "parameter_sources": [],
            "device_memory_gib": None,
            "device_memory_source": None,
            "fewest_devices": self.fewest,
        }
        one = self.at(1)
        if one is not None:  # the state is known
            out["workload_state_gb"] = sum(p.gb * p.sharded_over for p in one.parts)
            out["sharding"] = self.state.sharding.value
            out["parameter_sources"] = list(self.state.sources)
        if self.memory is not None:
            out["device_memory_gib"] = self.memory.gib
            out["device_memory_source"] = self.memory.source
        return out


def _gb(value: float) -> str:
    """GB to the digits a reader needs: ``2,800 GB``, ``34.7 GB``, ``0.54 GB``."""
    if value >= 100:
        return f"{value:,.0f} GB"
    if value >= 1:
        return f"{value:,.1f} GB"
    return f"{value:.2g} GB"


def memory_check(workload: str, family: str, per_node: int = 8) -> MemoryCheck:
    """The :class:`MemoryCheck` of ``workload`` (its cross-round name) on ``family``."""
    state, memory = workload_state(workload), accelerator_memory(family)
    fewest = (
        fewest_devices(state, memory, group=per_node)
        if state is not None and memory is not None
        else None
    )
    return MemoryCheck(workload, family, state, memory, fewest, per_node)
