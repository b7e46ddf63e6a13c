"""``equilibrium_sentences`` and ``references_text``: the words ``analyze`` prints under a
workload's table, made by the library as plain strings (the CLI only prints them).
Hand-built analyses with sentences written out by hand; like with like first, and a pick
over all systems that compares hardware carries its caution in the same line."""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.analyze import (
    AnalysisOptions,
    WorkloadAnalysis,
    analyze,
)
from gpuscale.analysis.equilibrium import Equilibrium, Pick
from gpuscale.analysis.metrics import Reference
from gpuscale.analysis.terminal import equilibrium_sentences, references_text
from gpuscale.tables import Criterion

from .tables import round_of, scores


def pick(criterion: Criterion, n: int, minutes: float, e: float, family: str = "H100") -> Pick:
    return Pick(
        criterion=criterion,
        label=criterion.label(0.8),
        org="Acme",
        submitter="Acme",
        system_id=f"acme_{n}",
        system_name=f"Acme Box{n}",
        accelerator_family=family,
        accelerators=n,
        time_to_train_min=minutes,
        normalized_efficiency=e,
    )


def analysis(families: list[str], overall: Equilibrium, by_family: list[Equilibrium]):
    refs = [Reference("Acme", "Acme", f"ref_{f}", f, 8, 20.0) for f in families]
    return WorkloadAnalysis(
        round="v4.1",
        workload="bert",
        references=refs,
        table=pd.DataFrame(
            {
                "org": "Acme",
                "system_id": ["acme_64", "acme_1024"],
                "accelerator_family": families[0],
                "accelerators": [64, 1024],
                "time_to_train_min": [5.25, 0.5],
                "normalized_efficiency": [0.912, 0.504],
                "reference_org": "Acme",
                "reference_system_id": f"ref_{families[0]}",
                "outlier": "",  # as analyze's table has it: no system an outlier
            }
        ),
        clustering=None,  # type: ignore[arg-type]  # not read by the sentences
        equilibrium=overall,
        by_family=by_family,
    )


KNEE = pick(Criterion.KNEE, 64, 5.25, 0.912)
SPEED = pick(Criterion.SPEED_X_EFFICIENCY, 1024, 0.5, 0.504)
THRESHOLD = pick(Criterion.EFFICIENCY_THRESHOLD, 64, 5.25, 0.912)


def test_each_family_first_then_every_pick_over_all_systems() -> None:
    overall = Equilibrium("bert", "all", 0.8, ["Acme/acme_64"], KNEE, SPEED, THRESHOLD)
    family = Equilibrium("bert", "H100", 0.8, [], KNEE, SPEED, None)
    lines = equilibrium_sentences(analysis(["H100"], overall, [family]))
    assert lines[0] == "within H100 (most counts): knee 64, speed x efficiency 1,024"
    assert lines[1:4] == [
        "over all systems, knee: Acme Box64 (64 x H100, 5.25 min, E' 0.91)",
        "over all systems, speed x efficiency: Acme Box1024 (1,024 x H100, 0.5 min, E' 0.50)",
        "over all systems, E' >= 0.8 x best: Acme Box64 (64 x H100, 5.25 min, E' 0.91)",
    ]
    assert lines[4].startswith("agreement over all systems: ")
    assert lines[4].endswith("; Pareto front: 1 system")  # was "1 systems"


def test_under_the_answer_its_picks_are_not_said_again() -> None:
    """``answered``: the answer's table above holds the picks of the family that ran the
    most counts and over all systems; another family's picks and the agreement stay."""
    overall = Equilibrium("bert", "all", 0.8, ["Acme/acme_64"], KNEE, SPEED, THRESHOLD)
    own = Equilibrium("bert", "H100", 0.8, [], KNEE, SPEED, None)
    other = Equilibrium("bert", "MI300X", 0.8, [], pick(Criterion.KNEE, 8, 9.0, 0.9, "MI300X"))
    result = analysis(["H100", "MI300X"], overall, [own, other])
    whole, answered = equilibrium_sentences(result), equilibrium_sentences(result, answered=True)
    assert answered == [x for x in whole if not x.startswith(("within H100", "over all"))]
    assert [x.split(":")[0] for x in answered] == ["within MI300X", "agreement over all systems"]


def test_a_per_family_reference_picks_only_the_knee_across_families() -> None:
    overall = Equilibrium("bert", "all", 0.8, [], KNEE, SPEED, THRESHOLD)
    empty = Equilibrium("bert", "MI300X", 0.8)  # a family with no pick says nothing
    lines = equilibrium_sentences(analysis(["H100", "MI300X"], overall, [empty]))
    assert lines[0].startswith("over all systems: knee only; speed x efficiency and E' ")
    assert lines[1] == "over all systems, knee: Acme Box64 (64 x H100, 5.25 min, E' 0.91)"
    assert [x for x in lines if x.startswith(("within", "over all systems, speed"))] == []
    assert lines[-1].startswith("agreement over all systems: ")


def test_a_pick_across_families_carries_its_caution() -> None:
    # H100 at 4..64 (reference: the slowest at 4) and one faster B200 at 8: over all
    # systems the E' threshold can only name the B200, a faster chip, not scaling
    frame = scores(
        [
            ("h4a", "H100", 4, 100.0),
            ("h4b", "H100", 4, 98.0),
            ("h8", "H100", 8, 52.0),
            ("h16", "H100", 16, 28.0),
            ("h64", "H100", 64, 9.0),
            ("b8", "B200", 8, 20.0),
        ]
    )
    tables = round_of(frame)
    result = analyze(tables, ["bert"], AnalysisOptions(n_boot=100))[0]
    lines = equilibrium_sentences(result)
    assert lines[0].startswith("within H100 (most counts): ")
    threshold = next(x for x in lines if x.startswith("over all systems, E' >= 0.8 x best"))
    assert "(8 x B200" in threshold
    assert threshold.endswith(
        "; caution: a B200 system against an H100 reference: E' there measures hardware "
        "generations, not scaling"
    )


def test_references_text_names_each_familys_reference() -> None:
    result = analysis(["H100", "MI300X"], Equilibrium("bert", "all", 0.8), [])
    assert references_text(result) == (
        "Acme/ref_H100 (8 x H100, 20 min), Acme/ref_MI300X (8 x MI300X, 20 min)"
    )
