"""Device names are matched on whole model numbers across the whole catalogue (board
powers, peaks, products): a walk's ``--device-name "RTX A1000"`` was read as an A100 SXM4
(400 W) and ``H1000`` as an H100; an unknown name is refused with the closest one."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.hardware.accelerators import _PRODUCTS, normalise_accelerator
from gpuscale.hardware.peaks import PEAKS, peak_for
from gpuscale.hardware.power import BOARD_POWER_W, board_power


def _spellings(name: str) -> list[str]:
    """The ways torch and vendors write a device: as named, after the vendor, and with the
    variant joined by hyphens (``NVIDIA A100-SXM4-80GB``)."""
    out = [name, f"NVIDIA {name}", f"NVIDIA GeForce {name}" if "RTX" in name else name]
    first, _, rest = name.partition(" ")
    if rest and re.search(r"\d", first):
        out.append(f"NVIDIA {first}-" + rest.replace(" GB", "GB").replace(" ", "-"))
    return out


def _longer(name: str) -> str:
    """``name`` with a digit appended to its model number (its first token with digits):
    ``A100 SXM4`` -> ``A1000 SXM4``."""
    tokens = name.split(" ")
    at = next(i for i, t in enumerate(tokens) if re.search(r"\d", t))
    tokens[at] = re.sub(r"(\d+)", r"\g<1>0", tokens[at], count=1)
    return " ".join(tokens)


def _numbers(label: str) -> set[str]:
    """The model numbers a catalogue label names, up to their digits' end (``H100/H200
    SXM`` -> h100, h200; ``A10G`` -> a10)."""
    found = (re.match(r"[a-z]*\d+", t) for t in re.split(r"[\s/-]+", label.lower()))
    return {m.group(0) for m in found if m}


# (every device name of a table, what the table answers for a name, the entry's label)
_TABLES = [
    *[
        (part, lambda n: (board_power(n) or (0, None))[1], label)
        for _, _, label in BOARD_POWER_W
        for part in label.split("/")
    ],
    *[
        (part, lambda n: getattr(peak_for(n), "device", None), peak.device)
        for _, peak in PEAKS
        for part in peak.device.split("/")
    ],
    *[(p.product, lambda n: normalise_accelerator(n).product, p.product) for p in _PRODUCTS],
]


@pytest.mark.parametrize(("name", "lookup", "label"), _TABLES, ids=[t[0] for t in _TABLES])
def test_every_catalogue_name_matches_itself_and_no_longer_model_number(
    name, lookup, label
) -> None:  # type: ignore[no-untyped-def]
    plain = "TPU" in name or not re.search(r"\d", name)  # no vendor prefix, no variant
    spellings = [name] if plain else _spellings(name)
    for spelled in spellings:
        assert lookup(spelled) == label, spelled
    if not re.search(r"\d", name):
        return
    longer = _longer(name)
    for spelled in _spellings(longer) if spellings != [name] else [longer]:
        found = lookup(spelled)
        # nothing, another entry that really has that longer number (A10 + 0 = A100), or
        # a family's entry that names no number (a bare "Gaudi")
        assert found != label, spelled
        assert found is None or not _numbers(found) or _numbers(longer) & _numbers(found), (
            spelled,
            found,
        )


@pytest.mark.parametrize("name", ["RTX A1000", "H1000", "NVIDIA A1000"])
def test_an_unknown_device_name_is_refused_with_the_closest(name: str) -> None:
    args = ["advise", "--params", "7M", "--step-ms", "2", "--batch", "64"]
    result = CliRunner().invoke(app, [*args, "--device-name", name])
    assert result.exit_code != 0
    said = " ".join(result.output.split())
    assert "--device-name" in said and "unknown device" in said and "did you mean" in said
    with pytest.raises(ValueError, match="unknown device"):
        gpuscale.advise(params=7e6, step_ms=2.0, batch=64, device_name=name)


def test_real_torch_names_keep_their_power_and_peak() -> None:
    for name, watts in (
        ("NVIDIA A100-SXM4-80GB", 400.0),
        ("NVIDIA H100 80GB HBM3", 700.0),
        ("NVIDIA GeForce RTX 4090", 450.0),
        ("NVIDIA RTX A5000", 230.0),
    ):
        assert board_power(name)[0] == watts, name
        assert peak_for(name) is not None, name
