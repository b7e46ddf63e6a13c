"""What an advice request names, resolved once as it is made (``request.AdviceRequest``):
the device and its links (:class:`NamedHardware`), refused where no table or catalogue has
them, and the workload's reference convergence points and their fit
(:class:`NamedWorkload`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.advice.model.hardware import DeviceRecord, device_record, not_own_link
from gpuscale.advice.request_fields import (
    DEFAULT_INTER_NODE,
    DEFAULT_LATENCY_US,
    DEFAULT_RULESET,
    RequestFields,
)
from gpuscale.advice.types import Finding
from gpuscale.hardware.links import check_preset, nic_path
from gpuscale.names import resolve_device

if TYPE_CHECKING:
    from gpuscale.analysis.critical_batch import ConvergenceModel
    from gpuscale.interconnect.network import Link
    from gpuscale.mlperf.rcp import WorkloadRcps


@dataclass(frozen=True, slots=True)
class NamedHardware:
    """The device and the links a request names, resolved once as it is made: the device
    named, else the one ``--interconnect`` implies; the link given (the preset, else the
    custom link of ``--busbw-gbs``); the named part's baseboard fabric (an SXM board's
    NVLink: the link where none is given or detected); the link between nodes
    (``--inter-node``, else ``DEFAULT_INTER_NODE``); a finding where the GPU fabric given is
    not the device's own; the device's way to its node's NICs where a node holds one GPU
    (``hardware.links.nic_path``: the preset and its citation)."""

    device: DeviceRecord
    link: Link | None
    board: Link | None
    inter_node: Link
    not_own: Finding | None
    nic_path: tuple[str, str]


@dataclass(frozen=True, slots=True)
class NamedWorkload:
    """The workload a request names, resolved once as it is made: its reference
    convergence points (RCPs) in the ruleset asked (none named: ``DEFAULT_RULESET``'s, else
    the newest ruleset's that has them, ``mlperf.rcp.workload_rcps``) and E(B) fitted to
    them (``analysis.critical_batch.rcp_fit``; None where the ruleset has none, refused
    by the calibration with the rulesets that have them)."""

    rcps: WorkloadRcps
    fitted: ConvergenceModel | None


def named_hardware(request: RequestFields) -> NamedHardware:
    """The device and links of ``request``, its names checked (``NamedHardware``): a preset
    no table has, and a device no catalogue has ("RTX A1000" is no A100), refused, the
    closest said."""
    from gpuscale.interconnect.network import Link  # lazy: numpy, not at the CLI's start

    preset, between = check_preset(request), check_preset(request, "inter_node")
    resolve_device(request.device_name)
    given = request.interconnect
    device = device_record(request.device_name, given)
    link = None if preset is None else Link.of(preset)
    if request.busbw_gbs is not None:
        latency = DEFAULT_LATENCY_US if request.latency_us is None else request.latency_us
        link = Link(busbw_gbs=request.busbw_gbs, latency_us=latency, name="custom")
    board = None if device.board_link is None else Link.from_preset(device.board_link)
    inter = Link.of(between) if between is not None else Link.from_preset(DEFAULT_INTER_NODE)
    not_own = None if given is None else not_own_link(device, given)
    nic = nic_path(getattr(device.part, "pcie_gen", None))
    return NamedHardware(device, link, board, inter, not_own, nic)


def named_workload(workload: str | None, ruleset: str | None) -> NamedWorkload | None:
    """:class:`NamedWorkload` of a resolved ``workload`` in ``ruleset``; None for none."""
    if workload is None:
        return None
    # lazy: the RCP reader and its fit (the mlperf package, numpy), not at the CLI's start
    from gpuscale.analysis.critical_batch import rcp_fit
    from gpuscale.mlperf.rcp import workload_rcps

    found = workload_rcps(workload, ruleset or DEFAULT_RULESET, newest=ruleset is None)
    return NamedWorkload(found, rcp_fit(found))
