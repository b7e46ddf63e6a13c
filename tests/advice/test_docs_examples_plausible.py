"""The advice examples of the README and docs describe steps a device could run: the
rate their numbers imply (6 x parameters x batch / step) is within what the device their
link implies can do (``plausible.rate_warnings``), or, with no device implied, what some
GPU of the catalogue can."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuscale.advice.plausible import implied_device, rate_warnings
from gpuscale.bench.peaks import PEAKS
from gpuscale.quantities import parse_size

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CLI = re.compile(
    r"gpuscale advise --params (\S+) --step-ms (\S+) --batch (\d+)(?:.*?--interconnect (\S+))?"
)
API = re.compile(
    r"params=([\d.e]+), step_ms=([\d.]+), batch=(\d+)(?:, (?:link|interconnect)=\"([^\"]+)\")?"
)


def _examples() -> list[tuple[str, float, float, int, str]]:
    found = []
    for page in PAGES:
        text = page.read_text().replace("\\\n", " ")
        for pattern in (CLI, API):
            for params, step, batch, link in pattern.findall(text):
                found.append((page.name, parse_size(params), float(step), int(batch), link))
    return found


EXAMPLES = _examples()


def test_the_examples_are_found() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e[0]}-{e[2]}ms" for e in EXAMPLES])
def test_an_advise_example_implies_a_rate_a_device_can_run(example: tuple) -> None:
    _, params, step_ms, batch, link = example
    tflops = 6 * params * batch / (step_ms / 1e3) / 1e12
    device = implied_device(link or "pcie-phb")
    devices = [device] if device else [peak.device for _, peak in PEAKS]
    assert any(not rate_warnings(tflops, d, "fp32") for d in devices), (tflops, devices)
