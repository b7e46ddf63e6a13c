"""Board power limits per device kind, for energy per trained model when nothing measured it.

Board power limits (W), the vendors' datasheets (retrieved 2026): H100 SXM5 700, H100 PCIe
350, H100 NVL 400, H200 SXM 700, H200 NVL 600, B200 1,000, A100 SXM4 400, A100 PCIe 300
(80 GB; 250 for 40 GB), L40S 350, L4 72, A10 150, T4 70, RTX 4090 450, RTX 4070 Ti SUPER
285, RTX 3090 350, RTX A5000 230, RTX A6000 300, V100 SXM2 300, MI300X 750. Training runs
near the limit, so the table is an upper estimate (``gpuscale.advice.device_power`` puts a
measured figure before it). CPUs have no entry.
"""

from __future__ import annotations

from gpuscale.hardware.model_numbers import matcher

# (pattern on the lower-cased device name, board power W, what it is). First match wins.
BOARD_POWER_W: tuple[tuple[str, float, str], ...] = (
    (r"h100.*nvl", 400.0, "H100 NVL"),
    (r"h100.*pcie", 350.0, "H100 PCIe"),
    (r"h200.*nvl", 600.0, "H200 NVL"),
    (r"gh200|h100|h200|h800", 700.0, "H100/H200 SXM"),
    (r"gb200|b200", 1000.0, "B200"),
    (r"a100.*pcie.*40|a100-pcie-40", 250.0, "A100 PCIe 40 GB"),
    (r"a100.*pcie", 300.0, "A100 PCIe"),
    (r"a100|a800", 400.0, "A100 SXM4"),
    (r"l40s", 350.0, "L40S"),
    (r"\bl4\b", 72.0, "L4"),
    (r"\ba10\b", 150.0, "A10"),
    (r"\bt4\b", 70.0, "T4"),
    (r"rtx 4090", 450.0, "RTX 4090"),
    (r"rtx 4070 ti super", 285.0, "RTX 4070 Ti SUPER"),
    (r"rtx 3090", 350.0, "RTX 3090"),
    (r"rtx a5000", 230.0, "RTX A5000"),
    (r"rtx a6000", 300.0, "RTX A6000"),
    (r"v100", 300.0, "V100 SXM2"),
    (r"mi300x", 750.0, "MI300X"),
)

# Each pattern with whole model numbers ("a100" never inside "a1000": an RTX A1000 was
# read as an A100 SXM4 at 400 W).
_MATCHERS = tuple((matcher(pattern), watts, label) for pattern, watts, label in BOARD_POWER_W)


def board_power(device_name: str | None) -> tuple[float, str] | None:
    """(board power W, what it is) of a device by its name, None when the table does not
    know it."""
    name = (device_name or "").lower()
    if not name:
        return None
    return next(((watts, label) for found, watts, label in _MATCHERS if found(name)), None)


def board_labels() -> list[str]:
    """Every device the table names (``H100/H200 SXM`` as its two), for a did-you-mean."""
    return [part for _, _, label in BOARD_POWER_W for part in label.split("/")]
