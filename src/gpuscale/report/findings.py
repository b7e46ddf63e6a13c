"""Findings in words, generated from the numbers of one workload's analysis."""

from __future__ import annotations

import re

import pandas as pd

from gpuscale.analysis.analyze import WorkloadAnalysis
from gpuscale.analysis.answers import per_family_reference
from gpuscale.analysis.decompose import dominant_loss, family_decomposition
from gpuscale.analysis.equilibrium import fastest_per_count
from gpuscale.analysis.superlinear import REASONS
from gpuscale.quantities import article, devices, named, number

# Chip -> architecture (vendors' naming): what "the same hardware generation" means.
_ARCHITECTURE = {
    "V100": "Volta",
    "A100": "Ampere",
    "A800": "Ampere",
    "A30": "Ampere",
    "A40": "Ampere",
    "A10": "Ampere",
    "A5000": "Ampere",
    "H100": "Hopper",
    "H200": "Hopper",
    "H800": "Hopper",
    "GH200": "Hopper",
    "B100": "Blackwell",
    "B200": "Blackwell",
    "GB200": "Blackwell",
    "B300": "Blackwell",
    "GB300": "Blackwell",
    "L4": "Ada Lovelace",
    "L40": "Ada Lovelace",
    "L40S": "Ada Lovelace",
    "4090": "Ada Lovelace",
    "MI300X": "CDNA 3",
    "MI325X": "CDNA 3",
}


def _fmt_minutes(minutes: float) -> str:
    return f"{minutes * 60:.0f} s" if minutes < 1 else f"{number(minutes)} min"


def chip_of(family: str) -> str:
    """The chip a family's name starts with, vendor dropped (``H100-NVL-94GB`` -> ``H100``,
    ``NVIDIA A30-PCIE-24GB`` -> ``A30``, ``RTX 4090`` -> ``4090``, ``TPU-v5p`` -> ``TPU-V5P``)."""
    words = re.split(r"[\s-]+", family.strip().upper())
    words = [w for w in words if w not in ("NVIDIA", "AMD", "INTEL", "GOOGLE", "RTX", "RX")]
    if words and words[0] == "TPU" and len(words) > 1:
        return f"TPU-{words[1]}"
    return words[0] if words else family


def hardware_difference(a: str, b: str) -> str:
    """How two accelerator families differ, as what E' "mixes": ``two form factors of one
    chip (H100), the same generation``, ``two chips of one generation (Hopper: H200,
    H100)``, else ``hardware generations``."""
    chip_a, chip_b = chip_of(a), chip_of(b)
    if chip_a == chip_b:
        return f"two form factors of one chip ({chip_a}), the same generation"
    arch_a, arch_b = _ARCHITECTURE.get(chip_a), _ARCHITECTURE.get(chip_b)
    if arch_a is not None and arch_a == arch_b:
        return f"two chips of one generation ({arch_a}: {chip_a}, {chip_b})"
    return "hardware generations"


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


def why_efficiency_falls(table: pd.DataFrame, family: str) -> str | None:
    """The family's largest system decomposed against the family's own reference (the
    numbers ``analyze --reference family --decompose`` prints for it), in words."""
    row = family_decomposition(table, family)
    if row is None or pd.isna(row["convergence_factor"]):
        return None
    factor, share = dominant_loss(row)
    if factor == "none":
        return None
    ref = table[
        (table["org"] == row["reference_org"]) & (table["system_id"] == row["reference_system_id"])
    ].iloc[0]
    return (
        f"Why efficiency falls within {family} (against its own reference, "
        f"{devices(ref['accelerators'], family)}): at {number(int(row['accelerators']))} "
        f"accelerators E' {row['normalized_efficiency']:.2f} = throughput efficiency "
        f"{row['throughput_efficiency']:.2f} x convergence factor "
        f"{row['convergence_factor']:.2f} (global batch {ref['global_batch_size']:,.0f} -> "
        f"{row['global_batch_size']:,.0f}); {factor} accounts for {share:.0%} of the loss."
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


def _overview(result: WorkloadAnalysis, reference_rule: str) -> list[str]:
    """Who submitted, at what counts, against which reference, and the fastest system."""
    table = result.table
    refs = "; ".join(
        f"{r.submitter} {r.system_id} ({devices(r.accelerators, r.accelerator_family)}, "
        f"{_fmt_minutes(r.time_to_train_min)})"
        for r in result.references
    )
    fastest = table.loc[table["time_to_train_min"].idxmin()]
    return [
        f"{len(table)} systems from {table['submitter'].nunique()} submitters, "
        f"{number(int(table['accelerators'].min()))} to "
        f"{number(int(table['accelerators'].max()))} "
        f"accelerators. Reference ({reference_rule} rule): {refs}.",
        f"Fastest: {named(fastest['submitter'], fastest['system_name'])} "
        f"({devices(fastest['accelerators'], fastest['accelerator_family'])}) trains in "
        f"{_fmt_minutes(fastest['time_to_train_min'])}, {number(fastest['speedup'])}x the "
        f"reference, at E' {fastest['normalized_efficiency']:.2f} against that reference.",
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
        f"Within {big_family} (the most submitted family), the fastest system at "
        f"{number(n_large)} accelerators keeps {ratio:.0%} of the per-accelerator "
        f"efficiency of the fastest at {number(n_small)}."
    )


def _equilibrium_sentence(result: WorkloadAnalysis, big_family: str) -> str | None:
    """The E' threshold's pick (within the biggest family under per-family references)."""
    eq, within = result.equilibrium, ""
    if per_family_reference(result):  # E' is per family: the equilibrium is a family's
        eq = next((e for e in result.by_family if e.scope == big_family), None)
        within = f" within {big_family} (E' is per family, so not across families)"
    if eq is None or eq.efficiency_threshold is None:
        return None
    p = eq.efficiency_threshold
    return (
        f"Equilibrium{within}: the largest configuration keeping E' >= "
        f"{eq.threshold:g} x the best is {devices(p.accelerators, p.accelerator_family)} "
        f"({named(p.submitter, p.system_name)}, {_fmt_minutes(p.time_to_train_min)}); "
        f"{eq.agreement}."
    )


def _cluster_sentence(result: WorkloadAnalysis) -> str | None:
    clustering = result.clustering
    if clustering.k <= 1:
        return None
    silhouette = clustering.silhouette
    shown = f" (silhouette {silhouette:.2f})." if silhouette == silhouette else "."
    return f"K-means finds {clustering.k} clusters of behaviour{shown}"


def workload_findings(result: WorkloadAnalysis, reference_rule: str) -> list[str]:
    """Sentences for the report's summary of one workload."""
    table = result.table
    big_family = table["accelerator_family"].value_counts().index[0]
    found = [
        _reference_caution(result, reference_rule, big_family),
        superlinear_sentence(table),
        _family_scaling_sentence(table, big_family),
        why_efficiency_falls(table, big_family),
        _equilibrium_sentence(result, big_family),
        _cluster_sentence(result),
    ]
    return _overview(result, reference_rule) + [s for s in found if s]
