"""Facts about each MLPerf Training workload that hold across rounds (names, convergence
units), round names, and which workloads a command shows of a scores table by default."""

from __future__ import annotations

import csv
import datetime as dt
import functools
import importlib.util
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from gpuscale.quantities import joined
from gpuscale.tables.codes import Code

if TYPE_CHECKING:
    import pandas as pd


class Unit(Code):
    """What a benchmark's convergence is counted in (the RCP checker's unit)."""

    SAMPLES = "samples"
    EPOCHS = "epochs"
    STEPS = "steps"  # Stable Diffusion in ruleset 3.1.0 (the RCP checker reads step_num)
    # GPT-3: mlperf-logging's rcp_checker/training_4.1.0/rcps_gpt3.json (3.0.0 on) keys
    # its points "Epochs to converge" but counts tokens: 1,157,627,904 = 368 steps x 1,536
    # sequences x 2,048 tokens (its max_sequence_length); its runs' epoch_num too (v4.1,
    # NVIDIA at global batch 2,904: 1,231,110,144 = 207 x 2,904 x 2,048)
    TOKENS = "tokens"


@dataclass(frozen=True, kw_only=True, slots=True)
class Workload:
    """What stays true of a benchmark across rounds.

    ``name`` is the cross-round workload name (``retinanet`` for the ``ssd`` folder of
    v4.x); ``convergence_unit`` what samples to converge count; ``progress_key`` the
    evaluation metadata member the RCP checker reads the progress from
    (``mlperf_logging.rcp_checker.read_submission_file``: ``samples_count`` for the LLM
    benchmarks, else ``epoch_num``, which BERT fills with samples and GPT-3 with tokens;
    Stable Diffusion reads the step of the first passing FID/CLIP pair). ``unit_changes``:
    (first round, unit) where a ruleset changed the unit (the RCP files of the rulesets:
    3D U-Net counts epochs up to 3.0.0 and samples from 3.1.0; Stable Diffusion steps in
    3.1.0 only).
    """

    name: str
    display_name: str
    convergence_unit: Unit = Unit.EPOCHS
    progress_key: str = "epoch_num"
    unit_changes: tuple[tuple[str, Unit], ...] = ()


def _counted_in_samples(
    name: str, display_name: str, changes: tuple[tuple[str, Unit], ...] = ()
) -> Workload:
    """A workload whose convergence counts samples (``samples_count``): the LLM ones."""
    return Workload(
        name=name,
        display_name=display_name,
        convergence_unit=Unit.SAMPLES,
        progress_key="samples_count",
        unit_changes=changes,
    )


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(name="bert", display_name="BERT", convergence_unit=Unit.SAMPLES),
        _counted_in_samples("llama2_70b_lora", "Llama2 70B LoRA"),
        Workload(name="retinanet", display_name="RetinaNet"),
        Workload(name="ssd_resnet34", display_name="SSD-ResNet34"),
        _counted_in_samples(
            "stable_diffusion", "Stable Diffusion", (("v3.1", Unit.STEPS), ("v4.0", Unit.SAMPLES))
        ),
        Workload(name="dlrm_dcnv2", display_name="DLRM DCNv2"),
        Workload(name="dlrm", display_name="DLRM"),
        Workload(name="rgat", display_name="R-GAT"),
        Workload(name="gpt3", display_name="GPT-3 175B", convergence_unit=Unit.TOKENS),
        _counted_in_samples("llama31_405b", "Llama 3.1 405B"),
        _counted_in_samples("llama31_8b", "Llama 3.1 8B"),
        _counted_in_samples("flux1", "Flux.1"),
        _counted_in_samples("gpt_oss_20b", "GPT-OSS 20B"),
        _counted_in_samples("deepseekv3_671b", "DeepSeek-V3 671B"),
        _counted_in_samples("qwen35_397b_grpo", "Qwen3.5 397B GRPO"),
        _counted_in_samples("dlrmv4", "DLRMv4"),
        Workload(name="resnet", display_name="ResNet-50"),
        Workload(name="unet3d", display_name="3D U-Net", unit_changes=(("v3.1", Unit.SAMPLES),)),
        Workload(name="maskrcnn", display_name="Mask R-CNN"),
        Workload(name="rnnt", display_name="RNN-T"),
        Workload(name="minigo", display_name="MiniGo"),
        Workload(name="gnmt", display_name="GNMT"),
        Workload(name="transformer", display_name="Transformer"),
        Workload(name="ncf", display_name="NCF"),
    )
}

# Result folders renamed between rounds: the old name is the same workload.
RENAMED: dict[str, str] = {"ssd": "retinanet", "gnn": "rgat"}
# Benchmark names that held different workloads in different rulesets, told apart by the
# closed quality target (``gpuscale.mlperf.benchmarks``): ``ssd`` was SSD-ResNet34 (COCO
# mAP 0.23, rulesets <= 1.1.0) before it was RetinaNet (mAP 0.34, 2.0.0 on).
TARGETS: dict[str, tuple[tuple[str, float], ...]] = {
    "ssd": (("ssd_resnet34", 0.23), ("retinanet", 0.34)),
}
# Folder names the official summarizer reads as another benchmark's name.
FOLDER_ALIASES: dict[str, str] = {"mask": "maskrcnn"}

# The study's four workloads (arXiv 2509.03263).
STUDY_WORKLOADS: tuple[str, ...] = ("bert", "llama2_70b_lora", "retinanet", "stable_diffusion")
STUDY_ROUND = "v4.1"  # the round the study analysed: analyze and report read it by default

# Olympic drop count per benchmark where it is not 1: the runs the official score leaves
# out at each end of a result's sorted times (mlperf-logging has it in code only).
MAX_DROPPED_RUNS: dict[str, int] = {"unet3d": 4}


def benchmark_of_folder(folder: str) -> str:
    """The benchmark name the official summarizer uses for a results folder name."""
    return FOLDER_ALIASES.get(folder, folder)


def workload_of(benchmark: str) -> str:
    """The cross-round workload name of a benchmark folder (``ssd`` -> ``retinanet``)."""
    name = benchmark_of_folder(benchmark)
    return RENAMED.get(name, name)


def workload_facts(benchmark: str) -> Workload | None:
    """The facts of a benchmark folder's workload, None for one gpuscale does not know."""
    return WORKLOADS.get(workload_of(benchmark))


def counts_samples(benchmark: str) -> bool:
    """Whether the benchmark's convergence is counted in samples (not epochs) in the
    current rulesets (see :func:`convergence_unit` for a given round)."""
    facts = workload_facts(benchmark)
    return facts is not None and facts.convergence_unit is Unit.SAMPLES


# Where a workload's samples to converge count epochs, the samples an epoch holds, as its
# runs' logs give them (``train_samples``), and the ``epoch_num`` its logs and RCPs count
# from (1 for the original DLRM: epochs trained + 1); the file's ``source`` says how
EPOCH_SAMPLES_FILE = "epoch_samples.csv"


@functools.cache
def _epoch_rows() -> dict[str, dict[str, str]]:
    text = (resources.files("gpuscale") / "data" / EPOCH_SAMPLES_FILE).read_text("utf-8")
    return {row["workload"]: row for row in csv.DictReader(text.splitlines())}


def samples_per_epoch(benchmark: str) -> int | None:
    """The training samples an epoch of a benchmark's workload holds (``data/epoch_samples.csv``:
    as its rounds' runs log them, ``train_samples``); None where unknown or not one."""
    row = _epoch_rows().get(workload_of(benchmark))
    return None if row is None else int(row["samples_per_epoch"])


def first_epoch_num(benchmark: str) -> int:
    """The ``epoch_num`` a benchmark's logs and RCPs count epochs from: the epochs trained
    are the epochs logged less it (``data/epoch_samples.csv``; 0 where not listed)."""
    row = _epoch_rows().get(workload_of(benchmark))
    return 0 if row is None else int(row["first_epoch_num"])


def convergence_unit(benchmark: str, round_name: str) -> Unit | None:
    """What a round's samples to converge of a benchmark count: samples, epochs, steps or
    tokens (the unit of its ruleset's RCPs); None for a workload gpuscale does not know."""
    facts = workload_facts(benchmark)
    if facts is None:
        return None
    unit = facts.convergence_unit
    for first, changed in facts.unit_changes:
        if round_key(round_name) >= round_key(first):
            unit = changed
    return unit


def display_name(workload: str) -> str:
    """A readable name for a workload (``llama2_70b_lora`` -> ``Llama2 70B LoRA``)."""
    facts = workload_facts(workload)
    return getattr(facts, "display_name", workload)


_ROUND_NAME = re.compile(r"v?(\d+\.\d+)(?:\.\d+)?", re.IGNORECASE)


def round_name(text: str) -> str | None:
    """A round's name as typed (``4.1``, ``v4.1``, ``V4.1``, ``4.1.0``) as ``v4.1``; None
    for text that is no round's name as a whole (``4.1x``, ``v4.1,v5.0``)."""
    match = _ROUND_NAME.fullmatch(text.strip())
    return f"v{match.group(1)}" if match else None


def rounds_read_as(typed: Iterable[str | None]) -> list[str]:
    """``'4.1' read as v4.1``, once for each round name typed otherwise than a round is
    named (no ``v``, ``4.1.0``; a capital ``V`` alone is no other name), as a workload
    typed otherwise is said (``names.workload_read_as``): never read in silence."""
    said = {}
    for name in typed:
        read = round_name(name) if name else None
        if read is not None and read != name.strip().lower():
            said[name] = f"{name!r} read as {read}"
    return list(said.values())


# A user's own results folder read by a round's rules is labelled by its folder name with
# that round beside it (``my-results (v4.1)``): never a published round's name, so it is
# read beside that round, and every rule of the round still applies to it.
_OWN_LABEL = re.compile(r"(?P<folder>.+) \((?P<round>v\d+\.\d+)\)")


def own_label(folder: str, round_name: str) -> str:
    """The round label of a user's folder ``folder`` read by ``round_name``'s rules."""
    return f"{folder} ({round_name})"


def rules_round(name: str) -> str:
    """The round whose rules a round label stands for: ``my-results (v4.1)`` -> ``v4.1``;
    any other name as it is."""
    match = _OWN_LABEL.fullmatch(str(name))
    return match.group("round") if match else name


def own_folder(name: str) -> str | None:
    """The folder a round label names (``my-results (v4.1)`` -> ``my-results``); None for a
    round's own name."""
    match = _OWN_LABEL.fullmatch(str(name))
    return match.group("folder") if match else None


# letters typed for the digits they look like (``v4.l``, ``v5.O``)
_DIGIT_LOOKALIKES = str.maketrans({"l": "1", "I": "1", "i": "1", "O": "0", "o": "0"})


# The day MLCommons published each round's results (its announcement): no run of the
# round started after it. A round not listed (one still to come) bounds nothing.
PUBLISHED: dict[str, dt.date] = {
    "v0.6": dt.date(2019, 7, 10),
    "v0.7": dt.date(2020, 7, 29),
    "v1.0": dt.date(2021, 6, 30),
    "v1.1": dt.date(2021, 12, 1),
    "v2.0": dt.date(2022, 6, 29),
    "v2.1": dt.date(2022, 11, 9),
    "v3.0": dt.date(2023, 6, 27),
    "v3.1": dt.date(2023, 11, 8),
    "v4.0": dt.date(2024, 6, 12),
    "v4.1": dt.date(2024, 11, 13),
    "v5.0": dt.date(2025, 6, 4),
    "v5.1": dt.date(2025, 11, 12),
}


@functools.cache
def _shipped_rulesets() -> frozenset[str]:
    """The training rulesets (``1.1.0``) the installed mlperf-logging has rules for (its
    ``compliance_checker/training_X.Y.Z`` folders), found without importing it."""
    spec = importlib.util.find_spec("mlperf_logging")
    found = set()
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for rules in (Path(folder) / "compliance_checker").glob("training_*.*.*"):
            if re.fullmatch(r"training_\d+\.\d+\.\d+", rules.name) and rules.is_dir():
                found.add(rules.name.removeprefix("training_"))
    return frozenset(found)


@functools.cache
def round_names_known() -> frozenset[str]:
    """The rounds gpuscale reads by name: each MLCommons published (``PUBLISHED``) and
    each the installed mlperf-logging has rules for (a round whose results are yet to
    come)."""
    found = set(PUBLISHED)
    for ruleset in _shipped_rulesets():
        major, minor, _ = ruleset.split(".")
        found.add(f"v{major}.{minor}")
    return frozenset(found)


def own_ruleset(round_name: str) -> str | None:
    """The round's own ruleset (``v1.1`` -> ``1.1.0``) where the installed mlperf-logging
    has its rules, the ones its results were checked against; None otherwise (a round
    checked against an earlier ruleset, which its problems say, or no round name)."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)", rules_round(str(round_name)).strip())
    ruleset = f"{match.group(1)}.{match.group(2)}.0" if match else ""
    return ruleset if ruleset in _shipped_rulesets() else None


def not_scored_by(round_name: str) -> str:
    """Whose checks leave a round's results unscored, in words: its own ruleset's as
    mlperf-logging applies them today (v1.1's BERT logs lack the weights_initialization
    lines ruleset 1.1.0 itself requires, and today's official summarizer rejects them
    too; the checker of 2021 did not: no later round's rule is applied), or today's
    rules where its own are unknown."""
    ruleset = own_ruleset(round_name)
    if ruleset is None:
        return "today's rules"
    return f"ruleset {ruleset}'s checks as mlperf-logging applies them today"


def round_name_meant(text: str) -> str | None:
    """The round name ``text`` most likely meant where it is none: ``v5`` -> ``v5.0``,
    ``v41`` -> ``v4.1`` (the dot left out), ``v4.l`` -> ``v4.1`` (a letter for a digit);
    None where no such reading is a round name, or none of a round gpuscale reads by name
    (:func:`round_names_known`: ``v9`` is offered no v9.0)."""
    typed = text.strip()
    bare = typed[1:] if typed[:1] in ("v", "V") else typed
    if bare.isdigit() and len(bare) in (1, 2):
        meant = f"v{bare}.0" if len(bare) == 1 else f"v{bare[0]}.{bare[1]}"
    else:
        meant = round_name(bare.translate(_DIGIT_LOOKALIKES)) if bare else None
    return meant if meant in round_names_known() else None


def round_key(name: str) -> tuple[int, ...]:
    """Sort key of a round name: ``v4.1`` -> (4, 1), so v10.0 sorts after v9.1 (a user's
    folder's label as the round beside it: ``my-results (v4.1)`` -> (4, 1))."""
    return tuple(int(x) for x in rules_round(name).lstrip("v").split(".") if x.isdigit())


def workloads_by_round(scores: pd.DataFrame) -> dict[str, list[str]]:
    """Each round's workloads (cross-round names) in a scores table, rounds in order."""
    present = scores.dropna(subset=["workload"])
    return {
        str(r): sorted(set(part["workload"]))
        for r, part in sorted(present.groupby("round"), key=lambda x: str(x[0]))
    }


def default_workloads(by_round: dict[str, list[str]]) -> list[str]:
    """The workloads shown when none is asked for (the one rule of every command and the
    report): the study's four where every round has them; where a round lacks any, the
    study's it has and then every other workload of the rounds (a round without BERT
    and Stable Diffusion shows its own workloads, not two)."""
    everything = sorted({w for ws in by_round.values() for w in ws})
    study = [w for w in STUDY_WORKLOADS if w in everything]
    if all(set(STUDY_WORKLOADS) <= set(ws) for ws in by_round.values()):
        return study
    return study + [w for w in everything if w not in study]


def lacking_workloads(by_round: dict[str, list[str]], asked: Iterable[str]) -> list[str]:
    """One sentence per round that lacks some of the asked-for workloads (the defaults
    count as asked for), e.g. ``v5.1 has no BERT or Stable Diffusion results``; empty
    when every round has them all."""
    asked = list(asked)
    notes = []
    for round_name, present in by_round.items():
        missing = [display_name(w) for w in asked if w not in present]
        if missing:
            notes.append(f"{round_name} has no {joined(missing, 'or')} results")
    return notes


def workload_notes(
    by_round: dict[str, list[str]], workloads: list[str], *, asked: bool
) -> list[str]:
    """What to tell the reader about the workloads chosen: the rounds lacking some asked
    for (``asked``), or, for the defaults, the rounds lacking some of the study's four
    and that their own workloads are shown instead."""
    if asked:
        return lacking_workloads(by_round, workloads)
    notes = lacking_workloads(by_round, STUDY_WORKLOADS)
    if notes:
        notes[-1] += (
            "; so every workload of the rounds read is shown, not only the study's four "
            "(--benchmark to choose)"
        )
    return notes


def workloads_in(scores: pd.DataFrame) -> list[str]:
    """The workloads a scores table holds (what each folder held): the names
    ``gpuscale.names.resolve_workloads`` reads what people type against, in every command and in
    the Python API (``scaling_table``, ``analyze``)."""
    return scores["workload"].dropna().unique().tolist()
