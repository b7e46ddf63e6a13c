"""An option's help does not repeat the default the command line shows beside it: ``plan
--help`` read "Devices per node (for the node count shown); default 8. [default: 8]"."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re

import gpuscale


def _requests() -> list[type]:
    """Every dataclass of the library whose fields carry an option's help."""
    found = []
    for info in pkgutil.walk_packages(gpuscale.__path__, "gpuscale."):
        if ".cli" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and dataclasses.is_dataclass(obj)
                and obj.__module__ == module.__name__
                and any("help" in f.metadata for f in dataclasses.fields(obj))
            ):
                found.append(obj)
    return found


def test_the_requests_are_found() -> None:
    names = {cls.__name__ for cls in _requests()}
    assert {"AdviceRequest", "PlanRequest", "ReportRequest", "RoundSelection"} <= names


def test_no_help_repeats_the_default_shown_beside_it() -> None:
    repeated = []
    for cls in _requests():
        for f in dataclasses.fields(cls):
            default = f.default
            if default in (dataclasses.MISSING, None) or isinstance(default, bool):
                continue
            said = re.search(
                rf"default:?\s*{re.escape(str(default))}(?!\w|\.\d)",
                f.metadata.get("help", ""),
                re.I,
            )
            if said:
                repeated.append(f"{cls.__name__}.{f.name}: {f.metadata['help']!r}")
    assert not repeated, repeated


def test_each_command_s_help_says_the_rounds_and_workloads_it_reads_by_default() -> None:
    """``analyze --help`` said "default: every bundled round (analyze and report: v4.1)":
    each command's help now gives its own default, the one ``load_selection`` reads."""
    from typer.main import get_command

    from gpuscale.cli import app
    from gpuscale.mlperf.load import STUDY_ROUNDS

    commands = get_command(app).commands  # type: ignore[attr-defined]
    study = {"analyze", "report"}  # the commands that load_tables(study=True)
    for name in ("analyze", "report", "scores", "energy", "trends", "dataset", "plan"):
        helps = {p.name: p.help or "" for p in commands[name].params}
        assert all(r in helps["paths"] for r in STUDY_ROUNDS) == (name in study), name
        assert "report:" not in helps["paths"] + helps.get("benchmark", ""), name
        if "benchmark" in helps:
            assert ("study's four)" in helps["benchmark"]) == (name == "report"), name
