"""Findings in words, generated from the numbers of one workload's analysis."""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.analyze import WorkloadAnalysis
from gpuscale.analysis.answers import per_family_reference
from gpuscale.analysis.crossing import (
    against_reference,
    hardware_difference,
    reference_family,
    scaling_family,
)
from gpuscale.analysis.decompose import (
    dominant_loss,
    expected_samples,
    family_decomposition,
    table_basis,
    within_family,
)
from gpuscale.analysis.equilibrium import fastest_per_count
from gpuscale.analysis.superlinear import REASONS
from gpuscale.analysis.terminal import stability_clause, untimed_sentences
from gpuscale.quantities import (
    article,
    counted,
    devices,
    filled,
    format_minutes,
    joined,
    named,
    number,
)
from gpuscale.report.republished_words import (
    Firsts,
    earlier_among,
    republished_sentence,
    since,
)
from gpuscale.report.system_names import shown_name
from gpuscale.tables import convergence_unit


def _count(value: float) -> str:
    """Samples (or tokens) as 3,461, epochs as 4.2."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _batch_clause(ref: pd.Series, row: pd.Series) -> str:
    """``global batch 256 -> 4,096, per device 32 -> 16; `` from the reference to ``row``,
    or nothing where either lacks its global batch or accelerators (v0.7's results
    record no global batch): the clause is left out rather than said as "nan"."""
    cells = [ref["global_batch_size"], ref["accelerators"], row["global_batch_size"]]
    cells.append(row["accelerators"])
    if any(pd.isna(c) for c in cells):
        return ""
    per_device = (  # 13,824, never 1.38e+04
        f"{number(ref['global_batch_size'] / ref['accelerators'])} -> "
        f"{number(row['global_batch_size'] / row['accelerators'])}"
    )
    return (
        f"global batch {ref['global_batch_size']:,.0f} -> {row['global_batch_size']:,.0f}, "
        f"per device {per_device}; "
    )


def family_scaling(table: pd.DataFrame, family: str) -> tuple[int, float, int, float] | None:
    """(N_small, 1.0, N_large, E') of a family's fastest systems: per-accelerator
    efficiency of its largest configuration relative to its smallest, independent of the
    reference rule. None when the family has a single accelerator count."""
    frontier = fastest_per_count(table[table["accelerator_family"] == family])
    if len(frontier) < 2:
        return None
    small, large = frontier.iloc[0], frontier.iloc[-1]
    ratio = (small["time_to_train_min"] * small["accelerators"]) / (
        large["time_to_train_min"] * large["accelerators"]
    )
    return int(small["accelerators"]), 1.0, int(large["accelerators"]), float(ratio)


def why_efficiency_falls(table: pd.DataFrame, family: str, basis: str = "expected") -> str | None:
    """The family's largest system decomposed against the family's own reference (the
    numbers ``analyze --reference family --decompose`` prints for it), in words that say
    what the throughput factor holds."""
    row = family_decomposition(table, family, basis)
    if row is None or pd.isna(row["convergence_factor"]):
        return None
    factor, share = dominant_loss(row)
    if factor == "none":
        return None
    ref = table[
        (table["org"] == row["reference_org"]) & (table["system_id"] == row["reference_system_id"])
    ].iloc[0]
    unit = row.get("convergence_unit")  # samples, epochs, steps or tokens (the ruleset's)
    if not isinstance(unit, str) or not unit:
        known = convergence_unit(str(row["benchmark"]), str(row["round"]))
        unit = str(known or "samples (or epochs)")
    if row["convergence_basis"] == "expected":
        column, source = "expected_samples_to_converge", f"{unit} to converge the RCPs predict"
        batch = ref["global_batch_size"]
        reference_samples = expected_samples(str(ref["round"]), str(ref["benchmark"]), batch)
    else:
        column, source = "samples_to_converge", f"measured {unit}"
        reference_samples = ref["samples_to_converge"]
    batches = _batch_clause(ref, row)
    return (
        f"Why efficiency falls within {family} (against its own reference, "
        f"{devices(ref['accelerators'], family)}): at {number(int(row['accelerators']))} "
        f"accelerators E' {row['normalized_efficiency']:.2f} = throughput efficiency "
        f"{row['throughput_efficiency']:.2f} x convergence factor "
        f"{row['convergence_factor']:.2f} ({batches}{source} "
        f"{_count(reference_samples)} -> {_count(row[column])}); {factor} "
        f"accounts for {share:.0%} of the loss. The throughput efficiency holds more than "
        "the hardware: evaluation inside the timed region, the per-device batch, the "
        "software and the communication."
    )


def superlinear_sentence(table: pd.DataFrame) -> str | None:
    """E' above 1 in words, from the one place that marks it
    (``gpuscale.analysis.superlinear``): how many, and why, per reason."""
    if "superlinear" not in table:
        return None
    counts = table["superlinear"][table["superlinear"] != ""].value_counts()
    if counts.empty:
        return None
    parts = "; ".join(f"{int(counts[code])} {REASONS[code]}" for code in counts.index)
    return (
        f"E' above 1 for {int(counts.sum())} of {len(table)} systems (marked in the table "
        f"and ringed in the E' figure): {parts}."
    )


def _overview(result: WorkloadAnalysis, reference_rule: str, firsts: Firsts) -> list[str]:
    """Who submitted, at what counts, against which reference, and the fastest system
    (each said first published in an earlier round where it was)."""
    table = result.table
    refs = "; ".join(
        f"{shown_name(table, r.org, r.system_id)} "
        f"({devices(r.accelerators, r.accelerator_family)}, "
        f"{format_minutes(r.time_to_train_min)}{since(firsts, r)}"
        f"{filled('; {}', r.score_reason)})"
        for r in result.references
    )
    fastest = table.loc[table["time_to_train_min"].idxmin()]
    ref_family = reference_family(table, fastest)
    caution = ref_family and against_reference(str(fastest["accelerator_family"]), ref_family)
    return [
        f"{counted(len(table), 'system')} from "
        f"{counted(table['submitter'].nunique(), 'submitter')}, "
        f"{number(int(table['accelerators'].min()))} to "
        f"{number(int(table['accelerators'].max()))} "
        f"accelerators. Reference ({reference_rule} rule): {refs}.",
        f"Fastest: {shown_name(table, fastest['org'], fastest['system_id'])} "
        f"({devices(fastest['accelerators'], fastest['accelerator_family'])}"
        f"{since(firsts, fastest)}) trains in "
        f"{format_minutes(fastest['time_to_train_min'])}, {number(fastest['speedup'])}x the "
        f"reference, at E' {fastest['normalized_efficiency']:.2f} against that reference"
        f"{filled('; caution: {}', caution)}.",
    ]


def _reference_caution(
    result: WorkloadAnalysis, reference_rule: str, big_family: str
) -> str | None:
    """A warning when the study's one reference is of another family than most systems."""
    table = result.table
    foreign = [r for r in result.references if r.accelerator_family != big_family]
    if reference_rule != "study" or len(result.references) != 1 or not foreign:
        return None
    top = float(table["normalized_efficiency"].max())
    # Only an E' above 1 can be mistaken for super-linear scaling.
    aside = f" (E' up to {number(top)} here is not super-linear scaling)" if top > 1.05 else ""
    return (
        f"Caution: the reference is {article(foreign[0].accelerator_family)} "
        f"{foreign[0].accelerator_family} system while most systems are {big_family}, "
        f"so E' mixes {hardware_difference(foreign[0].accelerator_family, big_family)}"
        f"{aside}; "
        "the family rule (--reference family) compares like with like."
    )


def _family_scaling_sentence(table: pd.DataFrame, big_family: str) -> str | None:
    scaling = family_scaling(table, big_family)
    if scaling is None:
        return None
    n_small, _, n_large, ratio = scaling
    return (
        f"Within {big_family} (the family that ran the most counts), the fastest system at "
        f"{number(n_large)} accelerators keeps {ratio:.0%} of the per-accelerator "
        f"efficiency of the fastest at {number(n_small)}."
    )


def _within_family_answer(result: WorkloadAnalysis, big_family: str, firsts: Firsts) -> str | None:
    """The answer like with like, first: each criterion's pick within the family that
    ran the most counts (the same whatever the reference rule: E' there changes by one factor)."""
    eq = next((e for e in result.by_family if e.scope == big_family), None)
    if eq is None or not eq.picks:
        return None
    group = result.table[result.table["accelerator_family"] == big_family]
    fastest = group.loc[group["time_to_train_min"].idxmin()]
    picks = "; ".join(
        f"{p.label} {number(p.accelerators)} ({named(p.submitter, p.system_name)}, "
        f"{format_minutes(p.time_to_train_min)}{since(firsts, p)})"
        for p in eq.picks
    )
    systems = f"{counted(len(group), 'system')}{earlier_among(group, firsts)}"
    return (
        f"Like with like, within {big_family} (the family that ran the most counts, {systems}): "
        f"fastest {number(int(fastest['accelerators']))} accelerators "
        f"({format_minutes(fastest['time_to_train_min'])}{since(firsts, fastest)}); {picks}."
    )


def _overall_equilibrium_sentence(result: WorkloadAnalysis, firsts: Firsts) -> str | None:
    """The E' threshold's pick over all systems (under one reference), with its caution
    in the same sentence where it compares hardware rather than scaling."""
    if per_family_reference(result):  # E' is per family: no threshold across families
        return None
    eq = result.equilibrium
    if eq.efficiency_threshold is None:
        return None
    p = eq.efficiency_threshold
    caution = p.caution
    return (
        f"Over all systems, the largest configuration keeping E' >= {eq.threshold:g} x the "
        f"best is {devices(p.accelerators, p.accelerator_family)} "
        f"({named(p.submitter, p.system_name)}, {format_minutes(p.time_to_train_min)}"
        f"{since(firsts, p)}){filled('; caution: {}', caution)}."
    )


# what a system needs for its factors of E', and its name in words
_FACTOR_INPUTS = (
    ("global_batch_size", "global batch"),
    ("samples_to_converge", "samples-to-converge count"),
)


def _no_factors(row: pd.Series) -> str:
    """Why a system has no throughput or convergence factor: its own flag where the
    decomposition gave one, else its count's flag, else what its logs lack."""
    for column in ("decomposition_flag", "samples_to_converge_flag"):
        if isinstance(flag := row.get(column), str) and flag:
            return flag
    lacking = [what for column, what in _FACTOR_INPUTS if pd.isna(row.get(column))]
    return f"no {joined(lacking, 'or')} in its logs" if lacking else "no factor computed"


def undrawn_factors_sentence(table: pd.DataFrame, family: str) -> str | None:
    """The systems of ``family`` that the why-E'-falls figure leaves out, each with why
    (``report.convergence_figures.decomposition`` draws only a system with both factors;
    it left them out unsaid). None where it draws every one, or none (its place then
    says why)."""
    own = within_family(table, family, table_basis(table))
    if own.empty:
        return None
    off = own[own["throughput_efficiency"].isna() | own["convergence_factor"].isna()]
    if off.empty or len(off) == len(own):
        return None
    each = "; ".join(
        f"{named(r['submitter'], r['system_name'])} "
        f"({devices(r['accelerators'], r['accelerator_family'])}): {_no_factors(r)}"
        for _, r in off.iterrows()
    )
    return (
        f"The figure of why E' falls within {family} draws {len(own) - len(off)} of its "
        f"{counted(len(own), 'system')} (those with both factors); left out: {each}."
    )


def _cluster_sentence(result: WorkloadAnalysis) -> str | None:
    clustering = result.clustering
    if clustering.k <= 1:
        return None
    silhouette = clustering.silhouette
    shown = f" (silhouette {silhouette:.2f})" if silhouette == silhouette else ""
    held = filled("; {}", stability_clause(result))
    return f"K-means finds {clustering.k} clusters of behaviour{shown}{held}."


def workload_findings(
    result: WorkloadAnalysis,
    reference_rule: str,
    basis: str = "expected",
    firsts: Firsts | None = None,
) -> list[str]:
    """Sentences for the report's summary of one workload, the answer like with like
    first (within the family that ran the most counts). ``firsts``: the results first published in
    an earlier round (``report.republished_words.earlier_firsts``), said so where named,
    and counted once after the overview."""
    firsts = firsts or {}
    table = result.table
    big_family = scaling_family(table)
    found = [
        _reference_caution(result, reference_rule, big_family),
        superlinear_sentence(table),
        _family_scaling_sentence(table, big_family),
        why_efficiency_falls(table, big_family, basis),
        undrawn_factors_sentence(table, big_family),
        _overall_equilibrium_sentence(result, firsts),
        _cluster_sentence(result),
        # a run whose logged time cannot be true, said as analyze says it
        *(f"{line}." for line in untimed_sentences(table)),
    ]
    lead = _within_family_answer(result, big_family, firsts)
    overview = [*_overview(result, reference_rule, firsts), republished_sentence(table, firsts)]
    return [lead] * bool(lead) + [s for s in [*overview, *found] if s]
