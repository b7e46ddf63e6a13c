"""What a person (or torch, or NVML) calls a device, resolved to one part of the catalogue.

One way for every command (``topo --gpu``, ``collectives --gpu``, ``advise --device-name``)
and every table read (peaks, board power, NVLink): the name is normalised (case, hyphens,
underscores and the vendor's words ``NVIDIA``, ``GeForce``, ``Tesla``, ``AMD``,
``Instinct`` dropped: ``NVIDIA GeForce RTX 4090``, ``rtx4090`` and ``4090`` are one), a
part's own name or alias is an exact match, else the product is found by its model number
(whole: ``A1000`` is no A100) and narrowed by the form factor (SXM, PCIe, NVL) and memory
(``80GB``) the name writes. Where that leaves several parts, the one read is the
product's default part (its SXM board), said as an assumption with the others
(``'H100' read as H100 SXM5 80GB ...; it could also be H100 PCIe 80GB or H100 NVL 94GB``).
A memory no part holds but the one its product was announced with
(``data/device_memory_announced.csv``: ``B200 192GB``, sold as 180 GB) reads as that part,
said. A name that matches nothing gets the closest names.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from gpuscale.hardware.catalogue import Device, announced, device, devices, products
from gpuscale.hardware.model_numbers import matcher
from gpuscale.quantities import joined
from gpuscale.tables.spelling import suggested

_VENDOR_WORDS = re.compile(
    r"\b(nvidia|geforce|tesla|amd|instinct|radeon|tensor core gpu|graphics card)\b"
)
_FORMS = (
    (re.compile(r"\b(sxm\d?|hgx|dgx)\b"), "SXM"),
    (re.compile(r"\bpcie\b"), "PCIe"),
    (re.compile(r"\bnvl\b"), "NVL"),
    (re.compile(r"\boam\b"), "OAM"),
)
_MEMORY = re.compile(r"\b(\d+)gb\b")
# words no part is told apart by: the memory's kind (HBM3, HBM2e), GPU, and a PCIe card's
# generation (Lambda's "H100 80GB PCIe Gen5": PCIe already says the form)
_MEMORY_KIND = re.compile(r"\b(hbm\w*|gpus?|gen\d)\b")


def normalised(text: str) -> str:
    """``text`` as the catalogue matches it: lower case, the vendor's words dropped,
    ``-`` and ``_`` as spaces, ``rtx4090`` as ``rtx 4090``, ``h100sxm`` as ``h100 sxm``,
    ``80 GB``, ``80G`` and ``80GiB`` as ``80gb``."""
    t = str(text).lower().replace("_", " ").replace("-", " ")
    t = re.sub(r"\(r\)|\(tm\)|[®™]", " ", t)
    t = _VENDOR_WORDS.sub(" ", t)
    t = re.sub(r"\brtx(?=[a-z0-9])", "rtx ", t)
    t = re.sub(r"(\d)(sxm\d?|pcie|nvl|hbm\w*)\b", r"\1 \2", t)
    t = re.sub(r"(\d+)\s*gb\b", r"\1gb", t)
    t = re.sub(r"(\d+)\s*(?:gib|g)(?=\s|$)", r"\1gb", t)  # 80GiB, 80G: 80 GB as written
    return " ".join(t.split())


@dataclass(frozen=True, slots=True)
class Resolved:
    """The part a name was read as; ``assumed`` the sentence saying what the name left
    open and how it was read ("" where the name names one part), ``others`` the parts it
    could also mean."""

    typed: str
    device: Device
    assumed: str = ""
    others: tuple[str, ...] = ()


class UnknownDevice(ValueError):
    """A name no part of the catalogue answers; ``closest`` the nearest names."""

    def __init__(self, typed: str, closest: list[str]) -> None:
        hint = suggested(closest)
        super().__init__(f"unknown device {typed!r}{hint}: not in the device catalogue")
        self.typed, self.closest = typed, closest


@functools.cache
def _matchers() -> tuple[tuple[Device, Callable[[str], re.Match[str] | None]], ...]:
    return tuple((d, matcher(d.match)) for d in devices())


@functools.cache
def _exact() -> dict[str, Device]:
    return {normalised(n): d for d in devices() for n in (d.name, *d.aliases)}


def _form_fits(written: str | None, device: Device) -> bool:
    if written is None:
        return True
    if written == "SXM":
        return device.form_factor.startswith("SXM")
    return device.form_factor == written


def _candidates(key: str) -> list[Device]:
    """The parts of the one product ``key`` names (the longest model-number match)."""
    spans: dict[str, int] = {}
    for part, found in _matchers():
        match = found(key)
        if match:
            spans[part.product] = max(spans.get(part.product, 0), match.end() - match.start())
    if not spans:
        return []
    product = max(spans, key=lambda p: spans[p])  # L40S over L40, first in file on ties
    return [d for d in devices() if d.product == product]


def _written(key: str) -> tuple[str | None, float | None]:
    form = next((f for pattern, f in _FORMS if pattern.search(key)), None)
    memory = _MEMORY.search(key)
    return form, float(memory.group(1)) if memory else None


def _assumption(typed: str, chosen: Device, others: list[Device], link: str = "") -> str:
    said = joined([d.name for d in others], "or")
    implied = f" the link {link} implies" if link else ""
    return (
        f"{typed!r} names no single part: read as {chosen.name}, the {chosen.form_factor} "
        f"part{implied}; it could also be {said}: name the part to use it"
    )


def resolve(typed: str) -> Resolved:
    """The part ``typed`` means (see the module docstring); :class:`UnknownDevice` with the
    closest names where none does."""
    found = find(typed)
    if found is None:
        raise UnknownDevice(typed, closest(typed))
    return found


def find(typed: str) -> Resolved | None:
    """The part ``typed`` means (see the module docstring), None where none does."""
    key = normalised(typed)
    exact = _exact().get(key)
    if exact is not None:
        return Resolved(typed, exact)
    parts = _candidates(key)
    form, memory = _written(key)
    fitting = [d for d in parts if _form_fits(form, d) and memory in (None, d.memory_gib)]
    if not fitting:
        return _as_announced(typed, parts, form, memory)
    if len(fitting) == 1:
        return Resolved(typed, fitting[0])
    default = next((d for d in parts if d.default_part), parts[0])
    chosen = next(
        (d for d in fitting if d is default),
        next((d for d in fitting if d.form_factor == default.form_factor), fitting[0]),
    )
    others = [d for d in fitting if d is not chosen]
    names = tuple(d.name for d in others)
    return Resolved(typed, chosen, _assumption(typed, chosen, others), names)


def on_link(found: Resolved, card: bool, link: str) -> Resolved:
    """``found`` read as a part of the kind the ``link`` its GPUs are on implies (``card``: a
    PCIe card, else a board on its fabric) where the part read is not of that kind and one
    the name could also mean is: ``H100`` on ``pcie-phb`` is the H100 PCIe 80GB (350 W),
    not the SXM5 board (700 W); of those, the one of the memory read, else the first in
    the catalogue; said as its assumption. ``found`` itself where no other part fits."""
    if found.device.board != card:
        return found
    parts = [found.device, *map(device, found.others)]
    fitting = [d for d in parts if d.board != card]
    if not fitting:
        return found
    same = [d for d in fitting if d.memory_gib == found.device.memory_gib]
    chosen = (same or fitting)[0]
    others = [d for d in parts if d is not chosen]
    said = _assumption(found.typed, chosen, others, link)
    return Resolved(found.typed, chosen, said, tuple(d.name for d in others))


def _as_announced(
    typed: str, parts: list[Device], form: str | None, memory: float | None
) -> Resolved | None:
    """The part whose product was announced with the ``memory`` ``typed`` writes and is
    sold with another (``B200 192GB``: B200 180GB), said; None where no part was."""
    found = next(
        (
            a
            for a in announced()
            if a.part in parts and _form_fits(form, a.part) and a.memory_gib == memory
        ),
        None,
    )
    if found is None:
        return None
    part = found.part
    said = (
        f"{typed!r} writes the {found.memory_gib:g} GB the {part.product} was announced with; "
        f"the parts sold hold {part.memory_gib:g} GB: read as {part.name}"
    )
    return Resolved(typed, part, said)


def parts_named(typed: str) -> tuple[str, ...]:
    """The catalogue's parts of the product whose model number ``typed`` writes, whether or
    not one has the form factor and memory it writes (``H100 40GB``: the three H100
    parts); () where it writes no catalogued product."""
    return tuple(d.name for d in _candidates(normalised(typed)))


def unread_words(typed: str) -> tuple[str, ...]:
    """The words ``typed`` writes beside its product's model number that no form factor
    (SXM, PCIe, NVL, OAM), memory (``80GB``) or memory kind (``HBM3``) reads: ``H100 PCEI``
    -> ``("pcei",)``, a name :func:`find` reads as its product's default part though it
    meant another. () where it is a part's own name or alias, or writes no catalogued
    product."""
    key = normalised(typed)
    parts = [] if key in _exact() else _candidates(key)
    found = next((m for d, match in _matchers() if d in parts and (m := match(key))), None)
    if found is None:
        return ()
    rest = f"{key[: found.start()]} {key[found.end() :]}"
    for pattern, _ in _FORMS:
        rest = pattern.sub(" ", rest)
    return tuple(_MEMORY_KIND.sub(" ", _MEMORY.sub(" ", rest)).split())


def memory_written_gb(typed: str) -> float | None:
    """The memory ``typed`` writes (``GH200 144GB``: 144.0), None where it writes none."""
    return _written(normalised(typed))[1]


def lookup(name: str | None) -> Device | None:
    """The part ``name`` means, None where none does (a CPU, an unknown device): for
    names read from torch, NVML or a results file, where a miss is no error."""
    found = find(str(name)) if name and str(name).strip() else None
    return None if found is None else found.device


def closest(typed: str, n: int = 3) -> list[str]:
    """The catalogue's names nearest ``typed`` (products, parts and aliases; a name holding
    its model number first), at most ``n``."""
    key = normalised(typed)
    names = {normalised(x): x for x in (*products(), *(d.name for d in devices()))}
    number = re.search(r"\d{3,}", key)
    holding = [v for k, v in names.items() if number and number.group(0) in k]
    close = difflib.get_close_matches(key, list(names), n=n, cutoff=0.5)
    return list(dict.fromkeys([*holding, *[names[c] for c in close]]))[:n]


def assumption(name: str | None) -> str:
    """The sentence saying how ``name`` was read where it names no single part ("" where
    it names one, or none)."""
    found = find(str(name)) if name else None
    return "" if found is None else found.assumed
