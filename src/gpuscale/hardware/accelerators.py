"""Accelerator names as submitters write them -> vendor, product, variant and family.

Submitters write one product many ways (``NVIDIA H100-SXM5-80GB``, ``NVIDIA H100 80GB
HBM3``, ``NVIDIA A100-PCIE-40GB (250W)``, ``NVIDIA A100 - PCIe - 80 GB``). One catalogue
(``_PRODUCTS``) recognises the product; the variant (form factor, memory in GB) is read
from the name where written, else the product's default; the family is the key systems
are grouped by: the product, plus the variant where it changes the part (V100, A100, H100
and H200 come in SXM, PCIe and NVL parts and V100 and A100 in two memory sizes; B200 does
not), plus the board power a name writes where the catalogue has no such part
(``V100-SXM3-32GB (450W)``, DGX-2H's, is not DGX-2's 350 W part: a faster part, which
like with like must not compare with the other). A part the catalogue has keeps its
family whatever power a name writes (an A100 SXM4 80GB written "(500W)" is read with the
400 W ones: a catalogue part split by an OEM's power setting leaves families too thin
to read a scaling from, as v1.1's RNN-T, and the plan's development forecasts rest on
those families). A name
the catalogue does not recognise is not guessed: its family is its own name (the vendor
written once), and ``known`` is False so the reader reports it.

The catalogue covers every accelerator of MLPerf Training v0.5 to v6.x: V100 in its forms
(SXM2, SXM3, PCIe: a family each; V100S its own), TPU v2 to v7, Gaudi 1-3, the
Graphcore IPUs, Ascend 910, the A100/H100/H200 variants and the 2025-2026 parts. Old
spellings fold into one family: v0.7 and v1.0 name TPU v4 just ``TPU`` (the version is in
the system id, ``tpu-v4-128-TF``), read from the ``hint`` the caller passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from gpuscale.hardware.catalogue import devices
from gpuscale.hardware.cited import data_rows
from gpuscale.hardware.model_numbers import matcher
from gpuscale.tables.rounds import UNKNOWN_FAMILY

_VENDORS = {
    "nvidia": "NVIDIA",
    "amd": "AMD",
    "intel": "Intel",
    "habana": "Intel",  # Habana Labs, an Intel company
    "google": "Google",
    "graphcore": "Graphcore",
    "huawei": "Huawei",
    "tesla": "NVIDIA",  # "Tesla V100" (v0.7)
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
    family: str | None = None  # the family where it is not the product (V100S -> V100)
    # the inter-chip fabric of its own (TPU ICI, Gaudi's on-chip RoCE) that joins its devices,
    # none of gpuscale's link presets (``fabric_source``: the vendor's page saying so)
    fabric: str | None = None
    # the vendor's architecture, its hardware generation (Ampere, Hopper, CDNA 3); None
    # where the product is a generation of its own (TPU-v5p, Gaudi2)
    architecture: str | None = None


PRODUCTS_FILE = "accelerator_products.csv"


def _product(row: dict[str, str]) -> Product:
    return Product(
        pattern=row["pattern"],
        vendor=row["vendor"],
        product=row["product"],
        form_factor=row["form_factor"] or None,
        memory_gb=int(row["memory_gb"]) if row["memory_gb"] else None,
        keyed_by_variant=row["keyed_by_variant"] == "yes",
        family=row["family"] or None,
        fabric=row["fabric"] or None,
        architecture=row["architecture"] or None,
    )


# The products as data (``data/accelerator_products.csv``; the pattern on the lower-cased
# name). First match wins: longer product names come before their prefixes (L40S before L40).
_PRODUCTS: tuple[Product, ...] = tuple(_product(row) for row in data_rows(PRODUCTS_FILE))
# A model number is whole: "h1000" is no H100, "a1000" (an RTX A1000) no A100, "b2000" no
# B200 (each was read as the other); "H100-SXM5", "H100SXM" and "A100_80GB" still are.
_MATCHERS = tuple((p, matcher(p.pattern)) for p in _PRODUCTS)
# A name that says only "TPU": the version is in the system id or name (v0.7, v1.0).
_BARE_TPU = re.compile(r"(google\s*)?(cloud\s*)?tpu")
_TPU_IN_HINT = re.compile(r"tpu[-_\s]*(v\d+[a-z]*|trillium|ironwood)")
# A system with no accelerator (Intel's CPU-only submissions: "N/A", 0 per node).
CPU_ONLY_FAMILY = "CPU only"

# Form factors as written -> as keyed (SXM on an H100/H200 is SXM5, on an A100 SXM4).
_FORMS = (
    ("nvl", "NVL"),
    ("pcie", "PCIe"),
    ("sxm5", "SXM5"),
    ("sxm4", "SXM4"),
    ("sxm3", "SXM3"),
    ("sxm2", "SXM2"),
    ("sxm", "SXM"),
)
_SXM_GENERATION = {"A100": "SXM4", "H100": "SXM5", "H200": "SXM5", "V100": "SXM2"}
_NVL_MEMORY = {"H100": 94, "H200": 141}  # an NVL part without a size written
# The memory sizes (GB) each product keyed by variant ships in: a system description's
# ``accelerator_memory_capacity`` decides the variant a bare name leaves open (v0.7's
# Inspur NF5488 writes "NVIDIA A100" and "40G": the A100-SXM4-40GB, as the 80 GB part
# did not exist yet), and only a size among these does.
_VARIANT_MEMORY = {"V100": (16, 32), "A100": (40, 80), "H100": (80, 94, 96), "H200": (141,)}
_CAPACITY = re.compile(r"(\d+)\s*(?:g|gb|gib)\b", re.I)
_POWER = re.compile(r"\((\d+)\s*w\)")  # a board power as names write it: "(450W)"
_FAMILY_POWER = re.compile(r"-(\d+)W$")  # the board power a family adds to its part's name


def own_fabric(name: str) -> str | None:
    """The inter-chip fabric of its own the accelerator ``name`` means has (``ICI`` of a
    TPU, ``RoCE`` of a Gaudi: ``Product.fabric``), None where it has none or is unknown."""
    product = normalise_accelerator(name).product
    return next((p.fabric for p in _PRODUCTS if p.product == product and p.fabric), None)


def memory_of_capacity(product: str | None, capacity: str) -> int | None:
    """The memory (GB) a description's ``accelerator_memory_capacity`` gives, where it is
    one of ``product``'s variants (``40G`` of an A100: 40); else None."""
    found = _CAPACITY.search(capacity)
    sizes = _VARIANT_MEMORY.get(product or "", ())
    return int(found.group(1)) if found and int(found.group(1)) in sizes else None


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
    return _VENDORS.get(re.split(r"[^a-z]", lowered, maxsplit=1)[0])  # its first word


def _unknown(name: str) -> Accelerator:
    """An unrecognised name as written, the vendor once (``NVIDIA NVIDIA X`` -> ``NVIDIA
    X``); no product, variant or family guessed."""
    words = name.split()
    vendor = _vendor_of(name.lower())
    while vendor and len(words) > 1 and _VENDORS.get(words[0].lower()) == vendor:
        words = words[1:]
    rest = " ".join(words)
    return Accelerator(vendor, None, None, None, " ".join(filter(None, (vendor, rest))), False)


def no_accelerator(name: str | None) -> bool:
    """Whether an ``accelerator_model_name`` names none (empty, ``N/A``)."""
    text = " ".join(str(name or "").split()).lower()
    return text in ("", "n/a", "na", "none", "null", "-")


def _written(lowered: str, product: Product) -> tuple[str | None, int | None]:
    """The form factor and memory (GB) a lower-cased name writes, None where it leaves
    them to the product's default (``a100`` writes neither, ``a100 pcie`` the form)."""
    form = next((f for key, f in _FORMS if re.search(rf"\b{key}|{key}\b|-{key}", lowered)), None)
    if form == "SXM" or (form is None and "hbm3" in lowered and product.product == "H100"):
        form = _SXM_GENERATION.get(product.product, "SXM")
    return form, next((int(m) for m in re.findall(r"(\d+)\s*gb", lowered)), None)


def other_variants(name: str, family: str, valid: list[str]) -> list[str]:
    """The families of ``valid`` other than ``family`` that ``name`` could mean as well:
    the same product, with the form factor and memory ``name`` writes where it writes them
    (``A100`` beside A100-SXM4-80GB: A100-PCIe-80GB and A100-SXM4-40GB; ``A100 40GB``:
    only the 40 GB parts), so a short name read as the catalogue's default part names the
    parts it was not read as."""
    asked, lowered = normalise_accelerator(name), " ".join(name.split()).lower()
    product = next((p for p, found in _MATCHERS if found(lowered)), None)
    if not asked.known or product is None:
        return []
    form, memory = _written(lowered, product)
    out = []
    for other in valid:
        part = normalise_accelerator(other)
        if other == family or not part.known or part.product != asked.product:
            continue
        if (form is None or part.form_factor == form) and memory in (None, part.memory_gb):
            out.append(other)
    return sorted(out)


def normalise_accelerator(name: str | None, hint: str = "", capacity: str = "") -> Accelerator:
    """The vendor, product, variant and family of an ``accelerator_model_name``;
    ``hint`` (the system id and name) gives the version a bare ``TPU`` leaves out, and
    ``capacity`` (the description's ``accelerator_memory_capacity``) the memory a name
    that writes none leaves to the product's default."""
    text = " ".join(str(name or "").split())
    if no_accelerator(text):
        return Accelerator(None, None, None, None, UNKNOWN_FAMILY, False)
    lowered = text.lower()
    if _BARE_TPU.fullmatch(lowered):
        version = _TPU_IN_HINT.search(hint.lower())
        if version is None:
            return _unknown(text)
        return normalise_accelerator(f"TPU-{version.group(1)}")
    product = next((p for p, found in _MATCHERS if found(lowered)), None)
    if product is None:
        return _unknown(text)
    form, written = _written(lowered, product)
    if written is None:
        written = memory_of_capacity(product.product, capacity)
    form = form or product.form_factor
    memory = written or product.memory_gb  # a written size is one of the variants' (> 0)
    if written is None and form == "NVL":
        memory = _NVL_MEMORY.get(product.product, memory)
    family = product.family or product.product
    if product.keyed_by_variant:
        family = f"{product.product}-{form}-{memory}GB"
        power = _POWER.search(lowered)
        if power and board_power_w(product.product, form, memory) is None:
            family = f"{family}-{power.group(1)}W"
    return Accelerator(product.vendor, product.product, form, memory, family, True)


def family_power_w(family: str) -> tuple[str, float | None]:
    """A family's part (its name without the power it adds) and that part's board power
    (W): the power the family writes (``A100-SXM4-80GB-500W`` -> ``A100-SXM4-80GB``, 500),
    else the catalogue part's (``A100-SXM4-80GB`` -> 400; None where it has none)."""
    written = _FAMILY_POWER.search(family)
    if written:
        return family[: written.start()], float(written.group(1))
    part = normalise_accelerator(family)
    if not part.known or part.product is None:
        return family, None
    return family, board_power_w(part.product, part.form_factor, part.memory_gb)


def board_power_w(product: str, form: str | None, memory_gb: int | None) -> float | None:
    """The board power (W) of the catalogue's part (``data/devices.csv``) of ``product``,
    ``form`` and ``memory_gb``; None where the catalogue has no such part (V100 SXM3)."""
    return next(
        (
            d.board_power_w
            for d in devices()
            if (d.product, d.form_factor, d.memory_gib) == (product, form, memory_gb)
        ),
        None,
    )


GPU_VENDORS = ("NVIDIA", "AMD")


def gpu_products() -> list[str]:
    """The catalogue's GPUs (NVIDIA's and AMD's) by product name, newest first."""
    return [p.product for p in _PRODUCTS if p.vendor in GPU_VENDORS]


def generation(family: str) -> str:
    """The hardware generation of an accelerator family: its product's architecture
    (``Product.architecture``: A100-SXM4-40GB and A100-PCIe-80GB are both Ampere, B200 and
    GB200 both Blackwell), else the product itself (TPU-v5p, Gaudi2), else the family's
    name (one the catalogue does not know is a generation of its own)."""
    product = normalise_accelerator(family).product
    known = next((p for p in _PRODUCTS if p.product == product), None)
    if known is None:
        return family
    return known.architecture or known.product


def accepted_products(gpus_only: bool = False) -> list[str]:
    """The catalogue's product names in its order (GPUs only where ``gpus_only``): the
    names a device option reads as an accelerator (``names.resolve_device``)."""
    return gpu_products() if gpus_only else [p.product for p in _PRODUCTS]


def products_read_as(families: Iterable[str]) -> list[str]:
    """The catalogue's product names (``H100``) that read as one of ``families`` (its
    default part, H100-SXM5-80GB): the short names a user types for them."""
    wanted = set(families)
    return [p.product for p in _PRODUCTS if normalise_accelerator(p.product).family in wanted]


def accelerator_family(model: str | None) -> str:
    """The family key of an accelerator name (``normalise_accelerator(...).family``)."""
    return normalise_accelerator(model).family
