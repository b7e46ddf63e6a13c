"""Results of a round that republish earlier ones, in the report's words.

MLCommons publishes a round with the results carried into it unchanged (NVIDIA's BERT
``eos_n434`` is in v3.1, v4.0 and v4.1); the report analyses the round so, as the study
read it, and says so: a result it names that was first published in an earlier round
says that beside it (:func:`since`), and each workload says once how many of its results
republish earlier ones (:func:`republished_sentence`). Where each was first published:
``gpuscale.mlperf.earlier.first_published`` (the loaded rounds and the bundled ones).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, TypeAlias

import pandas as pd

from gpuscale.quantities import agreeing, counted, filled, joined
from gpuscale.tables import display_name
from gpuscale.tables.workloads import own_folder

# (org, system_id): one result of a workload's table of one round, as its rows, its picks
# and its references name it
Key = tuple[str, str]
Firsts = Mapping[Key, str]


class Named(Protocol):
    """A pick, a reference or a row of ``DataFrame.itertuples``: what names its result."""

    @property
    def org(self) -> object: ...

    @property
    def system_id(self) -> object: ...


class AnswerRow(Protocol):
    """A row of ``DataFrame.itertuples`` over ``analysis.answers``: one criterion's pick."""

    accelerators: int  # an Int64 cell: pd.NA where the criterion picks nothing
    scope: str
    criterion: str
    accelerator_family: str
    edge: str
    note: str
    submitter: str
    system_name: str
    time_to_train_min: float


# a table row (``iterrows``, ``to_dict("records")``) or a record with the attributes
Row: TypeAlias = Mapping[str, object] | pd.Series | Named


def key_of(row: Row) -> Key:
    """The key of a table row, a pick or a reference (a mapping or attributes)."""
    if isinstance(row, Mapping | pd.Series):
        return str(row["org"]), str(row["system_id"])
    return str(row.org), str(row.system_id)


def earlier_firsts(table: pd.DataFrame, marked: pd.DataFrame) -> dict[Key, str]:
    """{key: the round it was first published in} for the rows of one workload's analysed
    ``table`` first published before their round (``marked``: the scores with
    ``first_round``, from ``first_published``)."""
    columns = ["round", "org", "system_id", "benchmark"]
    firsts = marked[marked["first_round"].astype(str) != marked["round"].astype(str)]
    joined_rows = table.merge(firsts[[*columns, "first_round"]], on=columns, how="inner")
    return {key_of(r): str(r["first_round"]) for _, r in joined_rows.iterrows()}


def since(firsts: Firsts, row: Row) -> str:
    """``, first published in v3.1`` for a result first published in an earlier round,
    else ""."""
    return filled(", first published in {}", firsts.get(key_of(row)))


def answer_since(table: pd.DataFrame, firsts: Firsts, pick: AnswerRow) -> str:
    """:func:`since` for an answer row (``analysis.answers``: named by submitter, system
    name, count and time, the table row it was taken from)."""
    if not firsts or pd.isna(pick.accelerators):  # no pick: no system named
        return ""
    same = table[
        (table["submitter"].astype(str) == str(pick.submitter))
        & (table["system_name"].astype(str) == str(pick.system_name))
        & (table["accelerators"].astype(float) == float(pick.accelerators))
        & (table["time_to_train_min"].astype(float) == float(pick.time_to_train_min))
    ]
    return since(firsts, same.iloc[0]) if len(same) else ""


def earlier_among(table: pd.DataFrame, firsts: Firsts) -> str:
    """``, 5 of them first published in an earlier round`` for the rows of ``table``
    first published earlier, else ""."""
    count = sum(key_of(r) in firsts for _, r in table.iterrows())
    if _is_own(table):
        return filled(", {} of them published by MLCommons (the same runs)", count)
    return filled(", {} of them first published in an earlier round", count)


def _is_own(table: pd.DataFrame) -> bool:
    """Whether ``table``'s round is a user's own folder (which publishes nothing: its
    results a round published are the round's, not republished from an earlier one)."""
    return not table.empty and own_folder(str(table["round"].iloc[0])) is not None


def republished_sentence(table: pd.DataFrame, firsts: Firsts) -> str | None:
    """How many of the workload's results (``table``: one round's) republish earlier ones,
    by the round first showing them; None where none does."""
    if not firsts or table.empty:
        return None
    keys = [key_of(r) for _, r in table.iterrows()]
    rounds = pd.Series([firsts[k] for k in keys if k in firsts])
    if rounds.empty:
        return None
    round_name, workload = str(table["round"].iloc[0]), str(table["workload"].iloc[0])
    by_round = rounds.value_counts()
    parts = joined(f"{int(by_round[r])} in {r}" for r in sorted(by_round.index))
    verb = agreeing(len(rounds), "was", "were")
    results = counted(len(table), f"{display_name(workload)} result")
    if _is_own(table):
        return (
            f"Published results: {len(rounds)} of your folder {round_name}'s {results} "
            f"{verb} published by MLCommons ({parts}; the same runs); this report analyses "
            "your folder as it is, while `gpuscale trends` counts each result once, in the "
            "published round showing it."
        )
    return (
        f"Republished results: {len(rounds)} of {round_name}'s {results} {verb} first "
        f"published in an earlier round ({parts}) and published again unchanged (the same "
        f"runs); this report analyses {round_name} as MLCommons published it, while "
        "`gpuscale trends` counts each result once, in the round that first showed it."
    )
