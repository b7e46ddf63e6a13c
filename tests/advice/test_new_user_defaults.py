"""Defaults a new user met that could not all be true at once, each checked as numbers and
record fields: the assumed device and link a consistent pair, an ambiguous device's
memory checked on its smaller part, a count's prediction independent of how far the
search goes, every assumption a number with a unit, the help's overlap the code's, the
full table's columns the default table's."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.explain.answer import deciding_line
from gpuscale.advice.explain.as_json import advice_document
from gpuscale.advice.explain.document import advice_view
from gpuscale.advice.explain.explanation import scaled_from
from gpuscale.advice.model.network import FITTED
from gpuscale.advice.model.priors import OVERLAP_BY_CLASS
from gpuscale.advice.request_fields import RequestFields
from gpuscale.advice.types import FindingKind, TermId

from ..golden import Golden

SEVEN_B = {"params": 7e9, "step_ms": 500.0, "batch": 8}


def test_the_explained_table_shows_which_counts_hold_the_model() -> None:
    advice = gpuscale.advise(device_name="H100", strategy="zero2", **SEVEN_B)
    assert not advice.predictions["fits"].all()
    shown = advice_view(advice, terminal=True, explain=True)
    assert "fits" in shown.shown
    assert list(shown.frame["fits"]) == ["no", "yes", "yes", "yes"]


def test_the_overlap_help_gives_the_overlap_each_link_class_assumes() -> None:
    """The numbers the help gives as the default are the priors' by link class (1 on
    NVLink or P2P, 0.5 through host memory), not one of them for all."""
    fields = {f.name: f for f in dataclasses.fields(RequestFields)}
    default = str(fields["overlap"].metadata["help"]).split("else", 1)[1]
    said = {float(x) for x in re.findall(r"\b\d+(?:\.\d+)?\b", default)}
    assert said == set(OVERLAP_BY_CLASS.values()) == {0.5, 1.0}


def test_an_assumed_link_class_has_its_numbers_and_unit() -> None:
    """MI300X's xGMI taken as NVLink's class: the term the classes within a node differ by
    (the contention; the rank spread is every class's), ranged over them, with its unit
    (every assumption in -f json a number)."""
    advice = gpuscale.advise(device_name="MI300X", strategy="zero2", **SEVEN_B)
    (taken,) = [a for a in advice.assumptions if a.term is TermId.LINK_CLASS]
    within = ("nvlink", "pcie_p2p", "pcie_no_p2p")
    assert len({FITTED.spread(c) for c in within}) == 1  # the spread tells no class apart
    kappa = {c: FITTED.contention(c) for c in within}
    assert taken.quantity is not None and taken.quantity.unit
    assert taken.quantity.value == kappa["nvlink"] == 0.0
    assert (taken.quantity.low, taken.quantity.high) == (min(kappa.values()), max(kappa.values()))
    for said in advice_document(advice)["assumptions"]:  # type: ignore[union-attr]
        assert isinstance(said["value"], float | int) and said["unit"], said["term"]  # type: ignore[index]


@pytest.mark.parametrize("nodes", [1, 2])
def test_a_count_within_a_node_is_predicted_alike_however_far_the_search_goes(nodes: int) -> None:
    """Searching up to 16 or 32 devices leaves the counts up to 8 as they were: on one node
    given, each count's own link class prices its wait and contention (not the spill's
    nodes'); on nodes given (--nodes 2), the network's, whatever the search's extent."""
    near = gpuscale.advise(device_name="H100", strategy="zero2", nodes=nodes, **SEVEN_B)
    far = gpuscale.advise(
        device_name="H100", strategy="zero2", nodes=nodes, max_devices=16 * nodes, **SEVEN_B
    )
    assert far.calibration.machine.network.inter is not None  # the search spans nodes
    within = near.predictions.set_index("accelerators").loc[[2, 4, 8]]
    spanning = far.predictions.set_index("accelerators").loc[[2, 4, 8]]
    for column in ("step_ms", "wait_ms", "speedup", "speedup_low", "speedup_high"):
        assert list(spanning[column]) == list(within[column]), column


def test_no_device_named_the_memory_check_reads_a_board_of_the_link_assumed(
    golden: Golden,
) -> None:
    """No device and no link named: the link assumed is PCIe (pcie-phb), so the memory
    check reads the reference's PCIe board (an SXM board has NVLink), same memory, said;
    the fewest devices that hold the model, slower than one (its interval below 1x), say
    so (golden)."""
    advice = gpuscale.advise(strategy="ddp", **SEVEN_B)
    assert advice.deciding.kind == "memory" and advice.decision.read.speedup_high < 1
    golden.check("advice/memory", "7b_ddp_no_device_slower_than_one", deciding_line(advice))
    machine = advice.calibration.machine
    assert machine.network.intra.name == "pcie-phb" and machine.memory_device_assumed
    assert machine.memory_device.part is not None
    assert machine.memory_device.part.form_factor == "PCIe"
    assert machine.memory_device.part.memory_gib == 80.0
    assert advice_document(advice)["memory"]["device_assumed"]  # type: ignore[index]
    on_nvlink = gpuscale.advise(strategy="ddp", interconnect="nvlink4", **SEVEN_B)
    assert on_nvlink.calibration.machine.memory_device.part.form_factor.startswith("SXM")  # type: ignore[union-attr]


def test_a_name_of_parts_of_several_memory_sizes_is_checked_on_the_smallest() -> None:
    """'A100' (40 and 80 GB parts): the memory check reads the 40 GB part of the form read
    (SXM4), says it assumed it; the peak and power stay the part the name is read as."""
    advice = gpuscale.advise(device_name="A100", strategy="ddp", **SEVEN_B)
    machine = advice.calibration.machine
    assert machine.device.part is not None and machine.device.part.memory_gib == 80.0
    checked = machine.memory_device.part
    assert checked is not None and (checked.memory_gib, checked.form_factor) == (40.0, "SXM4")
    memory = advice_document(advice)["memory"]
    assert memory["capacity_gib"] == 40.0 and memory["device_assumed"]  # type: ignore[index]
    assert advice.memory is not None and advice.memory.fits_from("zero2") == 4
    named = gpuscale.advise(device_name="A100 80GB", strategy="ddp", **SEVEN_B)
    assert not named.calibration.machine.memory_device_assumed
    assert advice_document(named)["memory"]["device_assumed"] is None  # type: ignore[index]


TINY = Path(__file__).parent / "cpu_tiny_model_gloo.jsonl"


def test_a_params_model_on_a_bench_rests_on_its_family_models_runs(golden: Golden) -> None:
    """A --params model has no runs of its own (no error at its own runs), but rests on its
    family's benched model's: their weak evidence, and the command that firms them, are
    the advice's as they are without --params; the optimizer step scaled from that model
    is said scaled, not measured (golden)."""
    own = gpuscale.advise(bench=TINY)
    sized = gpuscale.advise(bench=TINY, params=20e6, flops_per_sample=1.2e8)
    benched = own.calibration.bench.bench_model  # type: ignore[union-attr]
    assert dict(own.calibration.model.error.source.values)["own"]  # its own runs: an error
    assert dict(sized.calibration.model.error.source.values)["own"] == ()
    assert sized.calibration.runs.own_model is None and scaled_from(sized.calibration) == benched
    assert sized.calibration.runs.evidence == own.calibration.runs.evidence
    assert sized.decision.warnings == own.decision.warnings and sized.decision.warnings
    first = [advice_document(a)["recommendation"]["measure_first"] for a in (own, sized)]  # type: ignore[index]
    assert first[0] and first[1] == first[0]
    (fixed,) = [line for line in sized.explanation if line.startswith("Fixed per-step")]
    golden.check("advice/family_break_even", "a --params model's optimizer step, scaled", fixed)
    (family,) = [line for line in sized.explanation if line.startswith("For this model")]
    golden.check("advice/family_break_even", "a --params model's family, scaled", family)


@pytest.mark.parametrize("device", ["TPU-v2", "MI250"])
def test_a_named_device_of_no_recorded_memory_is_said_unchecked(device: str) -> None:
    """A 70B model on a device the catalogue knows by name but records no memory for (nor
    ``data/accelerator_memory.csv``, which gives Gaudi2's: ``test_listed_memory``): no
    memory check can run, so the advice carries a warning record saying so (it said
    nothing, and advised one device for a state of 1.1 TB)."""
    advice = gpuscale.advise(params=70e9, step_ms=2000.0, batch=8, device_name=device)
    assert advice.memory is None
    kinds = [getattr(w, "kind", None) for w in advice.calibration.said.warnings]
    assert kinds.count(FindingKind.MEMORY_UNCHECKED) == 1
    named = gpuscale.advise(params=7e9, step_ms=2000.0, batch=8, device_name="H100")
    kinds = [getattr(w, "kind", None) for w in named.calibration.said.warnings]
    assert FindingKind.MEMORY_UNCHECKED not in kinds


def test_a_step_measured_on_one_device_the_memory_model_cannot_hold_is_warned() -> None:
    """--step-ms is measured on one device; where the model's state alone (7B x 16 bytes,
    Adam in mixed precision: 112 GB) exceeds what one H100 80GB may fill (90% of 85.9 GB),
    the measurement and the memory estimate disagree and a warning record carries both
    numbers; on the MI300X (192 GiB) they agree and nothing is said."""
    kind = FindingKind.MEMORY_MEASURED_BEYOND
    h100 = gpuscale.advise(params=7e9, step_ms=500.0, batch=8, device_name="H100")
    (beyond,) = [w for w in h100.calibration.said.warnings if getattr(w, "kind", None) == kind]
    values = dict(beyond.values)
    assert values["state_gb"] == pytest.approx(7e9 * 16 / 1e9)
    assert values["usable_gb"] == pytest.approx(0.9 * 80 * 2**30 / 1e9)
    assert (values["optimizer"], values["precision"], values["unasked"]) == (
        "adam",
        "mixed",
        "both",
    )
    # both given and still too much: nothing left to ask of the state, the step itself checked
    given = gpuscale.advise(
        params=7e9, step_ms=500.0, batch=8, device_name="H100", optimizer="sgd_momentum"
    )
    (beyond,) = [w for w in given.calibration.said.warnings if getattr(w, "kind", None) == kind]
    assert dict(beyond.values)["unasked"] == "precision"
    for held in (
        gpuscale.advise(params=7e9, step_ms=500.0, batch=8, device_name="MI300X"),
        gpuscale.advise(params=1e9, step_ms=500.0, batch=8, device_name="H100"),
    ):
        assert kind not in [getattr(w, "kind", None) for w in held.calibration.said.warnings]


def test_a_device_name_the_catalogue_lacks_is_told_the_closest() -> None:
    """`--device-name H100x` (a typo holding a catalogued name) is read as an unknown
    device, whose memory no check can read: the warning names the catalogue's closest
    names, a typo's likeliest fix; a name of a part it holds but no memory for has none."""
    advice = gpuscale.advise(params=7e9, step_ms=2000.0, batch=8, device_name="H100x")
    (unchecked,) = [
        w
        for w in advice.calibration.said.warnings
        if getattr(w, "kind", None) is FindingKind.MEMORY_UNCHECKED
    ]
    assert "H100" in unchecked["closest"] and unchecked["device"] == "H100x"
