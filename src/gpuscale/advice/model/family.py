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

from dataclasses import dataclass, replace

from gpuscale.advice.model.step import Compute, ModelSpec


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
