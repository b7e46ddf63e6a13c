"""A criterion's pick: the system the equilibrium's criteria choose, with its caution."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuscale.quantities import devices, filled, format_minutes, named
from gpuscale.tables import Criterion


@dataclass(frozen=True, slots=True)
class Pick:
    """The system a criterion picks; ``label`` is how people read the criterion."""

    criterion: Criterion
    label: str
    org: str
    submitter: str
    system_id: str
    system_name: str
    accelerator_family: str
    accelerators: int
    time_to_train_min: float
    normalized_efficiency: float
    # why the pick compares hardware rather than scaling (``analysis.crossing``); "" when
    # it compares like with like
    caution: str = ""

    @property
    def key(self) -> str:
        return f"{self.org}/{self.system_id}"

    @property
    def line(self) -> str:
        """The pick as ``analyze`` says it: criterion, system, its accelerators, time and
        E' (where known: the knee reads times alone), and its caution where it has one."""
        e = self.normalized_efficiency
        return (
            f"{self.label}: {named(self.submitter, self.system_name)} "
            f"({devices(self.accelerators, self.accelerator_family)}, "
            f"{format_minutes(self.time_to_train_min)}"
            + (f", E' {e:.2f})" if math.isfinite(e) else ")")
            + filled("; caution: {}", self.caution)
        )
