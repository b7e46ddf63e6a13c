"""The words a calibration's build leaves as numbers, said once the build is done
(``api``: build, then :func:`worded`, then the search): the convergence model the bench's
noise scale gives, where the power comes from, the memory check's device assumed and where
its activations come from (``calibration.MemorySaid``)."""

from __future__ import annotations

import math
from dataclasses import replace

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.explain.power_words import power_source
from gpuscale.advice.types import TermId
from gpuscale.analysis.critical_batch import NoiseScale


def worded(cal: Calibration) -> Calibration:
    """``cal`` with the words of its convergence, power and memory check."""
    power = cal.machine.power
    if not power.source:
        cal = cal.at({"machine": {"power": replace(power, source=power_source(power))}})
    return _memory_worded(_convergence_worded(cal))


def measured_noise(noise: NoiseScale) -> str:
    """The bench's measured ``B_simple`` with its steps and 95% interval, the upper end
    said unbounded where the resamples found no signal (``high`` infinite)."""
    return sentence(
        "b_simple_measured",
        b_simple=noise.b_simple,
        steps=noise.steps,
        low=noise.low,
        high=noise.high,
        bounded=math.isfinite(noise.high),
    )


def _convergence_worded(cal: Calibration) -> Calibration:
    """``cal`` with the source of a convergence model the bench's noise scale gives (its
    ``B_simple``, steps and interval) in words, the model's and its assumption's."""
    model, noise = cal.search.convergence, None if cal.bench is None else cal.bench.noise
    if model is None or cal.search.noise_steps is None or noise is None:  # priced otherwise
        return cal
    source = measured_noise(noise)
    assumed = tuple(
        replace(a, basis=source) if a.term is TermId.CONVERGENCE else a
        for a in cal.said.assumptions
    )
    return cal.at(
        {"search": {"convergence": replace(model, source=source)}, "said": {"assumptions": assumed}}
    )


def _memory_worded(cal: Calibration) -> Calibration:
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
