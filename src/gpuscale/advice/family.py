"""One basis for a model family's break-even size, the same whichever member is advised.

The break-even resizes the model within its family (``break_even``). Resizing the member
advised on carried its own per-parameter optimizer and DDP times to every size: a small
member's are large (their fixed per-tensor work spread over few parameters), a large
member's small, so the same H100 rows said "2 devices beat 1 from 49.1M parameters"
advised on tf-300m and "at no size up to 10T parameters" advised on tf-30m. The family's
basis is fitted over every member benched in the configuration advised on
(``family_fit.fitted``): FLOPs per parameter per sample (their median), the forward and
backward's fixed cost and rate, and the optimizer step and DDP's own work each a fixed
part plus a part per parameter. The member's own measured step stays in its table; where
the two disagree at its size, the sentence says both and why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gpuscale.advice.model import Compute, ModelSpec
from gpuscale.quantities import counted, format_count, format_ms, joined, number


@dataclass(frozen=True, kw_only=True, slots=True)
class FamilyBasis:
    """A family's step at any size, fitted over ``members`` (their names, by size)."""

    family: str
    members: tuple[str, ...]
    flops_per_param: float  # forward + backward FLOPs per sample per parameter (median)
    compute: Compute  # the family's fixed cost, rate, backward share, wait and contention
    opt_ms: tuple[float, float]  # the optimizer step: (ms, ms per million parameters)
    ddp_ms: tuple[float, float]  # DDP's own work: (ms, ms per million parameters)

    def model(self, params: float, grad_bytes_per_param: float) -> ModelSpec:
        return ModelSpec(
            params=params,
            flops_per_sample=self.flops_per_param * params,
            grad_bytes_per_param=grad_bytes_per_param,
        )

    def at(self, params: float) -> Compute:
        """The family's compute for a member of ``params`` parameters: its optimizer and
        DDP times from the family's lines, as the per-parameter rates the step takes."""
        mparams = params / 1e6
        return replace(
            self.compute,
            opt_ms_per_mparam=(self.opt_ms[0] + self.opt_ms[1] * mparams) / mparams,
            ddp_ms_per_mparam=(self.ddp_ms[0] + self.ddp_ms[1] * mparams) / mparams,
        )


def _line(part: tuple[float, float]) -> str:
    fixed, per = part
    return f"{format_ms(fixed)} + {format_ms(per)} per million parameters"


def _agrees(size: float | None, params: float, own: float | None) -> bool:
    """Whether the family's size and this model's own speedup say the same of it."""
    if own is None or (size is not None and math.isnan(size)):
        return True
    return (size is not None and params >= size) == (own > 1)


def sentence(
    basis: FamilyBasis | None,
    *,
    per_param: float,
    batch: str,
    beats: str,
    reaches: str,
    size: float | None,
    params: float,
    own: float | None,
    own_terms: tuple[float, float],
    benched: bool = True,
    strategy: str = "ddp",
) -> str:
    """``For this model's family (...), 2 devices beat 1 ... (this model: ...).``: the
    family's basis said (fitted over which members, or this model alone), and where this
    model's own measured step gives another verdict at its size (``own``: its throughput
    speedup on 2 devices, as its table predicts; ``own_terms``: its optimizer and DDP ms),
    both said with why; ``benched``: whether the step is a bench run's (else given), and
    ``strategy`` the one predicted."""
    if basis is None:
        alone = (
            "the only member of its family benched in this configuration"
            if benched
            else "from the step given (nothing benched)"
        )
        how = (
            f"{number(per_param)} FLOPs per parameter per sample, its optimizer and "
            f"{strategy.upper()} times per parameter: this model alone, {alone}"
        )
    else:
        how = (
            f"the {basis.family} family fitted over the {counted(len(basis.members), 'model')} "
            f"benched in this configuration, {joined(list(basis.members))}: "
            f"{number(basis.flops_per_param)} FLOPs per parameter per sample (their median), "
            f"the optimizer step {_line(basis.opt_ms)}, DDP's own work {_line(basis.ddp_ms)}"
        )
    said = (
        f"For this model's family ({how}; {batch}), {beats} and {reaches} (this model: "
        f"{format_count(params)})"
    )
    if basis is None or _agrees(size, params, own):
        return said
    assert own is not None
    mparams = params / 1e6
    line_opt = basis.opt_ms[0] + basis.opt_ms[1] * mparams
    line_ddp = basis.ddp_ms[0] + basis.ddp_ms[1] * mparams
    return (
        f"{said}; this model's own measured step gives {number(own)}x on 2 devices (its "
        f"table): its optimizer step {format_ms(own_terms[0])} and DDP's own work "
        f"{format_ms(own_terms[1])} as measured, where the family's lines give "
        f"{format_ms(line_opt)} and {format_ms(line_ddp)} at its size: the family's size "
        "is the fit over its members, this model's table its own runs"
    )
