"""Every accelerator the package knows is one advise knows: a name the device catalogue
(``data/devices.csv``) lacks but ``data/accelerator_memory.csv`` lists (A10G, Gaudi2, the
TPUs) has its memory checked at the table's figure, cited; every name ``--device-name``
reads is in its refusal's list of known names."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from importlib import resources

import pytest

import gpuscale
from gpuscale.advice.explain.as_json import advice_document
from gpuscale.advice.types import FindingKind
from gpuscale.hardware.accelerators import accepted_products
from gpuscale.hardware.capacity import BYTES_PER_GIB, LISTED
from gpuscale.hardware.catalogue import products
from gpuscale.names import resolve_device, resolve_gpu
from gpuscale.tables.requests import FieldError


def _rows(name: str) -> list[dict[str, str]]:
    return list(csv.DictReader((resources.files("gpuscale") / "data" / name).open()))


LISTED_ROWS = _rows("accelerator_memory.csv")
# a state no accelerator listed holds on one device (16 bytes a parameter: 320 GB), so the
# memory check's record is in the JSON whatever the device; 64 devices hold it on any
BIG = {"params": 2e10, "step_ms": 300.0, "batch": 64, "max_devices": 64}


def _resolves(name: str, resolve: Callable[[str], str | None] = resolve_device) -> bool:
    try:
        resolve(name)
    except FieldError:
        return False
    return True


def test_the_table_lists_the_accelerators_it_was_written_for_with_their_cited_sizes() -> None:
    """A cited size changed or a row dropped fails here (the figures each vendor states)."""
    assert {r["family"]: float(r["memory_gib"]) for r in LISTED_ROWS} == {
        "A10G": 24,
        "GB200": 186,
        "Gaudi2": 96,
        "MI325X": 256,
        "RX 7900 XTX": 24,
        "TPU-v4": 32,
        "TPU-v5e": 16,
        "TPU-v5p": 95,
        "TPU-Trillium": 32,
        "GB300": 288,
        "B300": 288,
        "MI355X": 288,
        "Gaudi3": 128,
        "TPU-v3": 32,
    }
    assert all(re.search(r"\(\S+\.\S+\)$", r["source"]) for r in LISTED_ROWS)  # (its page)


@pytest.mark.parametrize("row", LISTED_ROWS, ids=lambda r: r["family"])
def test_advise_checks_a_listed_accelerator_at_the_tables_memory(row: dict[str, str]) -> None:
    family = row["family"]
    assert _resolves(family)
    advice = gpuscale.advise(device_name=family, **BIG)
    memory = advice_document(advice)["memory"]
    assert memory["device"] == family
    assert memory["capacity_gib"] == float(row["memory_gib"])
    assert memory["capacity_gb"] == pytest.approx(float(row["memory_gib"]) * BYTES_PER_GIB / 1e9)
    assert memory["capacity_source"] == f"{LISTED}: {row['source']}"
    assert memory["device_assumed"] is None  # named, not assumed
    kinds = {getattr(w, "kind", None) for w in advice.calibration.said.warnings}
    assert FindingKind.MEMORY_UNCHECKED not in kinds


@pytest.mark.parametrize("typed", ["a10g", "NVIDIA A10G", "Gaudi 2", "TPU v5p", "mi325x"])
def test_a_listed_accelerator_is_read_however_it_is_written(typed: str) -> None:
    memory = advice_document(gpuscale.advise(device_name=typed, **BIG))["memory"]
    assert memory["capacity_source"].startswith(LISTED)


def test_the_explanation_says_the_memory_came_from_the_table() -> None:
    advice = gpuscale.advise(device_name="a10g", **BIG)
    (line,) = [t for t in advice.explanation if t.startswith("Memory:")]
    assert "on the A10G (25.8 GB, 24 GiB as the accelerator memory table lists" in line


def test_a_model_one_listed_device_holds_is_checked_too() -> None:
    """The 700M-parameter model a 24 GB A10G holds: no "memory not checked" warning."""
    advice = gpuscale.advise(device_name="a10g", params=7e8, step_ms=300.0, batch=8)
    kinds = {getattr(w, "kind", None) for w in advice.calibration.said.warnings}
    assert FindingKind.MEMORY_UNCHECKED not in kinds
    assert advice.calibration.machine.memory is not None


# (resolver, the refusal's list between these, whether MLPerf's other names count): advise's
# --device-name and topo's/collectives' --gpu (GPUs only)
REFUSALS = [
    (resolve_device, r"\(known: (.*)\); for another device", False),
    (resolve_gpu, r"; known: (.*)$", True),
]


@pytest.mark.parametrize(("resolve", "between", "gpus_only"), REFUSALS, ids=["device", "gpu"])
def test_the_refusals_known_list_holds_every_name_that_resolves(
    resolve: Callable[[str], str | None], between: str, gpus_only: bool
) -> None:
    with pytest.raises(FieldError) as refused:
        resolve("Z999")
    said = str(refused.value)
    listed = re.search(between, said)
    assert listed is not None, said
    known = [n.strip() for n in re.split(r", |; and, [^:]*: ", listed.group(1))]
    names = {*products(), *accepted_products()}
    assert {n for n in names if _resolves(n, resolve)} <= set(known)
    assert all(_resolves(n, resolve) for n in known)  # and none it lists is refused
    if not gpus_only:
        assert {r["family"] for r in LISTED_ROWS} <= set(known)
