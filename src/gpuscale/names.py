"""What people type for a benchmark, accelerator family, ruleset or division, resolved to
the names in the data.

One resolver for every command: a benchmark is found by its workload name, any of its
folder names, its display name (the report's headings), the study's names, or an
unambiguous prefix of any of them, ignoring case, spaces, hyphens and underscores
(``Llama2 70B LoRA``, ``llama2``, ``llama2_70b`` and ``llama2-70b-lora`` are one
workload; a name read so is said: ``workload_read_as``). A choice (a division, a
format, a column, a family the catalogue does not know) is read whatever its case but
never from an abbreviation, which is refused naming the choices it begins. A name that
matches nothing, or more than one, is an error that lists the valid names and the closest.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from gpuscale.quantities import agreeing, joined, noun_for
from gpuscale.tables import RENAMED, STUDY_WORKLOADS, WORKLOADS, display_name, workload_of
from gpuscale.tables.refusals import as_keywords, as_options, ref, spelled
from gpuscale.tables.requests import FieldError, clipped, given_twice
from gpuscale.tables.spelling import did_you_mean, in_full, suggested
from gpuscale.tables.workloads import (
    TARGETS,
    default_workloads,
    workload_notes,
    workloads_by_round,
    workloads_in,
)

if TYPE_CHECKING:
    import pandas as pd

# Names the study and people use that are no prefix of a workload's own names (``_key``
# already reads "DLRM DCNv2" and "r-gat" as dlrm_dcnv2 and rgat, ``RENAMED`` gnn as rgat;
# BERT-large is the model MLCommons' results tables name for bert).
_ALIASES: dict[str, str] = {
    "llama2 lora": "llama2_70b_lora",
    "sd": "stable_diffusion",
    "bert large": "bert",
}


# The Python call that gives another round's data, ``{round}`` its ``load_round('v4.0')``:
# each API function passes its own (``plan(..., scores={round}.scores)``).
ROUND_CALL = "{round}.scores"


def repr_call(function: str, argument: str) -> str:
    """``load_round('v4.0')``: a one-argument call as Python writes it."""
    return f"{function}({argument!r})"


class UnknownNameError(ValueError):
    """A name that matches nothing (or several things); the message lists the valid ones.
    ``typed`` is the name as given and ``why`` the message without it, where known: how
    the command line says it (:meth:`as_option`) and a request's field (:meth:`as_field`).
    A phrase the two readers say differently (``tables.refusals.spelled``: ``--round``, or
    ``load_round('v4.1')``) reads as Python's in the message, the command line's in
    :meth:`as_option`."""

    def __init__(self, message: str, *, typed: str | None = None, why: str | None = None):
        super().__init__(as_keywords(message))
        self.typed, self.why, self.said = typed, why, message

    def as_option(self, option: str) -> str:
        """``--benchmark bret: unknown benchmark (did you mean 'bert'?); valid: ...``."""
        if self.typed is None or self.why is None:
            return f"{option}: {as_options(self.said)}"
        return f"{option} {clipped(self.typed)}: {as_options(self.why)}"

    def as_field(self, field: str) -> UnknownFieldError:
        """The same refusal as a request's :class:`FieldError` of ``field`` (the CLI then
        names its option), still an :class:`UnknownNameError`."""
        return UnknownFieldError(field, self.typed, self.why or self.said)


class UnknownFieldError(FieldError, UnknownNameError):
    """A request's field naming nothing known: a :class:`FieldError` and an
    :class:`UnknownNameError` both."""


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", text.lower())


def _labels(workload: str, folders: Iterable[str]) -> set[str]:
    """Every way of writing one workload."""
    labels = {workload, display_name(workload), *folders}
    labels |= {old for old, new in RENAMED.items() if new == workload}
    labels |= {alias for alias, target in _ALIASES.items() if target == workload}
    return {_key(label) for label in labels}


def _fail(what: str, name: str, valid: list[str], offered: Iterable[str] = ()) -> UnknownNameError:
    """``name`` names no ``what``: the closest of ``valid`` and ``offered`` (other names
    read as one of ``valid``, e.g. ``H100``) said, then ``valid``."""
    hint = f"{did_you_mean(name, [*valid, *offered])}; valid: {', '.join(valid)}"
    said = f"unknown {what} {clipped(name)!r}{hint}"
    return UnknownNameError(said, typed=name, why=f"unknown {what}{hint}")


# Characters of a shell pattern: a name holding one is refused, never read as the name
# left without them (``H100*`` was read as H100 in silence, as if it meant every H100)
_PATTERN = re.compile(r"[*?\[\]]")


def _no_pattern(name: str, what: str, valid: Iterable[str]) -> None:
    """Raises :class:`UnknownNameError` where ``name`` holds a pattern's characters: a
    name is matched whole, never as a pattern."""
    if _PATTERN.search(str(name)):
        why = (
            f"a pattern (*, ? or [...]) is not read: give one {what} by its name; valid: "
            f"{', '.join(sorted(valid))}"
        )
        raise UnknownNameError(f"{clipped(str(name))!r}: {why}", typed=name, why=why)


def resolve_workloads(
    names: Iterable[str],
    available: Iterable[str] | None = None,
    left_out: Mapping[str, str] | None = None,
    call: str = ROUND_CALL,
) -> list[str]:
    """The workloads meant by ``names``, in the order asked, without repeats.

    ``available``: the workloads of the data at hand, as its scores name them (a round's
    ``ssd`` folder is ``ssd_resnet34`` in v1.1; a folder name is read by ``workload_of``,
    the cross-round name) (default: every workload gpuscale knows). ``study`` is the
    study's four workloads (those present), ``all`` every available one. ``left_out``:
    {workload the data holds but the caller left out: why, e.g. "its 6 results are open
    division; ..."}, said instead of "not in the rounds loaded". ``call``: the Python
    call that gives another round's data (``{round}``: its ``load_round(...)``), said
    where a bundled round holds a workload absent here. Raises :class:`UnknownNameError`.
    """
    folders: dict[str, set[str]] = {}
    for folder in available if available is not None else WORKLOADS:
        folders.setdefault(workload_of(folder), set()).add(folder)
    labels = {w: _labels(w, f) for w, f in folders.items()}
    valid = sorted(folders)
    out: list[str] = []
    for raw in names:
        _no_pattern(raw, "benchmark", valid)
        key = _key(raw)
        if key == "study":
            found = [w for w in STUDY_WORKLOADS if w in folders]
            if not found:
                why = (
                    f"none of the study's workloads ({', '.join(STUDY_WORKLOADS)}) is in "
                    f"this data; valid: {', '.join(valid)}"
                )
                raise UnknownNameError(why, typed=raw, why=why)
        elif key == "all":
            found = valid
        else:
            # a workload's own name, as written, is never ambiguous: a folder differing from
            # it only in case (``BERT`` beside ``bert``) would otherwise block both
            found = (
                (available is not None and _two_meanings(raw, folders))
                or ([raw] if raw in folders else [])
                or _matches(key, labels)
            )
            if len(found) != 1:
                if len(found) > 1:
                    why = f"ambiguous: {', '.join(sorted(found))}; be more specific"
                    raise UnknownNameError(f"{raw!r} is {why}", typed=raw, why=why)
                raise (
                    _absent(raw, valid, left_out or {}, call)
                    if available is not None
                    else _fail("benchmark", raw, valid)
                )
        out.extend(w for w in found if w not in out)
    return out


def _two_meanings(raw: str, folders: Mapping[str, set[str]]) -> list[str]:
    """Nothing, or raises where ``raw`` is a benchmark folder name that held two workloads
    (``TARGETS``: ``ssd`` is SSD-ResNet34 up to ruleset 1.1.0, RetinaNet from 2.0.0) and
    the data at hand holds both (without data, ``ssd`` is today's, RetinaNet): read as
    either, the other would be dropped with only a note (v0.7 with v3.0 loaded read
    `-b ssd` as RetinaNet alone), so each is asked for by its own name."""
    meanings = {
        w for folder, targets in TARGETS.items() if _key(folder) == _key(raw) for w, _ in targets
    }
    held = sorted(meanings & set(folders))
    if len(held) < 2:
        return []
    both = joined(f"{w} ({display_name(w)})" for w in held)
    how = spelled(joined((f"-b {w}" for w in held), "or"), joined(map(repr, held), "or"))
    why = f"ambiguous here: the rounds loaded hold both {both}; give {how}"
    raise UnknownNameError(f"{raw!r} is {why}", typed=raw, why=why)


def workload_read_as(typed: str, workload: str, rounds: str = "") -> str:
    """``'dlrm' read as dlrm_dcnv2 (DLRM DCNv2, v3.0-v5.0)`` where ``typed`` is neither
    the workload's name nor its display name (an alias, an old name, a prefix), else "";
    ``rounds``: those of the data that hold it, in words."""
    if _key(typed) in {_key(workload), _key(display_name(workload))}:
        return ""
    return f"{typed!r} read as {workload} ({display_name(workload)}{rounds and ', ' + rounds})"


def _matches(key: str, labels: dict[str, set[str]]) -> list[str]:
    """The workloads a typed key names: exactly, else by an unambiguous prefix; none for
    an empty key (`伯特` keeps no letter: unknown, never a prefix of every workload)."""
    if not key:
        return []
    exact = [w for w, ls in labels.items() if key in ls]
    return exact or [w for w, ls in labels.items() if any(s.startswith(key) for s in ls)]


def _absent(
    raw: str, valid: list[str], left_out: Mapping[str, str], call: str = ROUND_CALL
) -> UnknownNameError:
    """The error for a name the data at hand lacks: a workload gpuscale knows is named,
    why it is absent (``left_out``'s reason, else not in the rounds loaded) and the
    bundled rounds that hold it, with the exact Python ``call`` to give one (the command
    line: its ``--round``); any other name is unknown (the closest said)."""
    known = _matches(_key(raw), {w: _labels(w, ()) for w in WORKLOADS})
    if len(known) != 1:
        return _fail("benchmark", raw, valid)
    workload = known[0]
    # lazy: the bundled tables (pandas), read only to say where a missing workload is
    from gpuscale.mlperf.bundled import bundled_workloads

    rounds = [r for r, held in bundled_workloads().items() if workload in held]
    where = "no bundled round has it " + spelled(
        "(give a round that does by name, --round vX.Y, or its folder or archive as a path)",
        f"(give a round that does: {call.format(round=repr_call('load_round', 'vX.Y'))}, "
        f"or {call.format(round='read_round(PATH)')} for its folder or archive)",
    )
    if rounds:
        where = (
            f"it is in the bundled {noun_for(len(rounds), 'round')} {joined(rounds)} "
            + spelled(
                f"(--round {rounds[-1]})",
                f"({call.format(round=repr_call('load_round', rounds[-1]))})",
            )
        )
    absent = left_out.get(workload, "not in the rounds loaded")
    # an empty table (every row filtered out) has no workload to offer: said so, not a
    # list left empty
    here = f"valid here: {', '.join(valid)}" if valid else "the data here holds no workload"
    why = f"{absent}; {where}; {here}"
    return UnknownNameError(f"{display_name(workload)} ({raw!r}) is {why}", typed=raw, why=why)


def resolve_choice(value: str, valid: Iterable[str], what: str, offered: Iterable[str] = ()) -> str:
    """The one entry of ``valid`` that ``value`` names (case and punctuation ignored);
    :class:`UnknownNameError` otherwise, an abbreviation too (``-f j``, ``--division clo``:
    refused, the names it begins said; a benchmark's prefix is read, and said, by
    :func:`resolve_workloads`), the closest of ``valid`` and ``offered`` (other names
    read as one of ``valid``) said."""
    choices = sorted(set(valid))
    key = _key(value)
    found = [c for c in choices if _key(c) == key]
    if len(found) == 1:
        return found[0]
    begun = [c for c in choices if key and _key(c).startswith(key)]
    if begun and not found:  # refused, said: what a prefix means changes as choices come
        read = sorted({o for o in offered if _key(o).startswith(key)} - set(begun))
        short = in_full(begun, read)
        said = f"unknown {what} {clipped(value)!r}{short}"
        raise UnknownNameError(said, typed=value, why=f"unknown {what}{short}")
    if len(found) > 1:
        why = f"ambiguous {what}: {', '.join(found)}"
        raise UnknownNameError(
            f"{what} {value!r} is ambiguous: {', '.join(found)}", typed=value, why=why
        )
    raise _fail(what, value, choices, offered)


def resolve_family(
    name: str, valid: list[str], each: str = "one accelerator at a time: run it once for each"
) -> tuple[str, str]:
    """The accelerator family ``name`` means among ``valid`` (exact names, the catalogue;
    else ``UnknownNameError``, an abbreviation too), and a note when it was read
    (``H100`` -> ``H100-SXM5-80GB``, the catalogue's default part) naming the other parts
    of ``valid`` it could mean and how to pick one (``accelerators.other_variants``).
    Where the default part ran no result and ``name`` names exactly one part of ``valid``
    (``A100`` where only A100-SXM4-40GB ran), that part is read, said; two or more: refused.
    A family the catalogue knows that ran nothing here is refused, offering the family of
    ``valid`` it begins or is close to (``Gaudi``: Gaudi2), as a typo is offered one.
    A value naming several (``H100,B200``, ``B200 MI300X``) is refused, ``each`` saying
    how to ask for them: read as one, it was the last family it named."""
    # lazy: the accelerator catalogue, only when a family is typed (not at the CLI's start)
    from gpuscale.hardware.accelerators import (
        normalise_accelerator,
        other_variants,
        products_read_as,
    )

    _no_pattern(name, "accelerator family", valid)
    exact = [v for v in valid if _key(v) == _key(name)]
    if exact:
        return exact[0], ""
    if (several := _families_named(name)) is not None:
        raise UnknownNameError(f"{name!r}: {several}; {each}", typed=name, why=f"{several}; {each}")
    if (no_part := _memory_no_part_has(name, valid)) is not None:
        raise UnknownNameError(f"{name!r}: {no_part}", typed=name, why=no_part)
    known = normalise_accelerator(name)
    part = None if known.known else _device_part(name)
    if part is not None:  # `4090`, as advise reads it
        known = normalise_accelerator(part)
    if part is not None and not known.known:  # a catalogued device no MLPerf round ran
        why = (
            f"the device catalogue's {part} ran no MLPerf result in the rounds loaded "
            f"({_own_devices(part)}); valid here: {', '.join(valid)}"
        )
        raise UnknownNameError(f"{name!r}: {why}", typed=name, why=why)
    others = other_variants(name, known.family, valid)
    if known.known and known.family not in valid and len(others) == 1:  # the one part ran
        said = (
            f"{name!r} read as the accelerator family {others[0]}, the one part it names "
            f"in these results (the catalogue's default part, {known.family}, ran none)"
        )
        return others[0], said
    if known.known and known.family not in valid:  # a real family these results lack
        where, meant = f"valid here: {', '.join(sorted(valid))}", ""
        ran = "ran no result in the rounds loaded"
        if others:
            where = f"{name!r} could mean {joined(others)} here: give the full name"
        else:  # a real product, never offered another by its spelling (V100 is no H100)
            meant = _begun(name, valid)  # `Gaudi` where only Gaudi2 ran: Gaudi2 offered
            ran = "is a known accelerator with no MLPerf result in the rounds loaded"
            where = f"{_own_devices(_advised_as(name, known.family))}; {where}"
        # a name read as another (`MI250`: the catalogue's MI250X, `V100`: its default
        # part) is said so, as an answer says how it read the name
        read = _key(name) != _key(known.family)
        who = f"{name!r} read as the accelerator family {known.family}, which" if read else ""
        why = (
            f"{who or f'accelerator family {known.family}'} {ran}{meant}; "
            f"another round may: {_OTHER_ROUND}; {where}"
        )
        message = why if read else why.replace(known.family, f"{known.family} ({name!r})", 1)
        raise UnknownNameError(message, typed=name, why=why)
    # a typo is offered the short name it was likely meant as (H1000: 'H100', not 'A10G')
    found = (
        known.family
        if known.known
        else resolve_choice(name, valid, "accelerator family", products_read_as(valid))
    )
    said = f"{name!r} read as the accelerator family {found}"
    if others:  # one part picked among several the results have: say which, and the others
        said += (
            f", the catalogue's default part; {name!r} could also mean {joined(others)} in "
            f"these results: give the full name (e.g. {others[0]!r}) to use "
            f"{agreeing(len(others), 'that', 'one of those')} instead"
        )
    return found, said


# Where another round is read: the command line's options, Python's readers.
_OTHER_ROUND = spelled(
    "--round, or a raw round as a path",
    "its scores (load_round('vX.Y').scores, or read_round(PATH).scores for a raw round)",
)


def _begun(name: str, valid: list[str]) -> str:
    """`` (did you mean 'Gaudi2'?)`` for the families of ``valid`` that ``name`` begins
    (case and punctuation ignored: ``Gaudi`` of Gaudi2, ``A10`` of A10G); "" where it
    begins none. A number is never begun by fewer of its digits: H20 is no H200, L4 no
    L40. A known product is offered no family by its spelling alone: V100 is no H100, B300
    no B200."""
    key = _key(name)

    def begins(family: str) -> bool:
        rest = _key(family)[len(key) :] if _key(family).startswith(key) else None
        return rest is not None and not (key[-1].isdigit() and rest[:1].isdigit())

    begun = [v for v in sorted(valid) if key and begins(v)]
    return suggested(begun, upto=len(begun)) if begun else ""


def _advised_as(name: str, family: str) -> str:
    """``name`` as typed where ``advise --device-name`` reads it (``V100``), else the
    catalogue's part it means, else ``family``."""
    try:
        return resolve_device(name.strip(), "device_name") or family
    except FieldError:
        return _device_part(name) or family


def _own_devices(device: str) -> str:
    """``for your own V100s, time a step and run gpuscale advise --device-name V100``:
    where a device the rounds lack is advised on (its catalogued power, peak, memory)."""
    advise = spelled(
        f"gpuscale advise --device-name {shlex.quote(device)}",
        f"gpuscale.advise(device_name={device!r}, ...)",
    )
    return f"for your own {device}s, time a step and run {advise}"


def _families_named(name: str) -> str | None:
    """``names 2 accelerator families, H100-SXM5-80GB and B200`` where ``name`` lists
    several (split at commas, semicolons, slashes, plus signs and spaces: each word a
    family the catalogue knows, two of them differing; or two or more names between
    commas), else None (``RTX A5000`` and ``H100 SXM5 80GB`` name one)."""
    from gpuscale.hardware.accelerators import normalise_accelerator  # lazy: the catalogue

    listed = [p.strip() for p in re.split(r"[,;]", name) if p.strip()]
    words = [w for w in re.split(r"[,;/+\s]+", name) if w]
    known = [normalise_accelerator(w) for w in words]
    families = list(dict.fromkeys(k.family for k in known if k.known))
    if len(families) < 2 and len(listed) < 2:
        return None
    if len(families) < 2:  # `H100,foo`: a list, whatever its names are
        return f"names {len(listed)} accelerators, {joined(listed, 'and')}"
    return f"names {len(families)} accelerator families, {joined(families, 'and')}"


def _memory_no_part_has(name: str, valid: list[str]) -> str | None:
    """Why ``name`` names no part, where it writes a memory that no part of its product has,
    in the device catalogue or among ``valid`` (``GH200 144GB``, ``MI300X 256GB``): the
    parts of that product both hold, said; None where it writes no memory, a product the
    catalogue lacks, or a memory a part has. A plan sizes the model state against the
    family's memory: a memory typed is never dropped for another part's."""
    # lazy: the catalogues, only when a family is typed
    from gpuscale.hardware.accelerators import normalise_accelerator
    from gpuscale.hardware.catalogue import device
    from gpuscale.hardware.device_names import memory_written_gb, parts_named

    if _device_part(name):  # a part's own name or alias (GH200 480GB: NVML's, of the 96 GB)
        return None
    memory, parts = memory_written_gb(name), parts_named(name)
    if memory is None or not parts or any(device(p).memory_gib == memory for p in parts):
        return None
    product = device(parts[0]).product
    ran = [v for v in valid if normalise_accelerator(v).product == product]
    if any(normalise_accelerator(v).memory_gb == memory for v in ran):
        return None
    held = [p if re.search(r"\d+GB", p) else f"{p} ({device(p).memory_gib:g} GB)" for p in parts]
    return (
        f"no {product} part has {memory:g} GB: the device catalogue holds {joined(held, 'and')}; "
        f"these results hold {joined(ran, 'and') if ran else f'no {product}'}; "
        "name a part that exists"
    )


def _device_part(name: str) -> str | None:
    """The device catalogue's part ``name`` means (``4090``: RTX 4090, as ``advise
    --device-name`` reads it), None where it means none: every command reads a device
    name alike."""
    from gpuscale.hardware.device_names import UnknownDevice, resolve  # lazy: the catalogue

    try:
        return resolve(name).device.name
    except UnknownDevice:
        return None


def _catalogue_part(
    name: str | None, field: str, what: str, rule: str, gpus_only: bool
) -> str | None:
    """``name`` as typed when the device catalogue (``hardware.device_names``, the one
    resolver of device names) reads it as a part, or MLPerf's accelerator names know it (an
    A10G, an H800: no datasheet facts; a GPU where ``gpus_only``); else ``field``'s
    :class:`FieldError`: ``what``, the closest name, ``rule`` (``{known}``: the products).
    None stays None (no device named)."""
    # lazy: the device catalogue, only when a device is named (not at the CLI's start)
    from gpuscale.hardware.accelerators import GPU_VENDORS, accepted_products, normalise_accelerator
    from gpuscale.hardware.catalogue import products
    from gpuscale.hardware.device_names import UnknownDevice, parts_named, resolve, unread_words

    if name is None:
        return None
    try:
        resolve(name)
        unread = unread_words(name)
        if unread:  # read as its product's default part, though it writes more
            said = joined(list(parts_named(name)), "or")
            words = joined([repr(w) for w in unread], "and")
            raise FieldError(
                field,
                name,
                f"{what}: {words} is no form factor or memory of a part; name one ({said})",
            )
        return name
    except UnknownDevice as missed:
        parts = parts_named(name)
        if parts:  # a catalogued product at a memory or form it has not: no facts of it
            said = joined(list(parts), "or")
            raise FieldError(
                field,
                name,
                f"{what}: no catalogued part has the memory or form it writes; "
                f"name the part ({said})",
            ) from None
        known = normalise_accelerator(name)
        if known.known and (known.vendor in GPU_VENDORS or not gpus_only):
            return name
        # ``{also}``: the names read as MLPerf's accelerators beyond the catalogue's products
        catalogued = products()
        also = [p for p in accepted_products(gpus_only) if p not in catalogued]
        rule = rule.format(known=", ".join(catalogued), also=", ".join(also))
        raise FieldError(field, name, what + suggested(missed.closest) + rule) from None


def resolve_gpu(name: str | None) -> str | None:
    """``name`` (``--gpu``: ``A100``, ``NVIDIA A100-PCIE-40GB``) as typed where it names a GPU
    (``_catalogue_part``); None stays None; else ``--gpu Z999: not a GPU in the hardware
    catalogue ...`` with the closest name."""
    what = "not a GPU in the hardware catalogue"
    rule = "; known: {known}; and, read as MLPerf names them, with no link facts: {also}"
    return _catalogue_part(name, "gpu", what, rule, True)


def resolve_device(name: str | None, field: str = "device_name") -> str | None:
    """``name`` (``advise --device-name``: ``H100 SXM``, ``4090``) as typed where it names a
    device (``_catalogue_part``; ``RTX A1000`` is no A100); None stays None; else the
    field's :class:`FieldError` saying "unknown device", with the closest name."""
    rule = (
        ": not in the hardware catalogue (known: {known}; and, with no peak or board power, "
        "memory only where data/accelerator_memory.csv lists it: {also}); for another device "
        f"leave it out and give its power ({ref('power_w')})"
    )
    return _catalogue_part(name, field, "unknown device", rule, False)


def resolve_ruleset(value: str) -> str:
    """An MLPerf ruleset as mlperf-logging names it (``4.1.0``) from what people type
    (``4.1``, ``v4.1``, ``V4.1.0``, ``training_4.1.0``); checked against the rulesets the
    installed package ships when it is installed. :class:`UnknownNameError` otherwise."""
    # lazy: gpuscale.mlperf loads the round reader (pandas), which the CLI's start does not need
    from gpuscale.mlperf.rules import known_rulesets

    match = re.fullmatch(r"(?:training_)?v?(\d+)\.(\d+)(?:\.(\d+))?", value.strip().lower())
    known = known_rulesets()
    if match is None:
        raise _fail("ruleset", value, list(known) or ["e.g. 4.1.0"])
    major, minor, patch = match.group(1), match.group(2), match.group(3) or "0"
    ruleset = f"{int(major)}.{int(minor)}.{int(patch)}"
    if known and ruleset not in known:
        raise _fail("ruleset", value, list(known))
    return ruleset


def resolve_workload(
    name: str, scores: pd.DataFrame, parameter: str = "benchmark", call: str = ROUND_CALL
) -> str:
    """The one workload of a scores table that ``name`` means, read as
    :func:`resolve_workloads` reads it (``BERT``, ``dlrm``: DLRM DCNv2; ``call`` as it
    takes it); ValueError when it means several (``study``, ``all``)."""
    found = resolve_workloads([name], workloads_in(scores), call=call)
    if len(found) != 1:
        raise ValueError(
            f"{parameter}={name!r} names {len(found)} workloads ({', '.join(found)}); "
            "give one of them"
        )
    return found[0]


def choose_workloads(
    scores: pd.DataFrame, benchmark: Sequence[str] | None, default: str = "all"
) -> tuple[list[str], list[str]]:
    """The workloads ``--benchmark`` names in a scores table (without it: every one, or
    with ``default="study"`` :func:`default_workloads`) and what to tell the reader
    (:func:`workload_notes`); :class:`UnknownNameError` for a name that is none."""
    available = workloads_in(scores)
    if not benchmark and default != "study":
        return resolve_workloads(["all"], available), []
    by_round = workloads_by_round(scores)
    if not benchmark:
        chosen = default_workloads(by_round)
        return chosen, workload_notes(by_round, chosen, asked=False)
    chosen = resolve_workloads(benchmark, available)
    if all(b.strip().lower() == "all" for b in benchmark):
        return chosen, []  # every workload of each round: none is lacking
    read = workloads_read_as(benchmark, available)
    return chosen, [*read, *workload_notes(by_round, chosen, asked=True)]


def workloads_read_as(names: Sequence[str], available: Iterable[str]) -> list[str]:
    """For each of ``names`` read as another workload's name (a prefix, an alias: `ber`,
    `llama2`), how it was read (:func:`workload_read_as`); none for an exact name,
    ``study`` or ``all``."""
    valid = list(available)
    read = (
        workload_read_as(n, resolve_workloads([n], valid)[0])
        for n in names
        if _key(n) not in ("study", "all")
    )
    return [said for said in read if said]


def asked_workloads(scores: pd.DataFrame, benchmark: Sequence[str] | None) -> list[str] | None:
    """The workloads of ``scores`` that ``--benchmark`` names (what the notes on a round
    read are limited to); None where it names none (every workload is then read) or a
    name that is none here, which the command refuses itself (:func:`choose_workloads`)."""
    if not benchmark or any(b.strip().lower() == "all" for b in benchmark):
        return None
    try:
        return resolve_workloads(benchmark, workloads_in(scores))
    except UnknownNameError:
        return None


def resolve_choices(values: Sequence[str] | None, valid: Iterable[str], what: str) -> list[str]:
    """Each of ``values`` resolved by :func:`resolve_choice` (none given: none)."""
    return [resolve_choice(v, valid, what) for v in values or ()]


def resolve_columns(
    asked: str | None,
    default: list[str],
    valid: Iterable[str],
    renamed: Mapping[str, str] | None = None,
) -> list[str]:
    """``--columns`` (comma-separated, in order) resolved against a table's columns (any
    case, no abbreviation), else ``default``; :class:`UnknownNameError` for one that is
    none, offering the column ``renamed`` (``TableView.renamed``) gives a name other
    tables use (``samples_to_converge``: ``epochs_to_converge`` where counts are epochs)."""
    if asked is None:
        return default
    names = [c.strip() for c in asked.split(",")]
    if not all(names):  # `a,,b` and `,` are typos, not `a,b` and no choice
        why = "an empty column name between commas (or at an end); give names such as "
        why += "system_name,speedup"
        raise UnknownNameError(f"--columns {asked!r}: {why}", typed=repr(asked), why=why)
    valid = list(valid)
    held = {_key(old): new for old, new in (renamed or {}).items() if new in valid}
    for name in names:
        if (new := held.get(_key(name))) and all(_key(v) != _key(name) for v in valid):
            hint = f": this table names its counts by their unit{suggested([new])}"
            said = f"unknown column {clipped(name)!r}{hint}"
            raise UnknownNameError(said, typed=name, why=f"unknown column{hint}")
    chosen = resolve_choices(names, valid, "column")
    if why := given_twice(chosen, "column"):  # a column asked twice is a typo, not shown twice
        raise UnknownNameError(f"--columns {asked!r}: {why}", typed=repr(asked), why=why)
    return chosen


def resolve_families(values: Sequence[str] | None, valid: list[str]) -> tuple[list[str], list[str]]:
    """Each of ``values`` read as :func:`resolve_family` reads it, and its notes."""
    each = spelled(
        "give each its own --family (--family H100 --family B200)",
        "give them as a list (families=['H100', 'B200'])",
    )
    found = [resolve_family(v, valid, each) for v in values or ()]
    # one family asked twice (H100 and H100-SXM5-80GB): a typo, refused as `-b bert -b bert`
    if twice := given_twice([family for family, _ in found], "family"):
        raise UnknownNameError(twice, typed=",".join(values or ()), why=twice)
    return [family for family, _ in found], [said for _, said in found if said]
