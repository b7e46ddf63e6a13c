"""Why throughput per device moves as it does between two counts of a plan, said as the
model's own terms (``gpuscale.planning.predict``): the throughput ratio of two counts is
the product of one factor per term of ``log y`` that moves with the count, the
per-device batch ``c log2(B / N)``, the shared shape ``s``, the family's own departure
``u_f`` and the anchor of a count the family ran, so the factors said multiply to the
ratio said."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import pairwise

from gpuscale.planning.records import PlanRow, WorkloadFit, counts_run
from gpuscale.quantities import counted, decimals_apart, format_minutes, joined, number


def _counts(values: list[int]) -> str:
    return ", ".join(f"{v:,}" for v in values)


def more_than_shown(count: int, noun: str, lead: str = " and ", shown: int = 3) -> str:
    """What a list cut to its first ``shown`` items leaves out: `` and 2 others``; "" where
    it leaves out none."""
    if count <= shown:
        return ""
    return f"{lead}{counted(count - shown, noun)}"


def samples_per_devices(batch: float) -> tuple[int, int] | None:
    """A per-device batch as ``(m, k)``: ``m`` samples per ``k`` devices, ``k`` a power of
    two (model parallel groups of ``k`` devices, or ``k`` of them, run ``m`` samples a
    step); None where it is no such fraction (a count no power of two divides)."""
    if not batch > 0:
        return None
    share = Fraction(batch).limit_denominator(MOST_DEVICES)
    k = share.denominator
    if k & (k - 1) or abs(float(share) - batch) > 1e-9 * batch:
        return None
    return share.numerator, k


MOST_DEVICES = 1 << 16  # the finest share said as a fraction (65,536 devices per sample)


def per_device(batch: float) -> str:
    """A per-device batch as a user runs it: ``61`` samples per device, or below one,
    ``1 sample per 8 devices`` or ``3 samples per 4 devices`` (several devices share each
    sample: model or tensor parallel); a share that is no such fraction (a global batch of
    40 on 316 devices) ``1 sample per 7.90 devices``, to 2 decimals, never rounded to the
    whole devices the JSON's ``batch_per_accelerator`` does not hold."""
    if batch >= 1 or not batch > 0:
        return number(batch)
    share = samples_per_devices(batch)
    if share is None:
        devices = 1 / batch
        whole = round(devices)
        if abs(devices - whole) <= 1e-9 * devices:  # 1 sample per 3 devices
            return f"1 sample per {whole:,} devices"
        return f"1 sample per {devices:,.2f} devices"
    if share[0] == 1:
        return f"1 sample per {share[1]:,} devices"
    return f"{share[0]:,} samples per {share[1]:,} devices"


def batch_sign(fit: WorkloadFit) -> str:
    """Where the free fit's batch slope had the sign the term's mechanism cannot give (a
    larger per-device batch slower per sample, ``gpuscale.planning.workload``): what it
    found, on what results, and that the plan assumes no batch effect; else ""."""
    free = fit.get("batch_slope_free", fit["batch_slope"])
    if not free > 0 or fit["batch_slope"] != 0:
        return ""
    cells: dict[tuple[str, int], set[float]] = {}
    for name, family in fit["families"].items():
        for s in family["systems"]:
            cells.setdefault((name, int(s[3])), set()).add(float(s[5]))
    mixed = sorted((k for k, v in cells.items() if len(v) > 1), key=lambda k: (k[1], k[0]))
    same = (
        f"only {joined(f'{f} at {n:,}' for f, n in mixed)} ran two per-device batches at one count"
        if mixed
        else "no family ran two per-device batches at one count"
    )
    curve = fit["batch_curve"]
    ends = [(2**x, 2 ** (y - x)) for x, y in zip(curve["log2_n"], curve["log2_b"], strict=True)]
    (n0, b0), (n1, b1) = ends[0], ends[-1]
    moves = (
        f"elsewhere the per-device batch moves with the count (the workload's typical, "
        f"{per_device(b0)} at {round(n0):,} and {per_device(b1)} at {round(n1):,}), which the "
        "shape of scaling follows too"
    )
    return (
        f"Per-device batch: the fit of {counted(fit['systems'], 'result')} of "
        f"{fit['workload']} found each doubling of it {100 * (math.exp(free) - 1):.0f}% "
        f"slower per sample (slope {free:+.3f}), the opposite of the term's mechanism "
        f"(more samples per device and step share each gradient exchange); {same}; "
        f"{moves}: not trusted, the plan assumes no effect of the per-device batch on "
        "throughput (slope 0)."
    )


def factors(family: str, a: PlanRow, b: PlanRow, batch_detail: str = "") -> str:
    """The factors (throughput per device at ``b`` over ``a``) each term of the model
    contributes to 3 decimals (so they multiply to the ratio said to 2), the largest
    (farthest from x1, either way) first, those that round to x1.000 left out:
    ``x0.347 from the shape of scaling shared by the families, x0.758 from the per-device
    batch (96 -> 6) ...``; ``batch_detail`` is said after the per-device batch's
    counts."""
    anchored = sorted({int(c) for r in (a, b) for c in r.get("anchor_counts", [])})
    words = {
        "batch": (
            f"the per-device batch ({per_device(a['batch_per_accelerator'])} -> "
            f"{per_device(b['batch_per_accelerator'])}{batch_detail})"
        ),
        "shared": "the shape of scaling shared by the families",
        "own": f"{family}'s own departure from that shape",
        "anchor": f"{family}'s newest results at {_counts(anchored)} sitting off the model's line",
    }
    moves = sorted(
        ((a[f"log_{part}"] - b[f"log_{part}"], what) for part, what in words.items()),
        key=lambda m: -abs(m[0]),
    )
    said = [f"x{math.exp(m):.3f} from {what}" for m, what in moves]
    said = [s for s in said if not s.startswith("x1.000 ")]
    if not said:
        return "no term of the model moving it by 0.05% or more"
    return joined(said)


def efficiency_note(fit: WorkloadFit, family: str, rows: list[PlanRow]) -> str:
    """Why throughput per device moves as it does, over the rows with a time: the ratio of
    the last to the first, and of the first rise, each as the product of the model's
    terms (:func:`factors`), the largest first (the per-device batch is one of them, said
    with the global batch it comes from); a rise with no larger per-device batch also
    says which part of the model raised it and on what results (:func:`_rise_reason`)."""
    rows = [r for r in rows if math.isfinite(r["throughput_efficiency"])]
    if len(rows) < 2:
        return ""
    first, last = rows[0], rows[-1]
    c = fit["batch_slope"]
    batch = (
        f"; the global batch assumed goes {number(first['global_batch'])} -> "
        f"{number(last['global_batch'])}"
    )
    if c < 0:
        batch += (
            f", and each halving of the per-device batch costs "
            f"{100 * (1 - math.exp(c)):.0f}% of throughput per device, the gradient "
            "exchange being shared by fewer samples"
        )
    share = last["throughput_efficiency"]
    text = (
        f"Throughput per device at {int(last['accelerators']):,} is {share:.2f} of "
        f"{int(first['accelerators']):,}'s; the {share:.2f} is the product of "
        + factors(family, first, last, batch)
    )
    rises = [
        (a, b)
        for a, b in pairwise(rows)
        if b["throughput_efficiency"] > a["throughput_efficiency"] * 1.01
    ]
    if rises:
        a, b = rises[0]
        ratio = b["throughput_efficiency"] / a["throughput_efficiency"]
        why = (
            "the product above"
            if (a, b) == (first, last)
            else f"x{ratio:.2f}: the product of {factors(family, a, b)}"
        )
        # the ends to the digits that show the rise (a 1% rise of 0.30 reads 0.301 -> 0.304)
        k = decimals_apart(a["throughput_efficiency"], b["throughput_efficiency"])
        text += (
            f"; it rises from {int(a['accelerators']):,} to {int(b['accelerators']):,} "
            f"({a['throughput_efficiency']:.{k}f} -> {b['throughput_efficiency']:.{k}f}, {why})"
        )
        # a larger per-device batch is one of the factors said, in its place by size
        if not b["batch_per_accelerator"] > a["batch_per_accelerator"] * 1.01:
            text += " with no larger per-device batch: " + _rise_reason(fit, family, a, b)
    return text + "."


def _rise_reason(fit: WorkloadFit, family: str, a: dict, b: dict) -> str:
    """What raised throughput per device from row ``a`` to row ``b``: the part of the
    model (``gpuscale.planning.predict``) whose log device-minutes fell most, said with
    the counts it rests on (only counts that were run)."""
    moves = {part: b[f"log_{part}"] - a[f"log_{part}"] for part in ("anchor", "own", "shared")}
    part = min(moves, key=lambda k: moves[k])
    low, high = int(a["accelerators"]), int(b["accelerators"])
    own = fit["families"].get(family)
    ran = counts_run(own)
    if part == "anchor":
        at = sorted({int(c) for r in (a, b) for c in r.get("anchor_counts", [])})
        return (
            f"{family}'s newest results at {_counts(at)} sit off the model's line (a count "
            "the family ran keeps k/(k+1) of its k newest results' distance from it, a count "
            "between two it ran the distance interpolated in log2 N)"
        )
    if part == "own":
        inside = [c for c in ran if low <= c <= high]
        if inside:
            return (
                f"{family}'s own results at {_counts(inside)} ran faster than the shape "
                "shared by the families says"
            )
        return (
            f"{family}'s own departure from the shared shape, fitted on its results at "
            f"{_counts(ran)}, carried to counts it never ran"
        )
    by_count: dict[int, set[str]] = {}
    for name, fam in fit["families"].items():
        for c in fam["counts"]:
            by_count.setdefault(int(c), set()).add(name)
    inside = sorted(c for c in by_count if low <= c <= high)
    if inside:
        names = sorted(set().union(*(by_count[c] for c in inside)))
        more = more_than_shown(len(names), "other")
        return (
            "the shape of scaling shared by the families gains there, fitted on the results "
            f"of {', '.join(names[:3])}{more} at {_counts(inside)}"
        )
    below = [c for c in by_count if c < low]
    above = [c for c in by_count if c > high]
    nearest = sorted(below)[-2:] or sorted(above)[:2]
    how = (
        f"interpolated between {max(below):,} and {min(above):,}"
        if below and above
        else f"its line from the nearest counts run ({_counts(nearest)}) continued"
    )
    return (
        "the shape of scaling shared by the families gains there, and no family ran "
        f"{fit['workload']} from {low:,} to {high:,}: the shape there is {how}"
    )


# a time this much above its smaller count's is a rise the table shows (4 figures)
TURN = 1.001


def time_turn_notes(fit: WorkloadFit, family: str, rows: list[PlanRow]) -> list[str]:
    """A sentence per count at which the planned time to train, having risen with more
    devices, falls again (``a`` -> ``b`` slower, ``b`` -> ``c`` faster): a turn of the
    fitted law (time = samples to converge at the global batch / throughput), never of a
    measurement, said with the two terms it is made of from ``b`` to ``c``: the samples
    growing with the batch and throughput per device moving by the model's terms
    (:func:`factors`; a rise also why, :func:`_rise_reason`)."""
    timed = sorted(
        (r for r in rows if math.isfinite(r["time_to_train_min"])),
        key=lambda r: r["accelerators"],
    )
    out = []
    for a, b, c in zip(timed, timed[1:], timed[2:], strict=False):
        t_a, t_b, t_c = (r["time_to_train_min"] for r in (a, b, c))
        if not (t_b > t_a * TURN and t_b > t_c * TURN):
            continue
        n_a, n_b, n_c = (int(r["accelerators"]) for r in (a, b, c))
        per_device_ratio = c["throughput_efficiency"] / b["throughput_efficiency"]
        samples = c["expected_to_converge"] / b["expected_to_converge"]
        grows = (
            f"the samples to converge grow x{samples:.2f} with the global batch "
            f"({number(b['global_batch'])} -> {number(c['global_batch'])})"
            if math.isfinite(samples)
            else f"the global batch goes {number(b['global_batch'])} -> {number(c['global_batch'])}"
        )
        moves = f"throughput per device moves x{per_device_ratio:.3f} ({factors(family, b, c)})"
        if per_device_ratio > 1:
            moves += ": " + _rise_reason(fit, family, b, c)
        out.append(
            f"Time to train rises from {n_a:,} to {n_b:,} devices "
            f"({format_minutes(t_a, digits=4)} -> {format_minutes(t_b, digits=4)}) and falls "
            f"again from {n_b:,} to {n_c:,} ({format_minutes(t_c, digits=4)}): a turn of the "
            "fitted law (time = samples to converge at the global batch / throughput), not "
            f"of results measured there; from {n_b:,} to {n_c:,} {grows} while {moves}."
        )
    return out
