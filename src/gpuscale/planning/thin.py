"""Thin evidence: where a count's level rests on one submission or one submitter's results
(one software stack, not a consensus), whose, and where that submitter's software is an
outlier elsewhere in the workload's data (``tables.plan``'s ``rests_on``,
``rests_on_submitter``, ``rests_on_outlier``)."""

from __future__ import annotations

from gpuscale.planning.records import FamilyFit, WorkloadFit
from gpuscale.tables.analysis import root_reason

THIN = ("one submission", "one submitter")


def thin_evidence(own: FamilyFit | None, kind: str, n: int) -> tuple[str, str]:
    """(``one submission`` or ``one submitter``, whose) where a count's level rests on so
    little (at a count the family ran: its results there; elsewhere: all its results on
    the workload), else ("", "") (a family that never ran the workload: its level is
    borrowed, said by its class)."""
    if own is None or kind == "iii":
        return "", ""
    systems = [s for s in own["systems"] if kind != "i" or int(s[3]) == n]
    submitters = {str(s[1]) for s in systems}
    if len(submitters) != 1:
        return "", ""
    return THIN[0] if len(systems) == 1 else THIN[1], submitters.pop()


def outlier_elsewhere(fit: WorkloadFit, submitter: str) -> str:
    """Where ``submitter``'s software is an outlier in the workload's data, any family or
    round (the outliers left out of its fit: ``gpuscale.analysis.outliers``, the rule
    ``analyze`` and the report use): each outlier its others rest on, ``v4.0 H100_n1: 3.92x
    the median of H100-SXM5-80GB's other submitters at 8``, ``"; "``-joined; "" where none."""
    return "; ".join(
        f"{o[0]} {o[2]}: {o[6]}"
        for o in fit.get("outliers", [])
        if submitter and o[1] == submitter and root_reason(str(o[6])) == o[6]
    )


def thin_columns(fit: WorkloadFit, family: str, kind: str, n: int) -> dict[str, str]:
    """A plan row's ``rests_on``, ``rests_on_submitter`` and ``rests_on_outlier`` at ``n``
    devices of class ``kind``."""
    mark, submitter = thin_evidence(fit["families"].get(family), kind, n)
    return {
        "rests_on": mark,
        "rests_on_submitter": submitter,
        "rests_on_outlier": outlier_elsewhere(fit, submitter),
    }
