"""The software stack a result ran, from its system's ``framework`` field (as submitters
write it: ``PyTorch NVIDIA Release 24.04``, ``tf2.0``, ``NGC MXNet 22.09 , NGC PyTorch
22.09``, ``tinygrad, commit b554...``), and whether two results' frameworks differ.

Two results on the same accelerators at the same count (or on one submitter system)
differ by their software and the rest of the system, not by the accelerator: where their
frameworks share no name (one field may name several, for the benchmarks a system ran),
the frameworks are said too. A version change within one framework is not told apart.

The names and how the fields write them are data (``data/frameworks.csv``): a row per
pattern (a regular expression on the lower-cased field), with a field it matches as
written, the round and submitter that wrote it, and every round whose systems' fields it
matches (``rounds``, of v0.7, v1.1 and v3.0 to v5.0).
"""

from __future__ import annotations

import csv
import functools
import re
from importlib import resources

import pandas as pd

FRAMEWORKS_FILE = "frameworks.csv"


@functools.cache
def framework_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(framework name, how the fields write it) from ``data/frameworks.csv``, read once:
    a name's rows' patterns joined (``tensorflow|tenorflow|\\btf\\d|\\btf\\b``)."""
    text = (resources.files("gpuscale") / "data" / FRAMEWORKS_FILE).read_text(encoding="utf-8")
    patterns: dict[str, list[str]] = {}
    for row in csv.DictReader(text.splitlines()):
        patterns.setdefault(row["name"], []).append(row["pattern"])
    return tuple((name, re.compile("|".join(each))) for name, each in patterns.items())


def framework_names(text: object) -> tuple[str, ...]:
    """The frameworks a ``framework`` field names, in the order it writes them
    (``NGC MXNet 22.09 , NGC PyTorch 22.09`` -> MXNet, PyTorch); a field naming none of
    these: its first word (``LLMBoost 1.1.0`` -> LLMBoost); () where it is empty."""
    field = "" if text is None or text != text else str(text).strip()  # NaN != NaN
    if not field:
        return ()
    low = field.lower()
    found = [(m.start(), name) for name, rx in framework_patterns() if (m := rx.search(low))]
    if not found:
        return (re.split(r"[\s,;]+", field)[0],)
    return tuple(name for _, name in sorted(found))


def frameworks_differ(a: object, b: object) -> bool:
    """Whether two ``framework`` fields surely name other frameworks: both name some and
    none in common (a field of several that shares one may be the same stack)."""
    one, other = set(framework_names(a)), set(framework_names(b))
    return bool(one and other) and not one & other


def frameworks_text(a: object, b: object) -> str:
    """``PyTorch -> TensorFlow``: the two fields' frameworks, where they differ; ""
    otherwise."""
    if not frameworks_differ(a, b):
        return ""
    return f"{'/'.join(framework_names(a))} -> {'/'.join(framework_names(b))}"


def with_framework(frame: pd.DataFrame, systems: pd.DataFrame | None) -> pd.DataFrame:
    """``frame`` (results: a scores table) with a ``framework`` column, each row's
    system's field in ``systems`` by (round, org, system_id), the first where a system is
    described twice; "" where ``systems`` (None: not given) lacks the system or the field.
    A scaling table built from these scores keeps it (``metrics.workload_scaling_table``)."""
    keys = ["round", "org", "system_id"]
    if systems is None or systems.empty or "framework" not in systems:
        return frame.assign(framework="")
    named = systems[[*keys, "framework"]].drop_duplicates(keys)
    joined = frame[keys].merge(named, on=keys, how="left")
    return frame.assign(framework=joined["framework"].fillna("").astype(str).to_numpy())


def reference_framework(table: pd.DataFrame) -> pd.Series:
    """Each row's reference's ``framework`` field (its row in ``table``: ``reference_org``
    and ``reference_system_id``); "" where the reference or the column is not there."""
    if "framework" not in table or "reference_org" not in table:
        return pd.Series("", index=table.index, dtype=object)
    key = table["org"].astype(str) + "/" + table["system_id"].astype(str)
    field = dict(zip(key, table["framework"].fillna("").astype(str), strict=True))
    ref = table["reference_org"].astype(str) + "/" + table["reference_system_id"].astype(str)
    return ref.map(lambda k: field.get(k, "")).astype(object)


def against_reference_software(framework: object, reference: object) -> str:
    """``PyTorch against the reference's TensorFlow`` where the two fields name other
    frameworks; "" otherwise."""
    if not frameworks_differ(framework, reference):
        return ""
    return (
        f"{'/'.join(framework_names(framework))} against the reference's "
        f"{'/'.join(framework_names(reference))}"
    )
