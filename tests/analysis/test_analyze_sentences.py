"""``equilibrium_sentences`` and ``references_text``: the words ``analyze`` prints under a
workload's table, made by the library as plain strings (the CLI only prints them).
Hand-built analyses with sentences written out by hand."""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.analyze import (
    WorkloadAnalysis,
    equilibrium_sentences,
    references_text,
)
from gpuscale.analysis.equilibrium import Equilibrium, Pick
from gpuscale.analysis.metrics import Reference
from gpuscale.tables import Criterion


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
        table=pd.DataFrame(),
        clustering=None,  # type: ignore[arg-type]  # not read by the sentences
        equilibrium=overall,
        by_family=by_family,
    )


KNEE = pick(Criterion.KNEE, 64, 5.25, 0.912)
SPEED = pick(Criterion.SPEED_X_EFFICIENCY, 1024, 0.5, 0.504)
THRESHOLD = pick(Criterion.EFFICIENCY_THRESHOLD, 64, 5.25, 0.912)


def test_one_reference_states_every_pick_then_each_family() -> None:
    overall = Equilibrium("bert", "all", 0.8, ["Acme/acme_64"], KNEE, SPEED, THRESHOLD)
    family = Equilibrium("bert", "H100", 0.8, [], KNEE, SPEED, None)
    lines = equilibrium_sentences(analysis(["H100"], overall, [family]))
    assert lines[:3] == [
        "knee: Acme Box64 (64 x H100, 5.25 min, E' 0.91)",
        "speed x efficiency: Acme Box1024 (1024 x H100, 0.50 min, E' 0.50)",
        "E' >= 0.8 x best: Acme Box64 (64 x H100, 5.25 min, E' 0.91)",
    ]
    assert lines[3].startswith("agreement: ") and lines[3].endswith("; Pareto front: 1 systems")
    assert lines[4:] == ["within H100: knee 64, speed x efficiency 1,024"]


def test_a_per_family_reference_picks_only_the_knee_across_families() -> None:
    overall = Equilibrium("bert", "all", 0.8, [], KNEE, SPEED, THRESHOLD)
    empty = Equilibrium("bert", "MI300X", 0.8)  # a family with no pick says nothing
    lines = equilibrium_sentences(analysis(["H100", "MI300X"], overall, [empty]))
    assert lines[0].startswith("over all systems: knee only; speed x efficiency and E' ")
    assert lines[1] == "knee: Acme Box64 (64 x H100, 5.25 min, E' 0.91)"
    assert [x for x in lines if x.startswith(("speed", "E'", "within"))] == []
    assert lines[-1].startswith("agreement: ")


def test_references_text_names_each_familys_reference() -> None:
    result = analysis(["H100", "MI300X"], Equilibrium("bert", "all", 0.8), [])
    assert references_text(result) == (
        "Acme/ref_H100 (8 x H100, 20.00 min), Acme/ref_MI300X (8 x MI300X, 20.00 min)"
    )
