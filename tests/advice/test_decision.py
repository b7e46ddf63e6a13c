"""The advice says one thing: its sentences agree with the predictions table and with each
other (a property test over random requests), the README's implausible example is flagged,
the topology caps the count, and a request round-trips through JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuscale
from gpuscale.advice.explain.answer import deciding_line
from gpuscale.advice.explain.phrasebook import term_words
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.search.derive import overheads
from gpuscale.advice.types import STOPPED, FindingKind
from gpuscale.interconnect.topology import parse_topo_matrix

from ..golden import Golden
from .lines import flat, lines_on

K = FindingKind

VIEW = "advice/decision"

TWO_GPUS = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-15\nGPU1\tPHB\t X \t0-15\n"
ONE_GPU = "\tGPU0\tCPU Affinity\nGPU0\t X \t0-15\n"

requests = st.builds(
    AdviceRequest,
    params=st.sampled_from([1e6, 7e6, 1e8, 3e9]),
    step_ms=st.floats(2, 2000),
    batch=st.sampled_from([4, 16, 64]),
    interconnect=st.sampled_from(["pcie-phb", "nvlink4", "pcie4-x16"]),
    max_devices=st.sampled_from([2, 3, 4, 6, 8, 12, 16]),  # 3, 6, 12: counts not searched
    noise_scale=st.one_of(st.none(), st.sampled_from([64.0, 1024.0, 1e5])),
    target_efficiency=st.sampled_from([0.5, 0.7, 0.9]),
    grad_bytes=st.sampled_from([2, 4]),
)


def _check(advice: gpuscale.advice.api.Advice) -> None:  # type: ignore[name-defined]
    d = advice.decision
    table = advice.predictions[advice.predictions["flags"] == ""].set_index("accelerators")
    text = "\n".join(advice.explanation)
    # one recommendation, the decision's count, and the numbers of its table row
    # (where an assumed term's range moves it, the count as assumed, said as withheld)
    used = re.findall(r"^(?:Use|Count withheld:) (\d+) device", text, re.M)
    assert bool(re.search(r"^Count withheld: \d+ device", text, re.M)) == (d.count is None)
    assert used == [str(d.chosen.accelerators)]
    row = table.loc[d.chosen.accelerators]
    if d.chosen.accelerators > 1:
        assert row["efficiency"] >= d.target_efficiency and row["speedup_low"] > 1
        assert f"efficiency {row['efficiency']:.0%}" in text
    # an input that cannot be true: one device, whatever the table says
    if any(w.startswith("IMPLAUSIBLE") for w in d.warnings):
        assert d.chosen.accelerators == 1 and (d.held_back is None or d.settle)
        return
    # no count is faster, reaches the target and is sure of a gain, and not recommended
    better = table[
        (table["time_to_train_min"] < row["time_to_train_min"])
        & (table["efficiency"] >= d.target_efficiency)
        & (table["speedup_low"] > 1)
    ]
    assert better.empty
    # the fastest named is the table's fastest
    assert d.fastest == int(table["time_to_train_min"].idxmin())
    assert ("Fastest:" in text) == (d.fastest != d.chosen.accelerators)
    # "more devices pay off" only when why the search stopped is what caps, i.e. the
    # recommendation is the largest count
    # ("may pay off" where more are allowed than were predicted: what would predict one)
    more = "more devices pay off" in text or "more devices may pay off" in text
    assert more == (d.limit.cap in STOPPED) or d.count is None  # withheld: what to give, not more
    # "the most allowed" said only of the most allowed (a walk: "2 devices is the most
    # allowed" under --max-devices 3)
    for n in re.findall(r"(\d+) devices is the most allowed", text):
        assert int(n) == advice.calibration.machine.max_devices, text
    assert (d.limit.cap in STOPPED) == (
        d.chosen.accelerators == d.largest and d.chosen.accelerators > 1
    )
    # the count allowed caps only where no larger count was searched (the most allowed, or
    # whole nodes past one); a larger one searched has no row: the global batch kept
    stopped_below = any(n > d.largest for n in advice.calibration.machine.device_counts)
    assert (d.limit.cap == "devices") == (d.limit.cap in STOPPED and not stopped_below)
    if d.limit.cap == "batch":
        assert advice.calibration.run.kept_global_batch is not None and "does not split" in text
    if d.focus.accelerators > 1:
        focus = table.loc[d.focus.accelerators]
        decides = re.findall(r"The (\w+) term (?:decides|is the largest)", text)
        assert decides == [term_words(d.limit.dominant_term)]
        alone = re.search(r"without it they would run at (\d+)% efficiency", text)
        if alone:  # the largest overhead gone: better than now, and still short of the target
            gone = int(alone.group(1)) / 100
            assert d.limit.cap == "overheads" and gone < d.target_efficiency + 0.005
            assert gone + 0.005 >= focus["efficiency"]
            # the remedy names what else must go, or says not even every overhead would do
            # (said where the count is not withheld: there, what to give or measure)
            if d.count is not None:
                assert ("alone not enough" in text) == bool(d.limit.also_shrink)
                assert ("with every overhead gone" in text) == (not d.limit.also_shrink)
        parts = overheads(focus)
        if focus["throughput_efficiency"] >= 0.95:
            assert d.limit.dominant_term == "compute"
        else:
            assert d.limit.dominant_term == max(parts, key=parts.get)
        if d.limit.cap == "convergence":
            assert focus["convergence_factor"] < min(0.95, focus["throughput_efficiency"])
            assert "convergence, not the step's overheads" in text
        if d.limit.cap == "overheads":
            assert focus["throughput_efficiency"] < min(0.95, focus["convergence_factor"])
            assert d.limit.dominant_term != "compute"  # never "compute" beside "overheads"
        # every sentence about a count past the recommendation is about the same count
        assert set(re.findall(r"At (\d+) devices", text)) <= {str(d.focus.accelerators)}
    if d.held_back is not None:
        assert d.chosen.accelerators == 1 and "includes no gain" in text


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests)
def test_sentences_agree_with_the_table_and_each_other(request: AdviceRequest) -> None:
    _check(gpuscale.advise(request))


def test_the_readme_multi_node_example_is_flagged_and_consistent() -> None:
    advice = gpuscale.advise(
        params=300e6,
        step_ms=250,
        batch=16,
        nodes=4,
        gpus_per_node=8,
        interconnect="nvlink4",
        workload="llama2_70b_lora",
    )
    _check(advice)
    warnings = " ".join(advice.decision.warnings)
    assert "IMPLAUSIBLE" in warnings
    # its low rate rests on 6 x parameters (no FLOPs given): a reading priced, no warning
    assert "% of the H100" not in warnings
    (flops,) = [r for r in advice.decision.readings if r.term == "flops_per_sample"]
    assert flops.end == "low" and flops.accelerators >= 1
    assert "MLPerf v" in warnings  # the MLPerf result it is measured against is quoted
    # the recommended count's time is among those flagged as below MLPerf
    noun = "device" if advice.recommended == 1 else "devices"
    assert f"{advice.recommended} {noun} predicted" in warnings or "more count" in warnings


def test_a_plausible_input_is_not_flagged() -> None:
    # 7M parameters, batch 64, 20 ms: 0.134 TFLOP/s, a plausible CPU-ish rate; no device
    advice = gpuscale.advise(params=7e6, step_ms=20, batch=64, interconnect="pcie-phb")
    assert advice.decision.warnings == ()
    # on an H100 (989 TFLOP/s bf16) 400 TFLOP/s is fine, 2,000 is not
    fine = gpuscale.advise(
        params=7e9, step_ms=1000 * 64 * 42e9 / 400e12, batch=64, device_name="H100 SXM"
    )
    # its one warning: 7B x 16 bytes (Adam, mixed) is more than one H100 holds
    kinds = [w.kind for w in fine.calibration.said.warnings]
    assert kinds == [FindingKind.MEMORY_MEASURED_BEYOND]
    fast = gpuscale.advise(
        params=7e9, step_ms=1000 * 64 * 42e9 / 2000e12, batch=64, device_name="H100 SXM"
    )
    assert "above the H100" in fast.decision.warnings[0]


def test_the_topology_caps_the_device_count(tmp_path: Path, golden: Golden) -> None:
    two = gpuscale.advise(params=7e6, step_ms=20, batch=64, topology=parse_topo_matrix(TWO_GPUS))
    assert two.predictions["accelerators"].max() == 2 and two.recommended <= 2
    capped = lines_on(two.explanation, "Device count capped")
    assert "topology" in capped and " 2 GPUs" in capped
    golden.check(VIEW, "capped at the topology's GPUs", capped)
    path = tmp_path / "one.txt"
    path.write_text(ONE_GPU)
    one = gpuscale.advise(params=7e6, step_ms=20, batch=64, topo=str(path))
    assert list(one.predictions["accelerators"]) == [1]
    assert any("nothing to compare" in s for s in one.explanation)


def test_a_node_holds_no_more_devices_than_the_topologys_gpus() -> None:
    """Past one node, each node is the topology's GPUs, not the 8 per node assumed: two
    nodes of a 2-GPU topology search up to 4 devices; 16 devices asked span 8 such nodes."""
    topology = parse_topo_matrix(TWO_GPUS)
    two_nodes = gpuscale.advise(params=7e6, step_ms=20, batch=64, topology=topology, nodes=2)
    assert two_nodes.predictions["accelerators"].max() == 4
    assert two_nodes.calibration.machine.network.per_node == 2
    spilled = gpuscale.advise(params=7e6, step_ms=20, batch=64, topology=topology, max_devices=16)
    assert spilled.calibration.machine.network.per_node == 2
    assert spilled.predictions["accelerators"].max() == 16
    one_node = gpuscale.advise(params=7e6, step_ms=20, batch=64, topology=topology, max_devices=8)
    assert one_node.predictions["accelerators"].max() == 2  # on one node: capped, as before


def _topology_of(gpus: int, link: str = "NV18") -> str:
    """``nvidia-smi topo -m``'s matrix of ``gpus`` GPUs, each pair over ``link``."""
    names = [f"GPU{i}" for i in range(gpus)]
    rows = ["\t" + "\t".join([*names, "CPU Affinity"])]
    for i, name in enumerate(names):
        rows.append("\t".join([name, *(" X " if i == j else link for j in range(gpus)), "0-15"]))
    return "\n".join(rows) + "\n"


def test_one_node_of_more_gpus_than_the_8_assumed_searches_them_all() -> None:
    """One node of 16 GPUs, no --gpus-per-node nor --max-devices: the topology's 16 are the
    node, searched and said, as each of two such nodes holds 16; --gpus-per-node 8 typed
    takes the first 8, and says so; --max-devices 8 asks no more."""
    sixteen = parse_topo_matrix(_topology_of(16))
    common = {"params": 1e9, "step_ms": 300, "batch": 32, "device_name": "H100 SXM"}
    default = gpuscale.advise(topology=sixteen, **common)
    assert list(default.predictions["accelerators"]) == [1, 2, 4, 8, 16]
    kinds = {getattr(f, "kind", None): f for f in default.calibration.said.sources}
    found = kinds[FindingKind.TOPOLOGY_PER_NODE]
    assert (found["gpus"], found["asked"], found["default"]) == (16, 8, True)
    two_nodes = gpuscale.advise(topology=sixteen, nodes=2, **common)
    assert two_nodes.calibration.machine.network.per_node == 16
    typed = gpuscale.advise(topology=sixteen, gpus_per_node=8, **common)
    assert list(typed.predictions["accelerators"]) == [1, 2, 4, 8]
    kinds = {getattr(f, "kind", None): f for f in typed.calibration.said.sources}
    some = kinds[FindingKind.TOPOLOGY_SOME_PER_NODE]
    assert (some["gpus"], some["asked"], some["default"]) == (16, 8, False)
    asked = gpuscale.advise(topology=sixteen, max_devices=8, **common)  # a count asked: kept
    assert list(asked.predictions["accelerators"]) == [1, 2, 4, 8]


def test_the_count_cut_at_the_topologys_gpus_says_so_in_the_answer(
    tmp_path: Path, golden: Golden
) -> None:
    """``--max-devices 8`` on a one-GPU topology answered "Decides: the count allowed; at 1
    device, the most searched" with no word of the cut (said only under --explain)."""
    path = tmp_path / "one.txt"
    path.write_text(ONE_GPU)
    asked = gpuscale.advise(params=7e6, step_ms=2, batch=64, topo=str(path), max_devices=8)
    assert list(asked.predictions["accelerators"]) == [1]
    assert asked.deciding.kind == "devices"
    (cut,) = [f for f in asked.calibration.said.sources if getattr(f, "kind", None) is K.ONE_GPU]
    assert (cut["asked"], cut["default"]) == (8, False)
    golden.check(VIEW, "one GPU, 8 asked", deciding_line(asked))
    two = parse_topo_matrix(TWO_GPUS.replace("PHB", "NV18"))
    default = gpuscale.advise(params=1e9, step_ms=(500.0, 300.0), batch=(64, 32), topology=two)
    assert default.recommended == 2 and default.deciding.kind == "devices"
    golden.check(VIEW, "two GPUs, none asked", deciding_line(default))
    free = gpuscale.advise(
        params=1e9, step_ms=(500.0, 300.0), batch=(64, 32), link="nvlink4", max_devices=2
    )
    assert free.deciding.kind == "devices" and "allowed;" in deciding_line(free)  # no cut


def test_a_one_gpu_topology_over_nodes_is_one_device_a_node(tmp_path: Path, golden: Golden) -> None:
    """A topology of one GPU with ``nodes=4`` searched 8 devices a node (32 in all) on an
    assumed link, naming no topology: its node holds one GPU, so 1 to 4 devices span nodes,
    said with the file; fewer asked per node than a topology holds are said as such."""
    path = tmp_path / "one.txt"
    path.write_text(ONE_GPU)
    four = gpuscale.advise(params=7e6, step_ms=2, batch=64, topo=str(path), nodes=4)
    assert list(four.predictions["accelerators"]) == [1, 2, 4]
    network = four.calibration.machine.network
    assert network.per_node == 1 and all(network.spans_nodes(n) for n in (2, 4))
    (per_node,) = [
        f
        for f in four.calibration.said.sources
        if getattr(f, "kind", None) is FindingKind.TOPOLOGY_PER_NODE
    ]
    assert (per_node["gpus"], per_node["asked"], per_node["file"]) == (1, 8, str(path))
    paths = {str(path): "<file>"}
    golden.check(
        VIEW, "one GPU a node", lines_on(four.explanation, "Devices per node"), paths=paths
    )
    golden.check(VIEW, "one GPU a node: link", lines_on(four.explanation, "Link:"), paths=paths)
    spilled = gpuscale.advise(
        params=7e6, step_ms=2, batch=64, topo=str(path), nodes=2, max_devices=4
    )
    assert list(spilled.predictions["accelerators"]) == [1, 2, 4]  # 4 nodes of one GPU
    two = parse_topo_matrix(TWO_GPUS)
    one_each = gpuscale.advise(
        params=7e6, step_ms=20, batch=64, topology=two, nodes=2, gpus_per_node=1
    )
    assert one_each.calibration.machine.network.per_node == 1
    (some,) = [
        f
        for f in one_each.calibration.said.sources
        if getattr(f, "kind", None) is FindingKind.TOPOLOGY_SOME_PER_NODE
    ]
    assert (some["gpus"], some["asked"]) == (2, 1)
    golden.check(VIEW, "one of two GPUs a node", lines_on(one_each.explanation, "Devices per node"))


FOUR_GPUS = (  # two PIX pairs across sockets: GPUs 0-1 and 2-3, SYS between the pairs
    "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\n"
    "GPU0\t X \tPIX\tSYS\tSYS\t0-15\n"
    "GPU1\tPIX\t X \tSYS\tSYS\t0-15\n"
    "GPU2\tSYS\tSYS\t X \tPIX\t16-31\n"
    "GPU3\tSYS\tSYS\tPIX\t X \t16-31\n"
)


def test_fewer_per_node_than_the_topology_are_priced_on_their_own_ring() -> None:
    """Nodes of the first 2 GPUs of a 4-GPU topology (``gpus_per_node=2``) run over those
    two's PIX pair, not the SYS of the whole node: every count across nodes steps as on a
    topology of that pair alone, its latency too (the 4 devices' step was 3.08 ms longer,
    the hops at pcie-sys's 25 us), and the table's network names the pair's link."""
    four, pair = parse_topo_matrix(FOUR_GPUS), parse_topo_matrix(TWO_GPUS.replace("PHB", "PIX"))
    common = {"params": 1e9, "step_ms": 300.0, "batch": 256, "flops_per_sample": 6e9, "nodes": 2}
    some = gpuscale.advise(topology=four, gpus_per_node=2, **common)
    alone = gpuscale.advise(topology=pair, **common)
    steps = [a.predictions.set_index("accelerators")["step_ms"] for a in (some, alone)]
    assert list(steps[0].index) == list(steps[1].index) == [1, 2, 4]
    assert steps[0].loc[4] == pytest.approx(steps[1].loc[4], rel=1e-12)
    network = some.calibration.machine.network
    assert network.name.startswith("pcie4-x16")
    assert network.name.endswith("x 2, ib-ndr400 between nodes")


def test_a_gain_inside_the_interval_is_not_recommended() -> None:
    # 2 devices predicted ~1.2x: the extrapolated +/-35% interval includes 1x
    advice = gpuscale.advise(
        params=7e6,
        step_ms=2.5,
        batch=64,
        interconnect="pcie-phb",
        max_devices=2,
        target_efficiency=0.5,
        scaling="weak",
    )
    row = advice.predictions.set_index("accelerators").loc[2]
    assert row["efficiency"] >= 0.5 and row["speedup_low"] <= 1 < row["speedup"]
    assert advice.recommended == 1 and advice.decision.held_back.accelerators == 2
    assert "includes no gain" in " ".join(advice.explanation)


def test_a_count_held_back_by_implausible_inputs_is_what_decides() -> None:
    # 1e18 FLOPs a sample in a 100 ms step: far above any peak; 8 devices would gain (their
    # whole interval above 1x) but the inputs hold every count back
    advice = gpuscale.advise(
        params=100e6, step_ms=100, interconnect="nvlink4", flops_per_sample=1e18
    )
    held = advice.decision.held_back
    assert advice.recommended == 1 and held is not None and held.speedup_low > 1
    assert advice.deciding.kind == "refused"  # not the target efficiency nor a term


def test_the_wait_for_the_slowest_device_does_not_vanish_at_no_fixed_cost() -> None:
    # the fitted wait scales with the compute; a fixed cost of 0 ms (given, or left by a
    # short step) once dropped it, the wait at 0 ms and at 0.001 ms 1 ms apart at 8 devices
    asked = {"params": 100e6, "step_ms": 100, "batch": 32, "interconnect": "nvlink4"}
    asked["flops_per_sample"] = 2e12
    waits = [
        gpuscale.advise(fixed_ms=ms, **asked).predictions.set_index("accelerators")["wait_ms"]
        for ms in (0.0, 0.001)
    ]
    assert waits[0].loc[8] > 0.5
    assert waits[0].loc[8] == pytest.approx(waits[1].loc[8], rel=1e-3)


def test_request_validation_names_the_field_and_round_trips(golden: Golden) -> None:
    request = AdviceRequest(params=7e6, step_ms=20, batch=64, nodes=2, workload="bert")
    assert AdviceRequest.from_json(request.to_json()) == request
    with pytest.raises(ValueError) as invalid:
        AdviceRequest(params=7e6, step_ms=20, target_efficiency=1.5)
    assert "target_efficiency" in str(invalid.value) and "1.5" in str(invalid.value)
    golden.check(VIEW, "a target efficiency above 1", str(invalid.value))
    with pytest.raises(ValueError) as unknown:
        AdviceRequest.from_json(json.dumps({"params": 1, "steps_ms": 2}))
    assert "steps_ms" in str(unknown.value)
    golden.check(VIEW, "an unknown request field", str(unknown.value))
    # the API takes the request or the same keywords, with the same answer
    by_request = gpuscale.advise(request.__class__(params=7e6, step_ms=20, batch=64))
    by_keywords = gpuscale.advise(params=7e6, step_ms=20, batch=64)
    assert by_request.explanation == by_keywords.explanation


def test_cli_options_are_the_request_fields(golden: Golden) -> None:
    import dataclasses

    from typer.testing import CliRunner

    from gpuscale.cli import app
    from gpuscale.tables.request_text import option_names

    result = CliRunner().invoke(app, ["advise", "--help"], env={"COLUMNS": "200"})
    shown = set(re.findall(r"--([a-z-]+)", result.output))
    # each field's option: --field-name, or the one it is given by (--price: price_per_device_hour)
    options = option_names(AdviceRequest)
    fields = {
        options.get(f.name, "--" + f.name.replace("_", "-")).removeprefix("--")
        for f in dataclasses.fields(AdviceRequest)
        if f.init
    }
    assert fields <= shown
    bad = CliRunner().invoke(
        app, ["advise", "--params", "7M", "--step-ms", "20", "--target-efficiency", "2"]
    )
    assert bad.exit_code != 0 and "--target-efficiency" in bad.output
    golden.check(VIEW, "a target efficiency above 1, command", flat(bad.output))


def test_one_device_left_by_a_global_batch_that_does_not_split_says_so(golden: Golden) -> None:
    """Strong scaling at global batch 1 left one row: the advice said "Only one device is
    available" beside "Device count capped at 2" (a user walk); it says why."""
    import gpuscale

    kept = gpuscale.advise(params=7e6, step_ms=20, batch=1, scaling="strong", max_devices=4)
    assert list(kept.predictions["accelerators"]) == [1]
    alone = gpuscale.advise(params=7e6, step_ms=20, batch=8, max_devices=1)
    assert list(alone.predictions["accelerators"]) == [1]
    # the two single rows said apart: the batch that does not split, the count allowed
    why = kept.explanation[kept.decision_line + 1]
    assert "global batch 1" in why and "scaling='weak'" in why
    golden.check(VIEW, "one device: a global batch of 1 kept", why)
    assert alone.explanation[alone.decision_line + 1] != why
    golden.check(VIEW, "one device allowed", alone.explanation[alone.decision_line + 1])


def _nvlinked(gpus: int) -> str:  # a saved `nvidia-smi topo -m` of ``gpus`` NVLinked GPUs
    names = [f"GPU{i}" for i in range(gpus)]
    rows = ["\t" + "\t".join(names) + "\tCPU Affinity"]
    for i, name in enumerate(names):
        cells = [" X " if j == i else "NV18" for j in range(gpus)]
        rows.append(f"{name}\t" + "\t".join(cells) + "\t0-15")
    return "\n".join(rows) + "\n"


def test_eight_per_node_typed_is_asked_not_the_default() -> None:
    """``--gpus-per-node 8`` typed was said as "the default 8" (compared with the default,
    not told from it), and on a 16-GPU node it took all 16 as the default does."""
    common = dict(params=1e9, step_ms=300, batch=64)
    two = parse_topo_matrix(_nvlinked(2))

    def found(advice, kind):  # the one finding of ``kind``
        (one,) = [f for f in advice.calibration.said.sources if getattr(f, "kind", None) is kind]
        return one

    for typed in ({}, {"gpus_per_node": 8}):
        default = not typed
        cap = found(gpuscale.advise(topology=two, **common, **typed), K.TOPOLOGY_CAP)
        assert (cap["gpus"], cap["asked"], cap["default"]) == (2, 8, default)
        nodes = gpuscale.advise(topology=two, nodes=2, **common, **typed)
        per_node = found(nodes, K.TOPOLOGY_PER_NODE)
        assert (per_node["gpus"], per_node["asked"], per_node["default"]) == (2, 8, default)
    sixteen = parse_topo_matrix(_nvlinked(16))
    untyped = gpuscale.advise(topology=sixteen, nodes=2, **common)
    assert untyped.calibration.machine.network.per_node == 16
    typed = gpuscale.advise(topology=sixteen, nodes=2, gpus_per_node=8, **common)
    assert typed.calibration.machine.network.per_node == 8
    assert found(typed, K.TOPOLOGY_SOME_PER_NODE)["asked"] == 8
