"""The memory model (``gpuscale.hardware.memory``) and the plan's use of it: known answers
from the ZeRO paper, the MLPerf workloads' parameters from their configurations, every
bundled MLPerf result held by its devices, and a plan refused at a count that cannot hold
the model with the fewest that can."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.hardware.capacity import AcceleratorMemory, accelerator_memory
from gpuscale.hardware.memory import (
    ModelState,
    Sharding,
    fewest_devices,
    sources,
    state_bytes,
    state_per_device,
    workload_state,
    workload_states,
)
from gpuscale.planning import PlanRequest, plan_for
from gpuscale.planning.limits import NO_TIME


def _adam_model(parameters: float) -> ModelState:
    adam = state_bytes()[("adam", "mixed")]
    return ModelState(
        name="zero-example",
        trainable_parameters=parameters,
        frozen_parameters=0,
        trainable=adam,
        frozen=state_bytes()[("frozen", "bf16")],
        sharding=Sharding.DDP,
        sources=("zero",),
        exact=True,
    )


@pytest.mark.parametrize(
    ("sharding", "gb"),
    [(Sharding.DDP, 120.0), (Sharding.SHARD_GRAD_OP, 16.6), (Sharding.FULL_SHARD, 1.875)],
)
def test_the_zero_papers_example(sharding: Sharding, gb: float) -> None:
    """ZeRO, Figure 1: a 7.5B-parameter model with Adam in mixed precision on 64 devices
    holds 120 GB each as a replica, 16.6 GB with gradients and optimizer states
    partitioned, 1.9 GB with everything partitioned."""
    held = state_per_device(_adam_model(7.5e9), 64, sharding)
    assert held.total_gb == pytest.approx(gb, abs=0.05)


def test_bytes_per_parameter_are_the_cited_ones() -> None:
    adam = state_bytes()[("adam", "mixed")]
    assert (adam.weights_bytes, adam.gradients_bytes, adam.optimizer_bytes) == (2, 2, 12)
    assert adam.source == "zero" and "16" in sources()["zero"].citation
    every = {s.source for s in state_bytes().values()}
    every |= {src for w in workload_states().values() for src in w.sources}
    assert every <= set(sources())  # each figure cites a source that exists


def test_llama2_lora_from_its_mlperf_configuration() -> None:
    """Frozen: the Llama 2 70B configuration MLPerf ships (hidden 8,192, MLP 28,672, 80
    layers, 8 key-value heads of 128, vocabulary 32,000, untied); trained: LoRA r = 16 on
    the fused qkv projection and the output projection."""
    hidden, mlp, layers, kv, vocab, rank = 8192, 28672, 80, 8 * 128, 32000, 16
    attention = 2 * hidden * hidden + 2 * hidden * kv
    layer = attention + 3 * hidden * mlp + 2 * hidden
    frozen = 2 * vocab * hidden + layers * layer + hidden
    lora = layers * rank * ((hidden + hidden + 2 * kv) + (hidden + hidden))
    state = workload_state("llama2_70b_lora")
    assert state is not None
    assert (state.frozen_parameters, state.trainable_parameters) == (frozen, lora)
    assert state.frozen_parameters * 2 / 1e9 == pytest.approx(137.95, abs=0.01)  # bf16


def test_no_bundled_result_would_be_refused(bundled) -> None:
    """Every scored result of the bundled rounds holds its workload's model state on its
    devices, under the sharding the plan assumes."""
    scores = bundled.scores
    rows = scores[scores["time_to_train_min"].notna() & scores["accelerators"].notna()]
    checked = 0
    for row in rows.itertuples(index=False):
        state, memory = workload_state(row.workload), accelerator_memory(row.accelerator_family)
        if state is None or memory is None:
            continue
        held = state_per_device(state, int(row.accelerators))
        # within the usable share the plan compares with, not only the whole device
        assert held.total_gb <= memory.usable_gb, (row.round, row.system_id, row.workload)
        fewest = fewest_devices(state, memory)
        assert fewest is not None and fewest <= int(row.accelerators)
        checked += 1
    known = rows["workload"].map(lambda w: workload_state(w) is not None)
    assert checked == int(known.sum())  # every family of a known workload has a memory
    assert checked > 900  # the bundled rounds: 969 results of workloads with a state


@settings(max_examples=60, deadline=None)
@given(
    parameters=st.floats(1e6, 1e12),
    gib=st.sampled_from([16.0, 24.0, 80.0, 192.0]),
    sharding=st.sampled_from(list(Sharding)),
)
def test_the_fewest_devices_hold_it_and_one_fewer_does_not(
    parameters: float, gib: float, sharding: Sharding
) -> None:
    state = _adam_model(parameters)
    memory = AcceleratorMemory("X", gib, "test")
    fewest = fewest_devices(state, memory, sharding)
    if fewest is None:  # no count holds it: not even a node's worth, or a whole replica
        assert state_per_device(state, 8, sharding).total_gb > memory.usable_gb
        return
    assert state_per_device(state, fewest, sharding).total_gb <= memory.usable_gb * (1 + 1e-12)
    if fewest > 1:
        assert state_per_device(state, fewest - 1, sharding).total_gb > memory.usable_gb


def test_a_count_that_cannot_hold_the_model_is_refused_with_the_fewest_that_can(golden) -> None:
    """Llama2 70B LoRA on L4 (24 GiB): 4 devices hold 4 x 25.8 GB of its 138.7 GB: no
    time, and the fewest that hold it (6) named; at 6 a time."""
    result = plan_for(PlanRequest(workload="llama2_70b_lora", accelerator="L4", devices="4,6"))
    four, six = result.rows
    assert math.isnan(four["time_to_train_min"]) and four["flags"].startswith(NO_TIME)
    assert four["model_state_gb"] == pytest.approx(138.67 / 4, abs=0.01)
    assert result.model["memory"]["fewest_devices"] == 6
    assert "6" in four["flags"].split(":")[-1]
    assert six["time_to_train_min"] > 0 and six["flags"] == ""
    golden.check("plan/memory", "Llama2 70B LoRA on 4 L4: the flag", four["flags"])
    memory = next(n for n in result.notes if n.startswith("Memory"))
    golden.check("plan/memory", "Llama2 70B LoRA on L4: the note", memory)


def test_memory_in_the_plan_table() -> None:
    from gpuscale.planning.api import as_frame

    table = as_frame(plan_for(PlanRequest(workload="bert", accelerator="H100", devices="8,16")))
    assert table["model_state_gb"].to_list() == pytest.approx([5.44, 5.44])  # DDP: replicas
    assert isinstance(table, pd.DataFrame)


def test_a_family_of_unknown_memory_is_said_with_its_article(golden) -> None:
    """``the memory of a A100-PCIe-40GB device``: the article is the name's as said (an
    A100, a TPU-v5p), from ``quantities.with_article``."""
    from gpuscale.planning.memory import MemoryCheck

    state = workload_state("bert")
    assert state is not None
    for family in ("A100-PCIe-40GB", "TPU-v5p"):
        check = MemoryCheck("bert", family, state, memory=None, fewest=None, per_node=8)
        golden.check("plan/memory", f"memory not known: {family}", check.note())
