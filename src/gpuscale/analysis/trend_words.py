"""The trend rows of one workload (``analysis.trends``) in words, for the report: each
family's best time round by round, and each note once, with the rows it is about."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from gpuscale.analysis.critical_batch import ERA_STEP, round_target
from gpuscale.analysis.software import frameworks_text
from gpuscale.quantities import ends_alike, filled, format_minutes, number
from gpuscale.tables import round_key


@dataclass(frozen=True, slots=True)
class TimeSplit:
    """A best time at one count in two rounds, split exactly: time is samples to converge
    over throughput, so the earlier time over the later is the samples' ratio (earlier over
    later) times the throughputs' (later over earlier). Another global batch changes the
    samples a result needs (v4.1's Stable Diffusion RCPs added batch 256), which is no
    software's doing; the split holds where both count in one unit."""

    times_min: tuple[float, float]
    batches: tuple[float, float]  # global batch, NaN where unknown
    samples: tuple[float, float]  # samples to converge, NaN where unknown or flagged
    units: tuple[str, str]  # what each counts (``convergence_unit``)
    # the reference runs' samples to converge at the later global batch by each round's
    # rules (E_R(B), ``analysis.critical_batch``), NaN where a round has no RCPs
    references: tuple[float, float] = (math.nan, math.nan)

    @property
    def rules_moved(self) -> bool:
        """Whether the rounds' reference convergence at one batch differs by more than
        ``ERA_STEP`` in log: fewer samples to converge are then partly the rules' (Stable
        Diffusion v4.1 -> v5.0 at 256: 2.23M -> 1.79M samples), not the submission's."""
        a, b = self.references
        known = all(math.isfinite(v) and v > 0 for v in (a, b))
        return known and abs(math.log(a / b)) > ERA_STEP

    @property
    def compared(self) -> bool:
        """Both samples known, positive, in one unit: the split holds."""
        known = all(math.isfinite(v) and v > 0 for v in (*self.samples, *self.times_min))
        return known and self.units[0] == self.units[1] != ""

    @property
    def samples_ratio(self) -> float:
        """The earlier samples to converge over the later: above 1 fewer later."""
        return self.samples[0] / self.samples[1]

    @property
    def throughputs(self) -> tuple[float, float]:
        """Each round's throughput, in the unit per second."""
        return (
            self.samples[0] / (60 * self.times_min[0]),
            self.samples[1] / (60 * self.times_min[1]),
        )

    @property
    def batch_changed(self) -> bool:
        """Both batches known and not the same."""
        a, b = self.batches
        return math.isfinite(a) and math.isfinite(b) and a != b


def change_cause(split: TimeSplit, software: str) -> str:
    """What a change of time rests on: ``1.25x fewer samples to converge (2,560,000 ->
    2,048,000, global batch 512 -> 256); 1.07x higher throughput (1,010 -> 1,076
    samples/s), software or host``, the larger first (the smaller "partly offset by" where
    they pull apart); ``software`` alone (what differs at
    the same accelerators) where neither batch nor samples tell otherwise; where the batch
    changed but the samples do not compare, said so."""
    a, b = split.batches
    batch = f"global batch {a:,.0f} -> {b:,.0f}" if split.batch_changed else ""
    if not split.compared:
        if not batch:
            return software
        why = (
            f"counted in {split.units[0]}, then {split.units[1]}"
            if all(split.units) and split.units[0] != split.units[1]
            else "samples to converge unknown"
        )
        return f"{software} and samples to converge ({batch}; not split: {why})"
    unit = split.units[0]
    s0, s1 = split.samples
    x0, x1 = split.throughputs
    ratio = split.samples_ratio
    rules = ""
    if split.rules_moved:
        r0, r1 = split.references
        rules = f"; the reference runs' own at batch {b:,.0f}: {_alike(r0, r1)}, the rules moved"
    samples = (
        f"{_times(ratio, 'fewer', 'more')} {unit} to converge"
        f" ({_alike(s0, s1)}{filled(', {}', batch)}{rules})"
    )
    rate = (
        f"{_times(x1 / x0, 'higher', 'lower')} throughput ({number(x0, 4)} -> "
        f"{number(x1, 4)} {unit}/s), {software}"
    )
    parts = [samples, rate] if abs(math.log(ratio)) >= abs(math.log(x1 / x0)) else [rate, samples]
    # the smaller factor against the larger: only partly undoing it (a factor written 1.00x
    # either way is no change, and offsets nothing)
    still = _unchanged(ratio) or _unchanged(x1 / x0)
    joint = "; " if still or (ratio >= 1) == (x1 >= x0) else "; partly offset by "
    return joint.join(parts)


def _alike(before: float, after: float) -> str:
    """``before -> after`` written alike: two whole counts in full (3,036,528 -> 3,017,784),
    else both to 3 significant figures (2,470,000 -> 2,420,000, never a mean's rounded
    2,470,000 beside a count's exact 2,418,302, which reads as precise as it is not)."""
    if float(before).is_integer() and float(after).is_integer():
        return f"{number(before)} -> {number(after)}"
    low, high = ends_alike(*(float(f"{v:.3g}") if abs(v) >= 1000 else v for v in (before, after)))
    return f"{low} -> {high}"


def _unchanged(factor: float) -> bool:
    """Whether ``factor`` is written 1.00x either way (:func:`_times`)."""
    return f"{max(factor, 1 / factor):.2f}" == "1.00"


def _times(factor: float, up: str, down: str) -> str:
    """``1.25x fewer`` (``up`` above 1), ``1.07x more`` (``down``): a factor either way;
    ``the same`` for one written 1.00x."""
    if _unchanged(factor):
        return "the same"
    return f"{factor:.2f}x {up}" if factor >= 1 else f"{1 / factor:.2f}x {down}"


def target_moved(workload: str, earlier: str, later: str) -> str:
    """``quality target 0.72 (0.712 in v0.7): its times do not compare with v0.7's``
    where the rulesets of two rounds set another quality target for ``workload`` (BERT:
    0.712 in v0.7, 0.720 from v1.0 on), "" where they set the same or either sets none:
    a time to another target is not the same training."""
    before, now = round_target(earlier, workload), round_target(later, workload)
    if before is None or now is None or before == now:
        return ""
    return (
        f"quality target {now:g} ({before:g} in {earlier}): its times do not compare "
        f"with {earlier}'s"
    )


def family_trends(rows: pd.DataFrame) -> list[str]:
    """``H100-SXM5-80GB: 5.31 min on 8 in v4.0, 5.39 min on 8 in v4.1 (1.02x the time
    at 8 from v4.0 to v4.1)``: one sentence per family seen in two rounds or more (the most
    rounds first), each round's best time at its most common count, from ``rows``; no
    ratio where the first and last rounds' rules set other quality targets
    (:func:`target_moved`: BERT 0.712 in v0.7, 0.720 from v1.0), said instead."""
    out = []
    groups = [(f, g) for f, g in rows.groupby("accelerator_family") if g["round"].nunique() > 1]
    groups.sort(key=lambda fg: (-fg[1]["round"].nunique(), str(fg[0])))
    for family, group in groups:
        group = group.sort_values("round", key=lambda c: c.map(round_key))
        said = ", ".join(
            f"{format_minutes(r.best_time_at_common_min)} on {int(r.common_accelerators):,} "
            f"in {r.round}"
            for r in group.itertuples(index=False)
        )
        first, last = group.iloc[0], group.iloc[-1]
        moved = target_moved(str(first["workload"]), str(first["round"]), str(last["round"]))
        if moved:  # another quality target: not the same training, no ratio
            said += f"; {moved}"
        elif (
            first["common_accelerators"] == last["common_accelerators"]
            # one round's rules (a folder of yours beside the round): not a change in time
            and round_key(str(first["round"])) != round_key(str(last["round"]))
        ):
            ratio = last["best_time_at_common_min"] / first["best_time_at_common_min"]
            said += (
                f" ({number(ratio)}x the time at {int(first['common_accelerators']):,} from "
                f"{first['round']} to {last['round']}{_software(first, last)})"
            )
        out.append(f"{family}: {said}")
    return out


def _software(first: pd.Series, last: pd.Series) -> str:
    """``, the same system: software`` where one system was the fastest at the count in
    both rounds (``system_at_common``), with the frameworks where they differ, the change
    split into samples to converge and throughput where the batch or samples changed
    (:func:`change_cause`); ", global batch 512 -> 256: ..." where the systems differ but
    the batch changed; "" otherwise."""
    split = TimeSplit(
        (_float(first, "best_time_at_common_min"), _float(last, "best_time_at_common_min")),
        (_float(first, "global_batch_at_common"), _float(last, "global_batch_at_common")),
        (
            _float(first, "samples_to_converge_at_common"),
            _float(last, "samples_to_converge_at_common"),
        ),
        (
            str(first.get("convergence_unit_at_common") or ""),
            str(last.get("convergence_unit_at_common") or ""),
        ),
    )
    system = first.get("system_at_common")
    same = bool(system) and system == last.get("system_at_common")
    frameworks = filled(
        " ({})", frameworks_text(first.get("framework_at_common"), last.get("framework_at_common"))
    )
    if not split.batch_changed:
        return f", the same system: software{frameworks}" if same else ""
    software = f"software{frameworks}" if same else "software or host"
    return f", {'the same system' if same else 'other systems'}: {change_cause(split, software)}"


def _float(row: pd.Series, column: str) -> float:
    """A row's ``column`` as a float, NaN where empty or absent."""
    value = row.get(column)
    return math.nan if value is None or pd.isna(value) else float(value)


def grouped_notes(rows: pd.DataFrame) -> list[str]:
    """Each clause of the rows' notes once: alone where the one row has it, with ``each
    row`` where several rows all do, else with the family and round of the rows that do
    (``each of`` them where several), so that a clause is never repeated, never read
    without the rows it is true of, and a count in it (``left out 1 republished result``)
    reads as each row's, not the rows' total."""
    where: dict[str, list[str]] = {}
    for r in rows.itertuples(index=False):
        for clause in filter(None, (c.strip() for c in str(r.note or "").split("; "))):
            where.setdefault(clause, []).append(f"{r.accelerator_family} {r.round}")

    def said(clause: str, rows_: list[str]) -> str:
        if len(rows_) == len(rows):
            return clause if len(rows_) == 1 else f"{clause} (each row)"
        return f"{clause} ({'each of ' if len(rows_) > 1 else ''}{', '.join(rows_)})"

    return [said(clause, rows_) for clause, rows_ in where.items()]
