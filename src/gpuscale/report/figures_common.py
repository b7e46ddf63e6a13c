"""What every workload figure shares: the tooltip text of a system and the title."""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.analyze import WorkloadAnalysis, WorkloadTable
from gpuscale.analysis.superlinear import sentence
from gpuscale.quantities import devices, named, number
from gpuscale.tables import display_name


class NothingToDraw(Exception):
    """A figure with no point to draw (the logs give no global batch; every samples-to-
    converge count flagged): the report says why in its place."""


def point_labels(
    table: pd.DataFrame, last: tuple[str, str] = ("normalized_efficiency", "E' {:.2f}")
) -> list[str]:
    """Tooltip text of each system: submitter, system name, configuration, time and the
    ``last`` column formatted with its format string (default: E')."""
    # Column lists, not itertuples: that builds a namedtuple class of every column per call.
    column, template = last
    columns = ("submitter", "system_name", "accelerators", "accelerator_family")
    why = table["superlinear"].tolist() if "superlinear" in table else [""] * len(table)
    return [
        f"{named(submitter, name)}: {devices(n, family)}, {number(minutes)} min, "
        f"{template.format(value)}" + (f" (E' above 1: {sentence(code)})" if code else "")
        for submitter, name, n, family, minutes, value, code in zip(
            *(table[c].tolist() for c in (*columns, "time_to_train_min", column)),
            why,
            strict=True,
        )
    ]


def title(result: WorkloadTable | WorkloadAnalysis, what: str) -> str:
    return f"{display_name(result.workload)} ({result.round}): {what}"
