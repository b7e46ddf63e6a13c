"""A plan faster than linear between two of its counts: a count planned more than the
devices added faster than a smaller count asked (time ratio above device ratio, i.e.
fewer accelerator-hours on more devices), whatever the cause, is said and judged against
the workload's measured results at those very counts.

The time ratio of two counts ``m < n`` over their device ratio is the product of the
throughput per device at ``n`` over ``m`` (the model's terms, ``throughput.factors``: a
larger per-device batch, more samples per device and step, is one) and of the samples to
converge at ``m``'s global batch over ``n``'s (``E(B)``: above 1 where ``n`` needs fewer
samples, below 1 where its larger global batch needs more). Where one submitter's own
results of a family in one round ran more than linearly from ``m`` to ``n`` (its fastest
at each: one software stack scaling), the plan is explained and the results named; where
none did, no data supports it, and the row is flagged (kept out of the Pareto front and
the stops-paying picks). A family's pair whose two results are of two submitters (no
submitter ran both counts) is said, with both submitters and global batches, but supports
nothing: its ratio is two stacks at two batches, not one system scaling, and submitters
of one accelerator differ by more than a plan's excess at one count (BERT on
H100-PCIe-80GB at 8 in v3.1: ASUSTeK 10.06 min, Lenovo 18.51 min, 1.84x). Unlike the
other flags (``gpuscale.planning.limits``) this one is of two rows, so of the counts asked.
"""

from __future__ import annotations

import math

from gpuscale.planning.crossing import crossing_words
from gpuscale.planning.records import Facts, PlanRow, SystemEntry, WorkloadFit
from gpuscale.planning.throughput import factors
from gpuscale.plausibility import LINEAR_SPREAD
from gpuscale.quantities import decimals_apart, filled, format_minutes, joined, named, number
from gpuscale.tables import measures

# The flag of a row planned faster than linear where no measured result was (no count in
# it: rows group by reason, the sentence under the table gives each count's numbers).
UNSUPPORTED = (
    "more than linear: over a smaller count asked, and no submitter's own results of one "
    "family in one round ran so between those counts (or an octave out): the model's line, "
    "not a finding"
)


def hours(point: PlanRow) -> float:
    """Accelerator-minutes of a planned count (what linear scaling keeps constant)."""
    return point["accelerators"] * point["time_to_train_min"]


def beyond_linear(points: list[PlanRow], timed: list[int]) -> dict[int, tuple[int, float]]:
    """``{k: (j, excess)}``: each timed point ``k`` planned faster than linear against a
    smaller timed count ``j`` asked, the ``j`` of the largest ``excess`` (time ratio over
    device ratio, above 1 by more than ``LINEAR_SPREAD``, the run-to-run spread: 1.000003x is
    the arithmetic's, not a finding)."""
    out = {}
    for k in timed:
        n = points[k]["accelerators"]
        above = [
            (hours(points[j]) / hours(points[k]), j)
            for j in timed
            if points[j]["accelerators"] < n
            and hours(points[j]) > hours(points[k]) * (1 + LINEAR_SPREAD)
        ]
        if above:
            excess, j = max(above)
            out[k] = (j, excess)
    return out


def measured(fit: WorkloadFit, m: int, n: int) -> list[Facts]:
    """Each family's pairs of results in one round at counts ``m' < n'`` spanning ``m`` to
    ``n`` from at most an octave out (``m / 2 <= m' <= m``, ``n <= n' <= 2 n``): each
    submitter's own pair (its fastest at each count, ``one_submitter`` True) where one ran
    both counts, else the family's fastest at each, of two submitters (``one_submitter``
    False); ``family``, ``round``, ``low`` and ``high`` (the results, ``[round, submitter,
    system, devices, minutes, batch]``), ``speedup`` (time at ``m'`` over time at ``n'``)
    and ``excess`` (over ``n' / m'``); the pairs at ``m`` and ``n`` themselves first, then
    the largest excess first."""
    out = []
    for family, own in fit["families"].items():
        fastest: dict[tuple[str, str, int], SystemEntry] = {}  # (round, submitter, count)
        for s in own["systems"]:
            for key in ((s[0], str(s[1]), int(s[3])), (s[0], "", int(s[3]))):  # "": any
                if key not in fastest or s[4] < fastest[key][4]:
                    fastest[key] = s
        pairs = [
            (round_name, submitter, a, b)
            for (round_name, submitter, low), a in fastest.items()
            for (other, theirs, high), b in fastest.items()
            if (other, theirs) == (round_name, submitter) and m / 2 <= low <= m < n <= high <= 2 * n
        ]
        # the counts of a round that one submitter ran both of: its own pair says them
        ran_both = {(r, a[3], b[3]) for r, submitter, a, b in pairs if submitter}
        for round_name, submitter, a, b in pairs:
            if not submitter and (round_name, a[3], b[3]) in ran_both:
                continue
            speedup = measures.speedup(a[4], b[4])
            excess = measures.normalized_efficiency(speedup, int(b[3]), int(a[3]))
            pair = {"family": family, "round": round_name, "low": a, "high": b}
            out.append(pair | {"speedup": speedup, "excess": excess, "one_submitter": a[1] == b[1]})
    return sorted(out, key=lambda e: ((e["low"][3], e["high"][3]) != (m, n), -e["excess"]))


def judged(fit: WorkloadFit, points: list[dict], timed: list[int]) -> dict[int, dict]:
    """``{k: {against, excess, measured, supported, across, flagged}}`` for each point
    planned faster than linear (:func:`beyond_linear`): ``measured`` the families' results
    spanning both counts (:func:`measured`), ``supported`` one submitter's own pairs that
    ran more than linearly, ``across`` the pairs of two submitters that did (said, no
    support: two stacks at two global batches), ``flagged`` where no submitter's own pair
    did: a planned excess is the model's line, not a measurement's noise, so every one
    beyond the run-to-run spread that no result ran is flagged, as every super-linear E' is
    said (``gpuscale.analysis.superlinear``)."""
    out = {}
    for k, (j, excess) in beyond_linear(points, timed).items():
        both = measured(fit, int(points[j]["accelerators"]), int(points[k]["accelerators"]))
        faster = [e for e in both if e["excess"] > 1]
        supported = [e for e in faster if e["one_submitter"]]
        out[k] = {
            "against": j,
            "excess": excess,
            "measured": both,
            "supported": supported,
            "across": [e for e in faster if not e["one_submitter"]],
            "flagged": not supported,
        }
    return out


def _ratios(a: PlanRow, b: PlanRow) -> tuple[str, str, str]:
    """(time ratio, device ratio, excess) of ``b`` over ``a``, each to the decimals that
    keep the time ratio apart from the device ratio."""
    time_ratio = a["time_to_train_min"] / b["time_to_train_min"]
    device_ratio = b["accelerators"] / a["accelerators"]
    k = decimals_apart(time_ratio, device_ratio)
    excess = time_ratio / device_ratio
    return f"{time_ratio:.{k}f}", number(device_ratio), f"{excess:.{decimals_apart(excess, 1)}f}"


def cell(a: PlanRow, b: PlanRow, verdict: Facts) -> str:
    """The table's ``beyond_linear`` cell of row ``b``: how much faster than ``a`` on how
    many times the devices, and the measured result that supports it (with the hardware
    generation and software stack that comparison crosses: ``verdict["crossing"]``), or
    none."""
    time_ratio, device_ratio, _ = _ratios(a, b)
    said = f"{time_ratio}x as fast as {int(a['accelerators']):,} on {device_ratio}x the devices"
    if not verdict["supported"]:
        across = verdict.get("across") or []
        return f"{said}; no result measured so" + filled(
            " by one submitter; across two: {}", across and _across(across[0])
        )
    best = verdict["supported"][0]
    crosses = filled(", {}", crossing_words(verdict.get("crossing") or {}))
    return f"{said}; measured so: {best['family']} {_pair(best)} ({best['round']}){crosses}"


def _pair(e: Facts) -> str:
    """``16 -> 32: 2.59x on 2x`` for a measured pair."""
    low, high = int(e["low"][3]), int(e["high"][3])
    return f"{low:,} -> {high:,}: {e['speedup']:.2f}x on {number(high / low)}x"


def _across(e: Facts) -> str:
    """``H100-PCIe-80GB 2 -> 8: 4.16x on 4x (v3.0; Quanta_Cloud_Technology at a global
    batch of 512 -> ASUSTeK at 768)``: a pair of two submitters, each with its batch."""
    low, high = e["low"], e["high"]
    batches = [f" at {round(x[5]):,}" if x[5] == x[5] else "" for x in (low, high)]
    batches[0] = batches[0].replace(" at ", " at a global batch of ")
    return f"{e['family']} {_pair(e)} ({e['round']}; {low[1]}{batches[0]} -> {high[1]}{batches[1]})"


def _result(entry: SystemEntry) -> str:
    """``Dell XE8545 17.87 min at a global batch of 448`` (minutes as the table shows them)."""
    batch = f" at a global batch of {round(entry[5]):,}" if entry[5] == entry[5] else ""
    return f"{named(entry[1], entry[2])} {format_minutes(entry[4], digits=4)}{batch}"


def _largest(family: str, a: PlanRow, b: PlanRow) -> str:
    """Which part of the excess is largest, in words (a factor above 1)."""
    parts = {
        "a larger per-device batch (more samples per device and step)": a["log_batch"]
        - b["log_batch"],
        "the shape of scaling shared by the families": a["log_shared"] - b["log_shared"],
        f"{family}'s own departure from that shape": a["log_own"] - b["log_own"],
        f"{family}'s results sitting off the model's line": a["log_anchor"] - b["log_anchor"],
        "fewer samples to converge": math.log(a["convergence"] / b["convergence"]),
    }
    return max(parts, key=lambda p: parts[p])


def linear_notes(fit: WorkloadFit, family: str, rows: list[PlanRow]) -> list[str]:
    """One sentence per row planned faster than linear (its ``beyond_linear`` verdict):
    the time and device ratios, the excess as throughput per device (its model terms)
    times samples to converge, its largest part, and the measured results at both counts
    that support it, or that none does (the row flagged)."""
    out = []
    for b in rows:
        verdict = b.get("beyond_linear_verdict")
        if not verdict:
            continue
        a = rows[verdict["against"]]
        low, high = int(a["accelerators"]), int(b["accelerators"])
        time_ratio, device_ratio, excess = _ratios(a, b)
        throughput = math.exp(a["log_y"] - b["log_y"])
        samples = a["convergence"] / b["convergence"]
        none = ", so none of it comes from fewer samples to converge" if samples < 1 else ""
        text = (
            f"{high:,} accelerators are planned {time_ratio}x as fast as {low:,} on "
            f"{device_ratio}x the devices, more than linear ({excess}x): throughput per "
            f"device {throughput:.3f}x {low:,}'s (the product of {factors(family, a, b)}) "
            f"times x{samples:.3f} from the samples to converge ("
            + (
                f"the global batch {number(a['global_batch'])} -> {number(b['global_batch'])} "
                f"needs {1 / samples:.3f}x the samples{none}"
                if a["global_batch"] != b["global_batch"]
                else f"the same global batch, {number(a['global_batch'])}"
            )
            + f"); the largest part is {_largest(family, a, b)}"
        )
        shown = [
            f"{e['family']} in {e['round']}, {_result(e['low'])} on {int(e['low'][3]):,} -> "
            f"{_result(e['high'])} on {int(e['high'][3]):,} "
            f"({e['speedup']:.2f}x on {number(e['high'][3] / e['low'][3])}x)"
            for e in (
                verdict["supported"] or [e for e in verdict["measured"] if e["one_submitter"]]
            )[:3]
        ]
        span = f"from {low:,} (or down to {low / 2:g}) to {high:,} (or up to {2 * high:,})"
        if verdict["supported"]:
            crosses = crossing_words(verdict.get("crossing") or {})
            text += f". Measured more than linear {span}: {joined(shown)}" + filled(
                "; the first, against the plan's family, {}", crosses
            )
        else:
            across = verdict.get("across") or []
            text += (
                f". No submitter's own results of a family ran more than linearly {span} in "
                "one round"
                + filled(" ({})", joined(shown))
                + filled(
                    "; only pairs of two submitters did, each two software stacks at two "
                    "global batches, not one system scaling: {}",
                    joined(_across(e) for e in across[:3]),
                )
                + ": flagged, kept out of the Pareto front and the stops-paying picks"
            )
        out.append(text + ".")
    return out
