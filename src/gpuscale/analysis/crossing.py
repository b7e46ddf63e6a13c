"""Like with like: whether a pick compares hardware rather than scaling, and in what words.

A criterion's pick *crosses* when the comparison behind it mixes accelerator families
(which includes form factors of one chip: H100-SXM and H100-NVL are two families): a
pick whose family is not its reference's, whatever picked it (its E' measures the
hardware), or a knee over a fastest-per-count frontier made of several families up to the pick (the
bend of T against N is then where the hardware changes). Such a pick is said so in the
same sentence wherever it is offered (``analyze``, the report's answer and summaries).
A pick whose E' above 1 is no scaling (``gpuscale.analysis.superlinear``: above its
peers too, a slow reference, a faster system at the reference's count, fewer
accelerators than the reference) gets its caution the same way, within a family too:
cautions go by kind, not by family.
"""

from __future__ import annotations

import re

import pandas as pd

from gpuscale.analysis.frontier import fastest_per_count
from gpuscale.analysis.pick import Pick
from gpuscale.analysis.software import against_reference_software, reference_framework
from gpuscale.analysis.superlinear import sentence, superlinear
from gpuscale.hardware.accelerators import family_power_w, normalise_accelerator
from gpuscale.quantities import article, filled, joined
from gpuscale.tables import Criterion

# Chip -> architecture (vendors' naming): what "the same hardware generation" means.
_ARCHITECTURE = {
    "V100": "Volta",
    "V100S": "Volta",
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


def chip_of(family: str) -> str:
    """The chip a family's name starts with, vendor dropped (``H100-NVL-94GB`` -> ``H100``,
    ``NVIDIA A30-PCIE-24GB`` -> ``A30``, ``RTX 4090`` -> ``4090``, ``TPU-v5p`` -> ``TPU-V5P``)."""
    words = re.split(r"[\s-]+", family.strip().upper())
    words = [w for w in words if w not in ("NVIDIA", "AMD", "INTEL", "GOOGLE", "RTX", "RX")]
    if words and words[0] == "TPU" and len(words) > 1:
        return f"TPU-{words[1]}"
    return next(iter(words), family)


def hardware_difference(a: str, b: str) -> str:
    """How two accelerator families differ, as what E' "mixes": ``two power limits of one
    part (A100-SXM4-80GB: 400 W, 500 W), the same chip and form``, ``two memory sizes of
    one chip (A100: 80 GB, 40 GB), the same form``, ``two form factors of one chip (H100),
    the same generation``, ``two chips of one generation (Hopper: H200,
    H100)``, else ``hardware generations``."""
    (part_a, watts_a), (part_b, watts_b) = family_power_w(a), family_power_w(b)
    if part_a == part_b and a != b:
        limits = ", ".join(
            f"{w:,.0f} W" if w is not None else "unwritten" for w in (watts_a, watts_b)
        )
        return f"two power limits of one part ({part_a}: {limits}), the same chip and form"
    chip_a, chip_b = chip_of(a), chip_of(b)
    one, other = normalise_accelerator(part_a), normalise_accelerator(part_b)
    if (
        chip_a == chip_b
        and one.form_factor == other.form_factor
        and one.memory_gb != other.memory_gb
    ):
        sizes = f"{one.memory_gb} GB, {other.memory_gb} GB"
        return f"two memory sizes of one chip ({chip_a}: {sizes}), the same form"
    if chip_a == chip_b:
        return f"two form factors of one chip ({chip_a}), the same generation"
    arch_a, arch_b = _ARCHITECTURE.get(chip_a), _ARCHITECTURE.get(chip_b)
    if arch_a is not None and arch_a == arch_b:
        return f"two chips of one generation ({arch_a}: {chip_a}, {chip_b})"
    return "hardware generations"


def scaling_family(table: pd.DataFrame) -> str:
    """The family whose results answer "how many accelerators": the one measured at the
    most distinct accelerator counts, then with the most scored systems, then the
    alphabetically first ("" for no systems). A family of many systems at two counts
    holds less of the scaling than one of fewer systems at many counts."""
    if table.empty:
        return ""
    grouped = table.groupby("accelerator_family", observed=True)["accelerators"]
    counts, systems = grouped.nunique(), grouped.size()
    return min(counts.index, key=lambda f: (-counts[f], -systems[f], str(f)))


# Where a count lies among those measured: no fewer (or no more) was ever run, so the
# answer there may lie beyond what the data saw.
FEWEST, MOST = "fewest", "most"


def measured_edge(table: pd.DataFrame, accelerators: int) -> str:
    """``FEWEST`` where ``accelerators`` is the smallest count ``table``'s systems ran
    (outliers too: a count they ran was measured), ``MOST`` where it is the largest, ""
    between them or where they ran one count only (no scaling: nothing is picked there)."""
    counts = table["accelerators"]
    if counts.nunique() < 2:
        return ""
    return {int(counts.min()): FEWEST, int(counts.max()): MOST}.get(int(accelerators), "")


def edge_note(edge: str, accelerators: int, family: str = "") -> str:
    """``8 is the fewest accelerators GB200 ran: fewer were never measured``, for a pick
    at an ``edge`` of the counts ``family`` ran ("": over all systems); "" for none."""
    if not edge:
        return ""
    who = family or "any system"
    fewer = "fewer" if edge == FEWEST else "more"
    return f"{accelerators:,} is the {edge} accelerators {who} ran: {fewer} were never measured"


def pick_crossing(pick: Pick, table: pd.DataFrame) -> str:
    """Why ``pick`` (a pick over ``table``) compares hardware rather than scaling, in
    words; "" when it compares like with like. Every criterion's pick is read as the
    system it is (:func:`system_crossing`: another family than its reference); a knee
    first by the frontier it bends on; a pick by E' then by an E' above 1 that is no
    scaling, an E' threshold's by the best E' that sets its floor."""
    mine = table[(table["org"] == pick.org) & (table["system_id"] == pick.system_id)]
    if pick.criterion is Criterion.KNEE:  # read off T and N alone: no E' to doubt
        return _bend(pick, table) or system_crossing(table, mine)
    if mine.empty or (family := reference_family(table, mine.iloc[0])) is None:
        return ""
    if crossing := system_crossing(table, mine):
        return crossing
    if code := _not_scaling(table, mine):
        said = f"its E' {pick.normalized_efficiency:.2f} above 1 is {code}: {sentence(code)}"
        software = against_reference_software(
            mine.iloc[0].get("framework"), reference_framework(table).loc[mine.index[0]]
        )
        return said + filled(" ({})", software)
    best = table.loc[table["normalized_efficiency"].idxmax()]
    best_family = str(best["accelerator_family"])
    if pick.criterion is Criterion.EFFICIENCY_THRESHOLD and best_family != family:
        return f"its floor is set by the best E', that of {against_reference(best_family, family)}"
    if pick.criterion is Criterion.EFFICIENCY_THRESHOLD:
        return _reference_itself(table, mine.iloc[0], family)
    return ""


def _reference_itself(table: pd.DataFrame, row: pd.Series, family: str) -> str:
    """An E' threshold's pick that is the reference system itself (E' 1 by definition)
    where every larger system is of another family: none of its own family ran more, and
    the others fall under the floor as other hardware, not by scaling (v4.1 GPT-3: 64 x
    B200 against H100s and TPUs); "" otherwise."""
    reference = (row.get("reference_org"), row.get("reference_system_id"))
    own = (row["org"], row["system_id"]) == reference
    larger = table[table["accelerators"] > row["accelerators"]]
    others = sorted(set(larger["accelerator_family"].astype(str)))
    if not own or larger.empty or family in others:
        return ""
    return (
        f"it is the reference itself (E' 1 by definition): every larger system is another "
        f"family ({joined(others)}), whose E' against it measures the hardware, not scaling"
    )


def system_crossing(table: pd.DataFrame, mine: pd.DataFrame) -> str:
    """Why the system ``mine`` (its row of ``table``) compares hardware rather than
    scaling, whatever picked it (a criterion, or the fastest time): its family is not its
    reference's, so its E' measures the hardware; "" where it is or has no reference."""
    if mine.empty:
        return ""
    row = mine.iloc[0]
    family = reference_family(table, row)
    if family is None or family == row["accelerator_family"]:
        return ""
    return against_reference(str(row["accelerator_family"]), family)


def _bend(pick: Pick, table: pd.DataFrame) -> str:
    """A knee's caution where the fastest systems up to it mix families, or where those
    past it are of another family than those up to it (Kneedle reads the whole frontier,
    so a family taking over past the knee moves it too: v5.0 Llama 3.1 405B, GB200 alone
    has no knee, with the H100 systems past 2,048 the frontier bends at 2,048): the bend
    of T against N is then where the hardware changes; "" where it is one family."""
    frontier = fastest_per_count(table)
    upto = frontier[frontier["accelerators"] <= pick.accelerators]
    families = list(dict.fromkeys(upto["accelerator_family"]))
    if len(families) >= 2:
        return (
            f"the fastest systems up to {pick.accelerators:,} accelerators mix "
            f"{joined(families)}, so this bend is where the hardware changes"
        )
    past = frontier[frontier["accelerators"] > pick.accelerators]
    beyond = list(dict.fromkeys(past["accelerator_family"]))
    if set(beyond) <= set(families):
        return ""
    return (
        f"the fastest systems are {joined(families)} up to {pick.accelerators:,} "
        f"accelerators and {joined(beyond)} past it, so this bend is where the hardware "
        "changes"
    )


def _not_scaling(table: pd.DataFrame, mine: pd.DataFrame) -> str:
    """The ``superlinear`` code of the picked row where its E' above 1 is not scaling
    (every code but ``within spread``, which is 1 within noise); "" elsewhere."""
    if "superlinear" in table:
        codes = table["superlinear"]
    elif "reference_accelerators" in table:
        codes = superlinear(table)
    else:
        return ""
    code = str(codes.get(mine.index[0], "") or "")
    return {"within spread": ""}.get(code, code)


def reference_family(table: pd.DataFrame, row: pd.Series) -> str | None:
    """The accelerator family of a row's reference system (None when not in ``table``)."""
    ref = table[
        (table["org"] == row["reference_org"]) & (table["system_id"] == row["reference_system_id"])
    ]
    return next(iter(ref["accelerator_family"].astype(str)), None)


def against_reference(family: str, reference: str) -> str:
    """``a B200 system against an RTX A5000 reference: E' there measures hardware
    generations, not scaling``; "" for one family."""
    if family == reference:
        return ""
    return (
        f"{article(family)} {family} system against {article(reference)} {reference} "
        f"reference: E' there measures {hardware_difference(family, reference)}, not scaling"
    )
