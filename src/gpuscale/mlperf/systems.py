"""System description JSON files -> one normalised row each.

Submitters write the same hardware many ways (``NVIDIA H100-SXM5-80GB``,
``NVIDIA H100 80GB HBM3``, ``H100 NVL Tensor Core GPU (PCIe)``);
``gpuscale.hardware.accelerators`` maps them onto vendor, product, variant and one family
key per part so systems can be grouped by hardware; a name it does not know is a problem.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import orjson

from gpuscale.hardware.accelerators import (
    CPU_ONLY_FAMILY,
    Accelerator,
    accelerator_family,
    no_accelerator,
    normalise_accelerator,
)
from gpuscale.mlperf.mllog import utf16
from gpuscale.tables import Row, json_depth
from gpuscale.tables.json_depth import JSON

__all__ = ["SystemDescriptionError", "SystemRecord", "accelerator_family", "parse_system"]

# Columns of the ``systems`` table that come straight from the JSON (text as written).
_TEXT_FIELDS: dict[str, str] = {
    "accelerator_host_interconnect": "accelerator_host_interconnect",
    "accelerator_interconnect": "accelerator_interconnect",
    "accelerator_interconnect_topology": "accelerator_interconnect_topology",
    "host_networking": "host_networking",
    "host_networking_topology": "host_networking_topology",
    "host_processor_model": "host_processor_model_name",
    "framework": "framework",
    "cooling": "cooling",
}

# Fields the official summarizer requires; a file lacking one gets no official row.
OFFICIAL_REQUIRED = (
    "division",
    "status",
    "submitter",
    "system_name",
    "host_processor_model_name",
    "number_of_nodes",
    "host_processor_core_count",
    "host_processors_per_node",
    "accelerator_model_name",
    "accelerators_per_node",
    "framework",
    "hw_notes",
    "sw_notes",
)


# Counts beyond these are typing errors, not systems (v5.0's largest has 11,616 GPUs).
MAX_NODES = 100_000
MAX_PER_NODE = 4_096


class SystemDescriptionError(ValueError):
    """A system description that cannot be used at all (not JSON, not an object)."""


@dataclass(frozen=True, slots=True)
class SystemRecord:
    """A normalised system row and the problems met while reading it."""

    row: Row
    problems: list[tuple[str, str]]  # (kind, message)


def _count(value: JSON) -> int | None:
    """A whole count from a JSON field ("8", 8, 8.0); None for '', 'N/A', junk."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d{16,}", text):
            return 10**16  # far beyond any count (and beyond int()'s digit limit)
        if re.fullmatch(r"\d+", text):
            return int(text)
        if re.fullmatch(r"\d+\.0*", text):
            return int(float(text))
    return None


def _text(value: JSON) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return str(value)


def _description(data: bytes) -> dict[str, JSON]:
    """The JSON object of a system description; :class:`SystemDescriptionError` if the
    bytes are not one."""
    try:
        desc = orjson.loads(data)
    except orjson.JSONDecodeError:
        # Not UTF-8, or not JSON orjson takes: read as the official tool reads it.
        try:
            desc = json_depth.loads(data.decode("latin-1"))
        except (RecursionError, json_depth.TooDeep):
            raise SystemDescriptionError("JSON nested too deeply to read") from None
        except ValueError as exc:
            if utf16(data):  # the official tool reads UTF-8: it cannot read it either
                raise SystemDescriptionError(
                    "UTF-16 text, not the UTF-8 JSON MLCommons' tools read: saved as UTF-8 "
                    "it would be read"
                ) from None
            raise SystemDescriptionError(f"not valid JSON ({exc})") from None
    if not isinstance(desc, dict):
        raise SystemDescriptionError(f"JSON is a {type(desc).__name__}, not an object")
    return desc


def _cpu_only(desc: dict[str, JSON]) -> bool:
    """A system with no accelerator: none named and 0 per node (Intel's CPU submissions)."""
    return no_accelerator(_text(desc.get("accelerator_model_name"))) and (
        _count(desc.get("accelerators_per_node")) == 0
    )


def _node_counts(
    desc: dict[str, JSON], problems: list[tuple[str, str]]
) -> tuple[int | None, int | None]:
    """(nodes, accelerators per node), each None unless a whole number in its plausible
    range; a problem appended for each field that is present but not usable."""
    nodes = _count(desc.get("number_of_nodes"))
    per_node = _count(desc.get("accelerators_per_node"))
    cpu_only = _cpu_only(desc)
    if cpu_only:
        problems.append(
            (
                "bad field",
                "a CPU-only system (accelerators_per_node 0, no accelerator_model_name): "
                "left out of the scaling analysis, which counts accelerators (its "
                "official score stands)",
            )
        )
    for name, value, most in (
        ("number_of_nodes", nodes, MAX_NODES),
        ("accelerators_per_node", per_node, MAX_PER_NODE),
    ):
        if cpu_only and name == "accelerators_per_node":
            continue  # its 0 is said above, once: a whole number, not a bad field
        shown = repr(desc.get(name))[:40]
        if value is None and name in desc:
            problems.append(("bad field", f"{name} is {shown}, not a whole number"))
        elif value is not None and not 1 <= value <= most:
            problems.append(
                (
                    "impossible value",
                    f"{name} is {shown}, not between 1 and {most:,}: the system has no "
                    "accelerator count and is left out of the scaling analysis (its "
                    "official score stands)",
                )
            )
    return _possible(nodes, MAX_NODES), _possible(per_node, MAX_PER_NODE)


def _possible(count: int | None, most: int) -> int | None:
    """A count between 1 and ``most``, else None (the caller says why, as a problem)."""
    if count is not None and 1 <= count <= most:
        return count
    return None


def parse_system(data: bytes, *, round_name: str, org: str, system_id: str) -> SystemRecord:
    """Normalise one ``systems/<system_id>.json``.

    Raises :class:`SystemDescriptionError` when the bytes are not a JSON object; missing or
    non-numeric fields become empty cells and a problem each.
    """
    desc = _description(data)
    problems: list[tuple[str, str]] = []
    missing = [f for f in OFFICIAL_REQUIRED if f not in desc]
    if missing:
        problems.append(
            (
                "missing field",
                "system description lacks "
                + ", ".join(missing)
                + " (the official summarizer crashes on this file)",
            )
        )
    nodes, per_node = _node_counts(desc, problems)
    model = _text(desc.get("accelerator_model_name"))
    hint = f"{system_id} {_text(desc.get('system_name'))}"
    part = normalise_accelerator(model, hint, _text(desc.get("accelerator_memory_capacity")))
    if _cpu_only(desc):
        part = Accelerator(None, None, None, None, CPU_ONLY_FAMILY, True)
    if not part.known:
        problems.append(
            (
                "unknown accelerator",
                f"accelerator_model_name {model[:80]!r} is not in gpuscale's accelerator "
                f"catalogue: its family is its own name ({part.family!r}), not merged "
                "with any other",
            )
        )
    row: Row = {
        "round": round_name,
        "org": org,
        "submitter": _text(desc.get("submitter")) or org,
        "system_id": system_id,
        "system_name": _text(desc.get("system_name")) or system_id,
        "division": _text(desc.get("division")).lower(),
        "availability": _text(desc.get("status")),
        "nodes": nodes,
        "accelerators_per_node": per_node,
        "accelerators": nodes * per_node if nodes is not None and per_node is not None else None,
        "accelerator_model": model,
        "accelerator_family": part.family,
        "accelerator_vendor": part.vendor,
        "accelerator_product": part.product,
        "accelerator_form_factor": part.form_factor,
        "accelerator_memory_gb": part.memory_gb,
        # The summarizer multiplies the counts as written (a CPU-only system's 0 too).
        "official_row": not missing
        and _count(desc.get("number_of_nodes")) is not None
        and _count(desc.get("accelerators_per_node")) is not None
        and _count(desc.get("host_processors_per_node")) is not None,
    }
    for column, field_name in _TEXT_FIELDS.items():
        row[column] = _text(desc.get(field_name))
    return SystemRecord(row=row, problems=problems)
