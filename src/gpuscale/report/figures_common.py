"""What every workload figure shares: the tooltip text of a system and the title."""

from __future__ import annotations

import math
import numbers
import textwrap

import pandas as pd

from gpuscale.analysis.analyze import WorkloadAnalysis, WorkloadTable
from gpuscale.analysis.superlinear import sentence
from gpuscale.quantities import devices, fixed_apart, format_minutes, named, number
from gpuscale.tables import display_name


class NothingToDraw(Exception):
    """A figure with no point to draw (the logs give no global batch; every samples-to-
    converge count flagged): the report says why in its place."""


E_PRIME = "normalized_efficiency"


def _above_one(template: str, value: float) -> str:
    """``template`` (``E' {:.2f}``) with the E' ``value`` to the decimals that show it
    above 1."""
    return template.replace("{:.2f}", "{}").format(fixed_apart(value, 1.0))


def superlinear_codes(table: pd.DataFrame) -> pd.Series:
    """Each system's code of why its E' is above 1 (``analysis.superlinear``), ``""``
    for none and where the table has no such column."""
    return table.get("superlinear", pd.Series("", index=table.index, dtype=object))


def point_labels(
    table: pd.DataFrame, last: tuple[str, str] = ("normalized_efficiency", "E' {:.2f}")
) -> list[str]:
    """Tooltip text of each system: submitter, system name, configuration, time and the
    ``last`` column formatted with its format string (default: E')."""
    # Column lists, not itertuples: that builds a namedtuple class of every column per call.
    column, template = last
    columns = ("submitter", "system_name", "accelerators", "accelerator_family")
    why = superlinear_codes(table).tolist()
    return [
        f"{named(submitter, name)}: {devices(n, family)}, {format_minutes(minutes)}"
        + _last(template, value, above_one=bool(code) and column == E_PRIME)
        + (f" (E' above 1: {sentence(code)})" if code else "")
        for submitter, name, n, family, minutes, value, code in zip(
            *(table[c].tolist() for c in (*columns, "time_to_train_min", column)),
            why,
            strict=True,
        )
    ]


def _last(template: str, value: float, *, above_one: bool) -> str:
    """A comma and ``value`` in ``template`` (a bare ``{}`` takes it as :func:`number`
    writes it to 4 digits: 2,475,000, never 2.475e+06), or "" where the system has no
    value (an outlier's E', a panel that draws none): never "nan" in a tooltip."""
    if not isinstance(value, numbers.Real) or not math.isfinite(value):  # NaN, pandas' NA
        return ""
    if above_one:  # a value said above 1 to the digits that show it (E' 1.004, never 1.00)
        return ", " + _above_one(template, value)
    return ", " + (
        template.format(number(value, 4)) if "{}" in template else template.format(value)
    )


def system_words(table: pd.DataFrame, key: str, *, short: bool = False) -> str:
    """``2 x RTX A5000 (Krai)``: the system ``ORG/SYSTEM_ID`` of ``table`` by its count,
    family and submitter (``short``: without the submitter); ``key`` itself where the
    table lacks it."""
    org, _, system_id = key.partition("/")
    mine = table[(table["org"] == org) & (table["system_id"] == system_id)]
    if mine.empty:
        return key
    row = mine.iloc[0]
    said = devices(row["accelerators"], row["accelerator_family"])
    return said if short else f"{said} ({row['submitter']})"


def against(table: pd.DataFrame) -> str:
    """Whom a table's speedup and E' are against: ``against 2 x RTX A5000 (Krai)``, or
    ``each family against its own reference`` where there are several."""
    refs = table[["reference_org", "reference_system_id"]].dropna().drop_duplicates()
    if len(refs) != 1:
        return "each family against its own reference"
    org, system_id = refs.iloc[0]
    return f"against {system_words(table, f'{org}/{system_id}')}"


def title(result: WorkloadTable | WorkloadAnalysis, what: str) -> str:
    return f"{display_name(result.workload)} ({result.round}): {what}"


# the characters a one-axes figure's title holds on one line across its width (FIGSIZE):
# 66 ("Llama2 70B LoRA (v4.1): speedup against 4 x H100-SXM5-80GB (Dell)") reached past it
ONE_LINE_TITLE = 62


def title_against(result: WorkloadTable | WorkloadAnalysis, what: str, table: pd.DataFrame) -> str:
    """``BERT (v4.1): E' against 2 x RTX A5000 (Krai)``: ``what`` and whom it is against
    (:func:`against`). Where one line would reach past the figure's edge it breaks after
    the workload, and the rest wraps at :data:`ONE_LINE_TITLE` characters (v3.0 BERT's
    intervals, against 2 x H100-PCIe-80GB of Quanta_Cloud_Technology, take three lines)."""
    whom = against(table)
    said = title(result, f"{what} {whom}" if whom.startswith("against") else f"{what}, {whom}")
    if len(said) <= ONE_LINE_TITLE:
        return said
    head, _, rest = said.partition(": ")
    return "\n".join([f"{head}:", *textwrap.wrap(rest, ONE_LINE_TITLE, break_on_hyphens=False)])
