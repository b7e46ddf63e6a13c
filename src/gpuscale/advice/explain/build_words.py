"""The words a calibration's build leaves as numbers, said once the build is done
(``api``: build, then :func:`worded`, then the search): the memory check's device assumed
and where its activations come from (``calibration.MemorySaid``)."""

from __future__ import annotations

from dataclasses import replace

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.phrasebook import sentence


def worded(cal: Calibration) -> Calibration:
    """``cal`` with its memory check's sources in words: the device assumed, the bench's
    peak less the model state it held, the transformer's shape counted, or neither."""
    memory, said = cal.machine.memory, cal.machine.memory_said
    if memory is None:
        return cal
    device = memory.device
    if said.device_assumed:
        device = replace(device, assumed=sentence("device_assumed"))
    source = sentence("memory_not_counted")
    counted = memory.activations_counted
    if said.peak_gb is not None:
        values = {"peak_gb": said.peak_gb, "state_gb": said.state_gb}
        source = sentence("memory_rest", per_device=said.per_device, **values)
    elif counted is not None:
        source = sentence(
            "memory_shape",
            micro_batch=counted.micro_batch,
            seq_len=counted.seq_len,
            checkpointing=counted.checkpointing.value,
            layers=counted.layers,
        )
    worded = replace(memory, device=device, activations_source=source)
    return replace(cal, machine=replace(cal.machine, memory=worded))
