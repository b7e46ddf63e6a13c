"""The link of the host a bench file was run on, as its rows record it: a finding where its
topology held 2 GPUs or more (a link it measured), else the link its GPU model implies,
said as an assumption with the command that measures it."""

from __future__ import annotations

from gpuscale.advice.assumed import Assumption, Quantity
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.types import Finding, Measure, Source, TermId
from gpuscale.advice.types import FindingKind as K
from gpuscale.hardware.links import NVLINK
from gpuscale.interconnect.network import Link


def of_host(
    link: Link, board: str | None, gpus: int | None, device: str | None, seen: str | None
) -> tuple[Finding | None, Assumption | None]:
    """What says ``link``, the preset that a bench host of ``gpus`` GPUs of the model
    ``device`` recorded (the link of ``board``, an NVLink baseboard's part): a finding, or,
    where fewer than 2 GPUs (none recorded: its topology) measured no link, an assumption
    (``seen``: this machine's detected preset, which the measure command names)."""
    preset = link.name
    if gpus is not None and gpus >= 2:
        said = Finding.of(
            K.LINK_OF_BENCH_HOST,
            name=preset,
            device=board,
            busbw_gbs=link.busbw_gbs,
            detected=seen,  # this machine's GPUs of another link
        )
        return said, None
    generation = NVLINK.get(preset)
    inferred = Assumption(
        term=TermId.LINK,
        value=sentence("link_value", preset=preset, busbw_gbs=link.busbw_gbs),
        quantity=Quantity(link.busbw_gbs, "GB/s bus bandwidth"),
        source=Source.ASSUMED,
        basis=sentence(
            "no_link_measured",
            gpus=gpus,
            preset=preset,
            device=device or None,
            links_per_gpu=getattr(generation, "links_per_gpu", None),
            architecture=getattr(generation, "architecture", None),
            board=board or None,
        ),
        measure=Measure(sentence("measure_link", detected=seen or None)),
    )
    return None, inferred
