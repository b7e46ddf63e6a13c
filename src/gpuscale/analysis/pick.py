"""A criterion's pick: the system the equilibrium's criteria choose, with its caution."""

from __future__ import annotations

from dataclasses import dataclass

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
