"""Sentences where a plan's own rows would puzzle a reader, each computed from the rows
and the fits: a count whose calibrated interval excluded the family's own results there
(the interval is widened to hold them; say which, and what the planned time is), and a
global batch that falls as the count grows (say where it comes from)."""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

from gpuscale.planning.predict import ANCHOR_PRIOR, at_round, interpolate
from gpuscale.quantities import counted, joined, number


def _min(value: float) -> str:
    """Minutes to 4 significant digits, as the table and its "lean on" lines show them."""
    return f"{value:.4g}"


def _minutes(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{_min(low)} min" if low == high else f"{_min(low)}-{_min(high)} min"


def _level_since(own: dict[str, Any], since: str, level_round: str) -> str:
    """How far the fit moves the family's level from round ``since`` to the plan's."""
    step = at_round(own["round_level"], level_round) - at_round(own["round_level"], since)
    change = math.exp(step) - 1
    how = (
        f"{abs(change) * 100:.0f}% {'faster' if change < 0 else 'slower'} than"
        if abs(change) >= 0.005
        else "within 1% of its level"
    )
    return (
        f"the plan is at {level_round}'s level, where the fit puts the family {how} in "
        f"{since} (each round's step, fitted on all the family's results, is shrunk towards "
        "none by how many results support it)"
    )


def held_notes(fit: dict[str, Any], family: str, rows: list[dict[str, Any]]) -> list[str]:
    """One sentence per count whose calibrated interval excluded one of the family's own
    newest results there (``own_results``: the interval now holds them)."""
    own = fit["families"].get(family)
    out = []
    for r in rows:
        held = r.get("own_results") or []
        if not held or not math.isfinite(r["time_to_train_min"]):
            continue
        low, high = r["calibrated_low"], r["calibrated_high"]
        outside = sorted((s for s in held if not low <= s[4] <= high), key=lambda s: s[4])
        if not outside:
            continue
        n, k, since = int(r["accelerators"]), len(held), held[0][0]
        named = joined(f"{s[0]} {s[1]} {s[2]} ({_min(s[4])} min)" for s in outside[:3])
        what = f"{k} own results" if k > 1 else "own result"
        them = "them" if k > 1 else "it"
        text = (
            f"At {n:,}, {family}'s {what} of {since} there ran "
            f"{_minutes([s[4] for s in held])}, outside the calibrated interval "
            f"{_min(low)}-{_min(high)} min, so the interval is widened to "
            f"{_min(r['time_to_train_min_low'])}-{_min(r['time_to_train_min_high'])} min to "
            f"hold {them}: the planned {_min(r['time_to_train_min'])} min is the family's "
            f"level there (the model's line moved {k}/{k + ANCHOR_PRIOR:g} of the way to "
            f"{'it' if k == 1 else 'their mean'}), and one system's time at a count spreads "
            f"wider with its CPUs, software and submitter; outside: {named}"
        )
        if own and since != fit["round"]:
            text += "; " + _level_since(own, since, fit["round"])
        out.append(text + ".")
    return out


def _typical(fit: dict[str, Any], n: float) -> float:
    curve = fit["batch_curve"]
    return 2 ** interpolate(curve["log2_n"], curve["log2_b"], math.log2(n), extend=True)


def batch_drop_notes(fit: dict[str, Any], family: str, rows: list[dict[str, Any]]) -> list[str]:
    """Where the global batch assumed falls from one count to the next larger one: the
    family's own choices, or the workload's typical batch (and which families ran it)."""
    own = fit["families"].get(family)
    ran = {int(c) for c in own["counts"]} if own else set()
    timed = [r for r in rows if math.isfinite(r["time_to_train_min"])]
    out = []
    for a, b in pairwise(timed):
        if not b["global_batch"] < a["global_batch"]:
            continue
        na, nb = int(a["accelerators"]), int(b["accelerators"])
        text = (
            f"The global batch assumed falls from {number(a['global_batch'])} at {na:,} to "
            f"{number(b['global_batch'])} at {nb:,}: "
        )
        if {na, nb} <= ran:
            out.append(text + f"{family}'s own newest submissions chose these batches.")
            continue
        by = [f for f, fam in fit["families"].items() if str(nb) in fam["counts"]]
        more = f" and {counted(len(by) - 3, 'other')}" if len(by) > 3 else ""
        source = (
            f"the median of the newest choices of {joined(sorted(by)[:3])}{more} there"
            if by
            else "interpolated between the counts run"
        )
        where = f"{family} never ran {nb:,}" if own else f"{family} never ran the workload"
        ratio = b["global_batch"] / _typical(fit, nb)
        out.append(
            text + f"{where}, so its batch there is the workload's typical batch, which "
            f"falls from {round(_typical(fit, na)):,} at {na:,} to "
            f"{round(_typical(fit, nb)):,} at {nb:,} ({source}), times {ratio:.2f}."
        )
    return out


def _why_outside(fit: dict[str, Any], family: str, row: dict[str, Any], cited: dict) -> str:
    """Why a result the plan cites at its own count lies outside the count's interval."""
    own = fit["families"].get(family)
    newest = row.get("own_results") or []
    if newest and cited["round"] != newest[0][0]:
        return (
            f"it is of {cited['round']}, older than the family's {newest[0][0]} "
            f"{'results' if len(newest) > 1 else 'result'} at this count "
            f"({_minutes([s[4] for s in newest])}), which the count's level is anchored on "
            f"and the interval holds; {_level_since(own, cited['round'], fit['round'])}"
        )
    return "one system's time at a count spreads wider with its CPUs, software and submitter"


def cited_notes(fit: dict[str, Any], family: str, rows: list[dict[str, Any]]) -> list[str]:
    """One sentence per result a count leans on (``nearest``, at that very count) that
    lies outside the count's interval, with why (an older round, another family), and one
    per count planned slower than a result of the family on fewer devices
    (``faster_fewer``, :func:`gpuscale.planning.result.faster_fewer`), with the plan at
    that result's count."""
    out, others = [], {}
    for r in rows:
        if not math.isfinite(r["time_to_train_min"]):
            continue
        n, low, high = (
            int(r["accelerators"]),
            r["time_to_train_min_low"],
            r["time_to_train_min_high"],
        )
        for s in r["nearest"]:
            # the cited minutes are rounded to 3 decimals
            if s["accelerators"] != n or low - 1e-3 <= s["time_to_train_min"] <= high + 1e-3:
                continue
            if s["family"] != family:  # a family that never ran it leans on others'
                others.setdefault(n, []).append(s["family"])
                continue
            out.append(
                f"Cited at {n:,}: {s['round']} {s['submitter']} {s['system']} "
                f"({_min(s['time_to_train_min'])} min), outside the interval "
                f"{_min(low)}-{_min(high)} min: {_why_outside(fit, family, r, s)}."
            )
        faster = r.get("faster_fewer")
        if not faster:
            continue
        entry, planned = faster
        m, ran = int(entry[3]), float(entry[4])
        text = (
            f"At {n:,} the planned {_min(r['time_to_train_min'])} min is slower than "
            f"{family} ran on {counted(m, 'device')} ({entry[0]} {entry[1]} {entry[2]}, "
            f"{_min(ran)} min): "
        )
        if planned > r["time_to_train_min"]:
            text += (
                f"that result is {100 * (1 - ran / planned):.0f}% faster than the plan at "
                f"{m:,} ({_min(planned)} min), the family's level there with its other "
                f"results and the shared shape; the plan at {n:,} follows that level, not "
                "the one result"
            )
        else:
            text += (
                f"the plan at {m:,} is {_min(planned)} min, faster than at {n:,} too: the "
                f"model's line gives no speed-up from {m:,} to {n:,} (more devices are "
                "planned slower, a count not worth buying)"
            )
        out.append(text + ".")
    if others:
        named = sorted({f for fs in others.values() for f in fs})
        out.insert(
            0,
            f"Of the results cited at {joined(f'{n:,}' for n in others)}, "
            f"{sum(map(len, others.values())):,} of other families ({joined(named)}) lie "
            f"outside the interval{'s' if len(others) > 1 else ''} there: {family} never ran "
            f"{fit['workload']}, so they show what ran there, not its level.",
        )
    return out
