"""The device an advice runs on (``DeviceRecord``: named, else implied by a link preset, as
the catalogue has it; ``not_own_link``: a GPU fabric given that is not its own), the ceiling
its work cannot beat (``ceiling``), the rates and steps that cannot be true on it
(``checked``, ``step_warnings``; numbers typed under their floors or above their ceilings:
``typed_warnings``); its power per device (``device_power``: given > measured by the
bench > the catalogue part's board power, an upper estimate, of the device named, else of the
one assumed where none is (the one the memory check reads); None for a CPU or an unknown
device unmeasured), and a job's watts at each count and batch (``Power``)."""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuscale.advice.model.priors import REFERENCE_DEVICE, REFERENCE_PCIE_DEVICE
from gpuscale.advice.types import Finding, FindingKind, maybe
from gpuscale.hardware import catalogue, links
from gpuscale.hardware.capacity import BYTES_PER_GIB, AcceleratorMemory, listed_memory
from gpuscale.hardware.catalogue import Device
from gpuscale.hardware.ceilings import above_ceiling
from gpuscale.hardware.device_names import Resolved, closest, find, on_link
from gpuscale.hardware.peaks import CPU_THREAD_TFLOPS, Peak, cpu_peak, cpu_threads, fastest, peak_of
from gpuscale.hardware.power import PerBatch, WholeJob, watts_at, whole_job_w
from gpuscale.plausibility import mfu_above_peak, under_floor
from gpuscale.tables.codes import Code


@dataclass(frozen=True, slots=True)
class DeviceRecord:
    """A device as the catalogue knows it (:func:`device_record`): ``part``, its
    ``peak`` and what the name left open (``assumed``: ``others``, the parts it could also
    mean); a name the catalogue lacks has the ``closest`` names instead, and its memory
    where ``data/accelerator_memory.csv`` lists it (``listed``: no peak, power or link)."""

    name: str | None = None
    part: Device | None = None
    assumed: str = ""
    closest: tuple[str, ...] = ()
    others: tuple[Device, ...] = ()
    listed: AcceleratorMemory | None = None

    @property
    def peak(self) -> Peak | None:
        return None if self.part is None else peak_of(self.part)

    def tflops(self, precision: str, tf32: bool = False) -> float | None:
        return None if self.peak is None else self.peak.tflops(precision, tf32)

    @property
    def memory(self) -> AcceleratorMemory | None:
        """The part's memory with its source: the catalogue's, else the table's (``listed``)."""
        if self.part is None:
            return self.listed
        part = self.part.name
        return AcceleratorMemory(part, self.part.memory_gib, f"device catalogue: {part}")

    @property
    def memory_bytes(self) -> float | None:
        """The part's memory, bytes: the vendor's "GB" is GiB (an H100's 80 GB: 85.9e9)."""
        memory = self.memory
        return None if memory is None else memory.gib * BYTES_PER_GIB

    @property
    def board_link(self) -> str | None:
        return None if self.part is None else links.board_link(self.part)

    @property
    def fabric(self) -> str | None:
        """The baseboard fabric (``board_link``) of every part the name may mean: an SXM or
        OAM board's, one preset each; None where it may also mean a PCIe card (``H100``)."""
        boards = {links.board_link(p) for p in (self.part, *self.others) if p is not None}
        return self.board_link if boards == {self.board_link} else None

    @property
    def own_fabric(self) -> str | None:
        """Its inter-chip fabric of its own, which no link preset models (a TPU's ICI, a
        Gaudi's RoCE: ``accelerators.own_fabric``); None for a catalogue part or no name."""
        from gpuscale.hardware.accelerators import own_fabric  # lazy: its product table

        return None if self.part is not None or not self.name else own_fabric(self.name)

    @property
    def usual_link(self) -> str | None:
        """The fastest preset of the usual setup (``links.usual_preset``: a board's fabric,
        else PCIe x16 with P2P at its generation, else ``pcie-phb``, through host memory) of
        every part the name may mean: the best link it sits on; None where no part is known."""
        parts = [p for p in (self.part, *self.others) if p is not None]
        usual = (links.PRESETS[links.usual_preset(p)] for p in parts)
        best = max(usual, key=lambda p: (p.busbw_gbs, -p.hop_latency_us), default=None)
        return None if best is None else best.name


def device_record(name: str | None, implied_by: str | None = None) -> DeviceRecord:
    """The device named, else the one the link ``implied_by`` implies, as the catalogue has
    it; a name of several parts read as the kind of part the link implies where it says one
    (a PCIe card on a PCIe link: ``device_names.on_link``)."""
    if not name and implied_by:
        name = links.implied_device(implied_by)
    if not name or not name.strip():
        return DeviceRecord(name)
    found = find(name)
    if found is None:
        return DeviceRecord(name, closest=tuple(closest(name)), listed=listed_memory(name))
    others = tuple(map(catalogue.device, found.others))
    return read_on_link(DeviceRecord(name, found.device, found.assumed, others=others), implied_by)


def read_on_link(record: DeviceRecord, implied_by: str | None) -> DeviceRecord:
    """``record`` read as the kind of part the link ``implied_by`` implies where it says one
    and the name could also mean one (``device_names.on_link``); where none is named, the
    device that link implies."""
    if not record.name:
        return device_record(None, implied_by)
    card = None if implied_by is None else links.implies_card(implied_by)
    if card is None or implied_by is None or record.part is None:
        return record
    named = Resolved(record.name, record.part, record.assumed, tuple(d.name for d in record.others))
    found = on_link(named, card, implied_by.split(" ")[0])
    others = tuple(map(catalogue.device, found.others))
    return DeviceRecord(record.name, found.device, found.assumed, others=others)


def checked_device(device: DeviceRecord, link: str) -> tuple[DeviceRecord, bool]:
    """The device the memory check reads and whether it is assumed: none named or implied,
    the reference (``priors.REFERENCE_DEVICE``), its PCIe board where the ``link`` is PCIe
    (an SXM board has NVLink: device and link one machine); a name of parts of more than one
    memory size (``A100``: 40 and 80 GB), the smallest, of the form read first where one is
    (conservative: what it holds, each of them holds)."""
    if not device.name:
        pcie = link.lower().startswith("pcie")  # a PCIe preset, given or detected
        name = REFERENCE_PCIE_DEVICE if pcie else REFERENCE_DEVICE
        return device_record(name), True
    read = device.part
    if read is None or not device.others:
        return device, False
    parts = [read, *device.others]
    least = min(parts, key=lambda d: (d.memory_gib, d.form_factor != read.form_factor))
    if all(d.memory_gib == least.memory_gib for d in parts):  # one size: nothing assumed
        return device, False
    return DeviceRecord(device.name, least), True


def not_own_link(device: DeviceRecord, given: str) -> Finding | None:
    """A finding where ``given``, a GPU fabric's preset (NVLink, xGMI), is not the link of
    ``device``'s part (an RTX 4090 has none, an MI300X has Infinity Fabric, an A40 a 2-GPU
    bridge): the part's usual preset said, none where its board's fabric no preset models;
    or of a device joined by a fabric of its own (a TPU's ICI: ``fabric``), none of them."""
    part, fabric = device.part, device.own_fabric
    if not given.startswith(links.GPU_FABRICS):
        return None
    if fabric is not None:  # named as the product table names it (TPU v5p: TPU-v5p)
        from gpuscale.hardware.accelerators import normalise_accelerator  # lazy: as own_fabric

        name = normalise_accelerator(device.name or "").product or device.name
        of = {"device": name, "gpu_link": None, "usual": None, "fabric": fabric}
        return Finding.of(FindingKind.LINK_NOT_OF_DEVICE, given=given, **of)
    if part is None or given == links.own_link(part):
        return None
    board_only = part.board and part.gpu_link and not links.board_link(part)
    return Finding.of(
        FindingKind.LINK_NOT_OF_DEVICE,
        given=given,
        device=part.name,
        gpu_link=part.gpu_link or None,
        usual=None if board_only else links.usual_preset(part),
        fabric=None,
    )


NO_DEVICE = DeviceRecord()  # none named, recorded or implied
DEVICE_PEAK = Finding.of(FindingKind.CEILING, of="peak")  # the device's own peak
MIN_MFU = 0.01  # a step's work runs at least this share of the device's peak


# The precision a step's matmuls run at, by ``--precision`` (the weights'): mixed precision
# runs them in bf16 on the tensor cores (fp32 only in the optimizer's update); fp32 at most
# at TF32's rate (PyTorch's TF32 tensor-core path).
WORK_PRECISION = {"mixed": "bf16", "fp32": "fp32"}


def work_peak(device: DeviceRecord, weights: str, tflops: float) -> tuple[float | None, str]:
    """(TFLOP/s or None, precision) of the one peak every reading of a rate ``tflops`` on
    ``device`` under ``--precision`` ``weights`` takes: fp32's TF32 peak unless the step
    runs faster than it, then bf16's (its matmuls ran in half precision)."""
    precision = WORK_PRECISION.get(weights, weights)
    at = device.tflops(precision, tf32=True)
    if at is not None and precision == "fp32" and tflops > at:
        precision, at = "bf16", device.tflops("bf16")
    return at, precision


def rate_warnings(
    tflops: float,
    device: DeviceRecord,
    precision: str,
    *,
    low: bool = True,
    fixed_taken_ms: float | None = None,
) -> list[Finding]:
    """A finding where ``tflops`` is above the ``work_peak`` (an unknown device's: the
    fastest known at bf16) or, with ``low``, under ``MIN_MFU`` of it (``fixed_taken_ms``: the
    other reading of a low rate)."""
    peak = device.peak
    at, precision = work_peak(device, precision, tflops)
    if peak is None or at is None:
        top = fastest()
        if tflops <= top.bf16:
            return []
        kind = FindingKind.RATE_ABOVE_EVERY_PEAK
        return [Finding.of(kind, tflops=tflops, peak_tflops=top.bf16, device=top.device)]
    if tflops > at:
        kind = FindingKind.RATE_ABOVE_PEAK
        return [Finding.of(kind, tflops=tflops, peak_tflops=at, device=peak.device)]
    if not low or tflops >= MIN_MFU * at:
        return []
    found = Finding.of(
        FindingKind.RATE_UNDER_FLOOR,
        tflops=tflops,
        share_pct=100 * tflops / at,
        floor_pct=100 * MIN_MFU,
        floor_share=MIN_MFU,
        device=peak.device,
        precision=precision,
        peak_tflops=at,
        fixed_taken_ms=fixed_taken_ms,
    )
    return [found]


@dataclass(frozen=True, slots=True)
class Rate:
    """A calibration's rate per device, TFLOP/s, to check against ``device``'s peak at
    ``precision`` (``checked``). A bench's recorded rate is checked apart: the rate advised
    is priced no faster than the peak, so only the one recorded can be above it."""

    tflops: float  # the rate advised
    device: DeviceRecord
    precision: str
    rate_of: str  # whose: inputs, inputs_whole_step, bench; "": not said (a CPU's)
    said_tflops: float  # the rate said where no peak checks it
    low: bool = False  # flagged under ``MIN_MFU`` too
    fixed_taken_ms: float | None = None  # the other reading of a low rate
    recorded_tflops: float | None = None  # the bench's N = 1 run's, over its whole step
    # the peak that run recorded it against at its precision (None: not recorded, unknown)
    recorded_peak_tflops: float | None = None


def checked(rate: Rate) -> tuple[Finding | None, list[Finding]]:
    """(the finding that ``rate`` went unchecked, the named device having no peak, else
    None; its ``rate_warnings``, and the bench's recorded rate above its peak)."""
    device, unchecked = rate.device, None
    if rate.rate_of and device.name and device.peak is None:
        top = fastest()
        unchecked = Finding.of(
            FindingKind.PEAK_UNCHECKED,
            tflops=rate.said_tflops,
            device=device.name,
            rate_of=rate.rate_of,
            fastest=top.device,
            fastest_tflops=top.bf16,
            precision=WORK_PRECISION.get(rate.precision, rate.precision),
            recorded_tflops=rate.recorded_tflops,
        )
    taken = rate.fixed_taken_ms
    warnings = rate_warnings(
        rate.tflops, device, rate.precision, low=rate.low, fixed_taken_ms=taken
    )
    # the rate the bench recorded: an MFU above 1 (its runs flagged for it) cannot be true
    recorded, peak = rate.recorded_tflops, rate.recorded_peak_tflops
    if (mfu := mfu_above_peak(recorded, peak)) is not None:
        warnings.append(
            Finding.of(
                FindingKind.RECORDED_ABOVE_PEAK,
                tflops=recorded,
                peak_tflops=peak,
                mfu=mfu,
                device=device.name,
                precision=rate.precision,
            )
        )
    return unchecked, warnings


def ceiling(
    device: object, threads: object, peak: object = None, precision: object = None
) -> tuple[float, Finding]:
    """(TFLOP/s, a ``CEILING`` finding) a bench row's work cannot beat at ``precision``
    (default: a CPU's fp32, an accelerator's bf16): its recorded ``peak``, else a CPU's
    threads at ``CPU_THREAD_TFLOPS``, else the fastest accelerator's peak (fp32 work at a
    bf16 ceiling would run 31x (a CPU thread) or 14x (the fastest accelerators) too fast)."""
    cpu = device == "cpu"
    # fp32 is all a CPU without AMX runs fast; an accelerator's highest is bf16
    which, default = ("fp32", "cpu") if cpu else ("bf16", "gpu")
    if isinstance(precision, str) and precision in CPU_THREAD_TFLOPS:
        which, default = precision, None
    if isinstance(peak, int | float) and math.isfinite(peak) and peak > 0:
        if not cpu:
            return float(peak), DEVICE_PEAK
        # its threads' ceiling (``hardware.peaks.cpu_peak``), named by the precisions it is of
        n = cpu_threads(threads)
        names = [p for p, rate in CPU_THREAD_TFLOPS.items() if math.isclose(peak, n * rate)]
        tflops, which, default = float(peak), "/".join(names) or None, None
    elif cpu:
        n, tflops = cpu_threads(threads), cpu_peak(threads, which)
    else:
        top = fastest(which)
        said = Finding.of(
            FindingKind.CEILING, of="fastest", device=top.device, precision=which, default=default
        )
        return top.tflops(which), said
    said = Finding.of(FindingKind.CEILING, of="cpu", threads=n, precision=which, default=default)
    return tflops, said


# A step runs at least a forward, a backward and an optimizer kernel, each at least 2 us:
# below the 3.8 us (back to back) and 3.4 us (in a CUDA graph) a V100 kernel took (A. Gray,
# "Getting Started with CUDA Graphs", NVIDIA Technical Blog, 2019). A shorter step is a unit
# mistaken or not a step.
MIN_STEP_KERNELS = 3
MIN_KERNEL_US = 2.0
MIN_STEP_MS = MIN_STEP_KERNELS * MIN_KERNEL_US / 1e3


def step_warnings(points: Sequence[tuple[float, float]]) -> list[Finding]:
    """A finding where a step of ``points`` ((batch, ms)) is under ``MIN_STEP_MS``."""
    short = [ms for _, ms in points if ms < MIN_STEP_MS]
    kind = FindingKind.STEP_UNDER_KERNELS
    floor = {"kernels": MIN_STEP_KERNELS, "kernel_us": MIN_KERNEL_US, "floor_ms": MIN_STEP_MS}
    return [Finding.of(kind, step_ms=min(short), **floor)] if short else []


def typed_warnings(typed: Mapping[str, float | None]) -> list[Finding]:
    """A finding per number ``typed`` (field -> value; None: not given) under its floor
    (``plausibility.TYPED_FLOORS``) or above its ceiling (``hardware.ceilings``): a unit
    mistaken, as a step under ``MIN_STEP_MS`` is."""
    under = FindingKind.TYPED_UNDER_FLOOR
    found = [Finding.of(under, field=f, value=v, floor=low) for f, v, low in under_floor(typed)]
    above = FindingKind.TYPED_ABOVE_CEILING
    for c, value in above_ceiling(typed):
        found.append(
            Finding.of(above, field=c.field, value=value, ceiling=c.ceiling, top=c.top, of=c.of)
        )
    return found


# What measures a device's power, by its kind (``cpu``, ``cuda``): NVML but on a CPU
METERS = {"cpu": "RAPL package share"}


class PowerKind(Code):  # where a device's watts come from
    GIVEN = "given"  # --power-w
    MEASURED = "measured"  # by the bench (NVML; a CPU's RAPL package share)
    BOARD = "board"  # the catalogue part's board power (its datasheet)
    ASSUMED = "assumed"  # the board power of the device assumed where none is named
    NO_RAPL = "no_rapl"  # unknown: a CPU without a RAPL reading
    UNKNOWN = "unknown"  # unknown: a device without a board power


@dataclass(frozen=True, slots=True)
class Power:
    """Watts per device (None: unknown), their ``kind``, the ``device`` whose board power it
    is or is not, what its name left open (``assumed``) and the link that implies it;
    ``source`` those in words (``explain.explanation.worded``)."""

    watts: float | None
    source: str = ""
    # the whole job's watts at (N, batch) (every device, each CPU package once): energy
    # there uses it instead of watts x N
    total_w_at: WholeJob = ()
    at_batch: PerBatch = ()  # W per device by N = 1 runs of the same configuration
    meter: str = "NVML"  # what measured ``watts`` or ``at_batch`` (NVML, RAPL package share)
    kind: PowerKind = PowerKind.UNKNOWN
    device: str | None = None
    assumed: str = ""
    implied_by: str | None = None
    left_out: int = 0  # the bench's runs whose meter dropped out (energy_flag), not read

    @property
    def measured(self) -> bool:
        return self.kind is PowerKind.MEASURED

    def per_device(self, batch: float | None) -> float | None:
        if not self.at_batch or batch is None:
            return self.watts
        return watts_at(self.at_batch, batch)

    def total_w(self, devices: int, batch: float | None = None) -> float | None:
        """Watts of ``devices`` at ``batch``: the whole job's measured, else per device x N."""
        if (measured := whole_job_w(self.total_w_at, devices, batch)) is not None:
            return measured
        return maybe(operator.mul, self.per_device(batch), devices)


def device_power(
    device: str | None,
    record: DeviceRecord,
    *,
    measured_w: float | None = None,
    given_w: float | None = None,
    implied_by: str | None = None,
    assumed: DeviceRecord | None = None,
) -> Power:
    """The power per device of kind ``device`` (``cpu``, ``cuda``), in the module's order;
    ``assumed``: the device assumed where ``record`` names none (``Machine.assumed_device``)."""
    if given_w is not None:
        if not given_w >= 0:
            raise ValueError(f"power must be >= 0 W, got {given_w}")
        return Power(given_w, kind=PowerKind.GIVEN)
    if measured_w is not None and measured_w > 0:
        return Power(measured_w, meter=METERS.get(device, "NVML"), kind=PowerKind.MEASURED)
    if device == "cpu":
        return Power(None, kind=PowerKind.NO_RAPL)
    part = record.part
    if part is not None:
        board = {"device": part.name, "assumed": record.assumed, "implied_by": implied_by}
        return Power(part.board_power_w, kind=PowerKind.BOARD, **board)
    if not record.name and assumed is not None and assumed.part is not None:
        watts, name = assumed.part.board_power_w, assumed.part.name
        return Power(watts, kind=PowerKind.ASSUMED, device=name)
    return Power(None, device=record.name)
