"""``topo``, ``collectives`` and ``advise`` read a device name the same way: the part the
topology is judged with, the part whose board power and peak the advice reads, and the
name ``collectives`` accepts are one part of the catalogue; an unknown name is refused by
each with the same closest name. Every card the docs name is a part (or named there as
one gpuscale has no datasheet for)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.bench.collectives_config import CheckRequest
from gpuscale.bench.telemetry import topology_here
from gpuscale.cli import app
from gpuscale.hardware.device_names import lookup, on_link, parts_named, resolve

ROOT = Path(__file__).resolve().parents[2]
TOPO = "\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\t X \n"
NAMES = ["4090", "NVIDIA GeForce RTX 4090", "A100 80GB", "H100", "RTX 6000 Ada", "5090"]


@pytest.mark.parametrize("name", NAMES)
def test_the_three_commands_read_a_name_as_one_part(name: str, tmp_path: Path) -> None:
    topo = tmp_path / "topo.txt"
    topo.write_text(TOPO)
    part = on_link(resolve(name), True, "pcie-phb").device  # a PCIe card, where one is named
    shown = CliRunner().invoke(app, ["topo", "--file", str(topo), "--gpu", name, "-f", "json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["device"]["name"] == part.name
    # collectives accepts the name and judges against the topology read with it
    CheckRequest(gpu=name, topo_file=topo)
    judged = topology_here(topo, name)
    assert judged is not None and judged.to_dict()["device"]["name"] == part.name
    advice = gpuscale.advise(params=7e6, step_ms=20, batch=32, link="pcie-phb", device_name=name)
    power = str(advice.predictions["energy_source"].iloc[0])
    assert part.name in power and "datasheet" in power, power  # the part read, its source


def test_p2p_follows_the_part_read(tmp_path: Path) -> None:
    """A GeForce card behind one PCIe switch is judged through host memory, a card with
    P2P at its PCIe generation."""
    topo = tmp_path / "topo.txt"
    topo.write_text(TOPO)
    geforce, pro = topology_here(topo, "RTX 4090"), topology_here(topo, "RTX 6000 Ada")
    assert geforce is not None and pro is not None
    assert (geforce.preset(), geforce.expected_busbw_gbs()) == ("pcie-phb", 10.0)
    assert pro.preset() == "pcie4-x16" and pro.expected_busbw_gbs() == 24.0


def test_an_unknown_name_is_refused_alike(tmp_path: Path) -> None:
    topo = tmp_path / "topo.txt"
    topo.write_text(TOPO)
    hint = "did you mean 'RTX 4070 Ti SUPER'?"
    runner = CliRunner()
    said = [
        runner.invoke(app, ["topo", "--file", str(topo), "--gpu", "RTX 4070"]),
        runner.invoke(
            app, ["collectives", "--backend", "gloo", "--topo-file", str(topo), "--gpu", "RTX 4070"]
        ),
        runner.invoke(
            app, ["advise", "--params", "7M", "--step-ms", "2", "--device-name", "RTX 4070"]
        ),
    ]
    for result in said:
        assert result.exit_code == 2 and hint in " ".join(result.output.split()), result.output


# GPU model names as the docs write them (RTX 4090, RTX A5000, H100, MI300X, A10G, ...)
CARD = re.compile(
    r"\b(?:RTX\s+(?:A\d{4}|\d{4}(?:\s+Ti\s+SUPER|\s+Ti|\s+Ada)?)|[AHBLT]\d{1,3}S?G?|V100S?|MI\d{3}X|GH200)\b"
)
# named in the docs as a device gpuscale has no datasheet for (the held-out tables' Turing
# cards: their rows are advised without a device name), or as a name refused (H10: plan's
# abbreviation refused, docs/plan.md)
NOT_PARTS = {"A10G", "RTX 4070", "RTX 2080 Ti", "RTX 8000", "H10"}


def test_every_card_named_in_the_docs_is_a_part() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    named = {m.group(0) for page in pages for m in CARD.finditer(page.read_text())}
    assert {"RTX 4090", "RTX 4070 Ti SUPER", "H100", "MI300X"} <= named
    assert sorted(n for n in named - NOT_PARTS if lookup(n) is None) == []
    assert all(lookup(n) is None for n in NOT_PARTS & named)


def test_every_device_of_the_published_tables_is_a_part() -> None:
    """Every device the development tables name reads as a part; none the held-out tables
    name (some no catalogue part: advised without a device name) has a word left unread
    (``H100 80GB PCIe Gen5``, Lambda's: refused, it stops ``benchmarks/advice_published.py``)."""
    from gpuscale.hardware.device_names import unread_words

    paths = sorted((ROOT / "benchmarks" / "published").glob("**/*.csv"))
    assert any(path.parent.name == "heldout" for path in paths)
    for path in paths:
        for device in pd.read_csv(path, comment="#")["device"].unique():
            assert unread_words(device) == (), (path.name, device)
            assert path.parent.name == "heldout" or lookup(device) is not None, (path.name, device)


def test_the_docs_count_the_catalogues_parts() -> None:
    from gpuscale.hardware.catalogue import devices

    text = " ".join((ROOT / "docs" / "interconnect.md").read_text().split())
    assert f": {len(devices())} parts," in text  # the count the docs give


@pytest.mark.parametrize("typed", ["H100 PCEI", "H100 PCI", "H100 SMX", "A100 PCEI 80GB"])
def test_a_part_name_with_an_unread_word_is_refused_not_read_as_the_default(typed: str) -> None:
    """``H100 PCEI`` holds the H100's model number and a word no form or memory reads: it
    was read as the SXM5 board (1.67x where the PCIe card gives 0.173x); each command that
    takes a device name refuses it, naming the product's parts."""
    from gpuscale.names import resolve_device, resolve_gpu
    from gpuscale.tables.refusals import FieldError

    parts = set(parts_named(typed))
    assert len(parts) >= 3
    for check, field in ((resolve_device, "device_name"), (resolve_gpu, "gpu")):
        with pytest.raises(FieldError) as refused:
            check(typed)
        assert refused.value.field == field
        assert {p for p in parts if p in refused.value.rule} == parts
    with pytest.raises(ValueError):
        gpuscale.advise(params=7e9, step_ms=500.0, batch=8, device_name=typed)


@pytest.mark.parametrize(
    ("typed", "part"),
    [
        ("A100 80G", "A100 SXM4 80GB"),
        ("A100 PCIe 80GiB", "A100 PCIe 80GB"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM5 80GB"),
        ("H100 GPU", "H100 SXM5 80GB"),
        ("AMD Instinct MI300X OAM", "MI300X"),
    ],
)
def test_a_memory_written_short_and_words_no_part_differs_by_read_as_written(
    typed: str, part: str
) -> None:
    from gpuscale.names import resolve_device

    assert resolve_device(typed) == typed
    assert resolve(typed).device.name == part
