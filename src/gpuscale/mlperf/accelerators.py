"""Accelerator names as submitters write them -> vendor, product, variant and family.

Submitters write one product many ways (``NVIDIA H100-SXM5-80GB``, ``NVIDIA H100 80GB
HBM3``, ``NVIDIA A100-PCIE-40GB (250W)``, ``NVIDIA A100 - PCIe - 80 GB``). One catalogue
(``_PRODUCTS``) recognises the product; the variant (form factor, memory in GB) is read
from the name where written, else the product's default; the family is the key systems
are grouped by: the product, plus the variant where it changes the part (A100, H100 and
H200 come in SXM, PCIe and NVL parts and A100 in two memory sizes; B200 does not). A name
the catalogue does not recognise is not guessed: its family is its own name (the vendor
written once), and ``known`` is False so the reader reports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VENDORS = {
    "nvidia": "NVIDIA",
    "amd": "AMD",
    "intel": "Intel",
    "habana": "Intel",  # Habana Labs, an Intel company
    "google": "Google",
    "graphcore": "Graphcore",
}


@dataclass(frozen=True, slots=True)
class Product:
    """A product of the catalogue: how its name reads, and how its family is keyed."""

    pattern: str  # on the lower-cased name
    vendor: str
    product: str
    form_factor: str | None = None  # the default when the name gives none
    memory_gb: int | None = None
    keyed_by_variant: bool = False  # family = product-form-memory (A100-SXM4-80GB)


# First match wins: longer product names before their prefixes (L40S before L40).
_PRODUCTS: tuple[Product, ...] = (
    Product(r"gb300", "NVIDIA", "GB300"),
    Product(r"gb200", "NVIDIA", "GB200"),
    Product(r"gh200", "NVIDIA", "GH200"),
    Product(r"\bb300", "NVIDIA", "B300"),
    Product(r"\bb200", "NVIDIA", "B200"),
    Product(r"h200", "NVIDIA", "H200", "SXM5", 141, keyed_by_variant=True),
    Product(r"h100", "NVIDIA", "H100", "SXM5", 80, keyed_by_variant=True),
    Product(r"a100", "NVIDIA", "A100", "SXM4", 80, keyed_by_variant=True),
    Product(r"\ba10g\b", "NVIDIA", "A10G"),
    Product(r"\ba30\b", "NVIDIA", "A30"),
    Product(r"\ba40\b", "NVIDIA", "A40"),
    Product(r"\bl40s\b", "NVIDIA", "L40S"),
    Product(r"\bl40\b", "NVIDIA", "L40"),
    Product(r"\bl4\b", "NVIDIA", "L4"),
    Product(r"rtx\s*pro\s*6000", "NVIDIA", "RTX Pro 6000"),
    Product(r"rtx\s*a5000", "NVIDIA", "RTX A5000"),
    Product(r"rtx\s*4090", "NVIDIA", "RTX 4090"),
    Product(r"7900\s*xtx", "AMD", "RX 7900 XTX"),
    Product(r"mi355", "AMD", "MI355X", "OAM"),
    Product(r"mi350", "AMD", "MI350X", "OAM"),
    Product(r"mi325", "AMD", "MI325X", "OAM"),
    Product(r"mi300x", "AMD", "MI300X", "OAM"),
    Product(r"gaudi\(?r?\)?\s*3", "Intel", "Gaudi3"),
    Product(r"gaudi\(?r?\)?\s*2", "Intel", "Gaudi2"),
    Product(r"gaudi", "Intel", "Gaudi"),
    Product(r"tpu[-\s]*v5p", "Google", "TPU-v5p"),
    Product(r"tpu[-\s]*v5e", "Google", "TPU-v5e"),
    Product(r"trillium|tpu[-\s]*v6", "Google", "TPU-Trillium"),
    Product(r"tpu[-\s]*v4", "Google", "TPU-v4"),
    Product(r"ipu\s*gc200|gc200", "Graphcore", "IPU-GC200"),
)

# Form factors as written -> as keyed (SXM on an H100/H200 is SXM5, on an A100 SXM4).
_FORMS = (("nvl", "NVL"), ("pcie", "PCIe"), ("sxm5", "SXM5"), ("sxm4", "SXM4"), ("sxm", "SXM"))
_SXM_GENERATION = {"A100": "SXM4", "H100": "SXM5", "H200": "SXM5"}
_NVL_MEMORY = {"H100": 94, "H200": 141}  # an NVL part without a size written


@dataclass(frozen=True, slots=True)
class Accelerator:
    """One accelerator name, normalised (``known`` False: not in the catalogue)."""

    vendor: str | None
    product: str | None
    form_factor: str | None
    memory_gb: int | None
    family: str
    known: bool


def _vendor_of(lowered: str) -> str | None:
    first = re.match(r"[a-z]+", lowered)
    return _VENDORS.get(first.group(0)) if first else None


def _unknown(name: str) -> Accelerator:
    """An unrecognised name as written, the vendor once (``NVIDIA NVIDIA X`` -> ``NVIDIA
    X``); no product, variant or family guessed."""
    words = name.split()
    vendor = _vendor_of(name.lower())
    while vendor and len(words) > 1 and _VENDORS.get(words[0].lower()) == vendor:
        words = words[1:]
    rest = " ".join(words)
    return Accelerator(vendor, None, None, None, f"{vendor} {rest}" if vendor else rest, False)


UNKNOWN_FAMILY = "unknown"  # the family of a system that names no accelerator


def normalise_accelerator(name: str | None) -> Accelerator:
    """The vendor, product, variant and family of an ``accelerator_model_name``."""
    text = " ".join(str(name or "").split())
    if not text or text.lower() in ("n/a", "none", "null", "-"):
        return Accelerator(None, None, None, None, UNKNOWN_FAMILY, False)
    lowered = text.lower()
    product = next((p for p in _PRODUCTS if re.search(p.pattern, lowered)), None)
    if product is None:
        return _unknown(text)
    form = next((f for key, f in _FORMS if re.search(rf"\b{key}|{key}\b|-{key}", lowered)), None)
    if form == "SXM" or (form is None and "hbm3" in lowered and product.product == "H100"):
        form = _SXM_GENERATION.get(product.product, "SXM")
    form = form or product.form_factor
    sizes = [int(m) for m in re.findall(r"(\d+)\s*gb", lowered)]
    memory = sizes[0] if sizes else product.memory_gb
    if not sizes and form == "NVL":
        memory = _NVL_MEMORY.get(product.product, memory)
    family = product.product
    if product.keyed_by_variant:
        family = f"{product.product}-{form}-{memory}GB"
    return Accelerator(product.vendor, product.product, form, memory, family, True)


def accelerator_family(model: str | None) -> str:
    """The family key of an accelerator name (``normalise_accelerator(...).family``)."""
    return normalise_accelerator(model).family
