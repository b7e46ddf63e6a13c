"""The documentation site builds without a warning (``mkdocs build --strict``): every
page in the nav exists, every link resolves, the CLI reference is generated from the
Typer app and the API reference from the docstrings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mkdocs_builds_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="mkdocs not installed (pip install -e '.[docs]')")
    pytest.importorskip("material", reason="mkdocs-material not installed")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings not installed")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    cli = (tmp_path / "reference" / "cli" / "index.html").read_text()
    assert "gpuscale collectives" in cli and "--max-bytes" in cli
    api = (tmp_path / "reference" / "api" / "index.html").read_text()
    assert "read_round" in api and "frame_of" in api
    # every call gpuscale exports, gpuscale.advise as itself (not the table-taking advise)
    exported = ("energy_table", "trend_table", "AnalysisOptions", "PlanRequest")
    assert all(name in api for name in exported) and "advise_by_keywords" in api


def test_every_relative_link_resolves_in_the_repository() -> None:
    """A page read on GitHub or in a checkout (not the built site) finds what it links:
    every relative link of the README and docs/*.md names a file that is there."""
    import re

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    missing = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                missing.append(f"{page.relative_to(ROOT)} -> {target}")
    assert missing == []


@pytest.mark.parametrize(
    ("title", "columns"),
    [
        ("systems", "SYSTEMS_COLUMNS"),
        ("runs", "RUNS_COLUMNS"),
        ("scores", "SCORES_COLUMNS"),
        ("problems", "PROBLEMS_COLUMNS"),
        ("plan", "PLAN_COLUMNS"),
    ],
)
def test_the_schema_page_names_every_column_of_the_tables_it_lists(
    title: str, columns: str
) -> None:
    """docs/schemas.md lists these tables' columns one by one: each is there (a user walk
    found `scores --all-columns` printing a `source` column the page did not name)."""
    import re

    import gpuscale.tables
    import gpuscale.tables.plan

    names = getattr(gpuscale.tables, columns, None) or getattr(gpuscale.tables.plan, columns)
    text = (ROOT / "docs" / "schemas.md").read_text()
    paragraph = next(p for p in re.split(r"\n(?=\*\*)", text) if p.startswith(f"**{title}**"))
    assert [c for c in names if f"`{c}`" not in paragraph] == []


def test_the_schema_page_names_every_field_of_the_advice_decision() -> None:
    """docs/schemas.md's advice decision names every field of ``Decision`` and every key
    of a disagreement, their nested records' too: ``advise -f json`` carries them as named."""
    import dataclasses
    import re
    import typing

    from gpuscale.advice.explain.as_json import DISAGREEMENT, laid_out
    from gpuscale.advice.records import Decision
    from tests.builders import measured_count

    def names(record: type) -> set[str]:
        """The fields of ``record`` and of the records they hold (optional, or in tuples)."""
        found = set()
        for name, hint in typing.get_type_hints(record).items():
            found.add(name)
            for kind in (hint, *typing.get_args(hint)):
                if dataclasses.is_dataclass(kind):
                    found |= names(kind)
        return found

    def keys(said: dict) -> set[str]:
        """The keys of ``said`` and of the dicts it holds."""
        found = set(said)
        for value in said.values():
            if isinstance(value, dict):
                found |= keys(value)
        return found

    count = measured_count()
    text = (ROOT / "docs" / "schemas.md").read_text()
    paragraph = next(
        p for p in re.split(r"\n(?=\*\*)", text) if p.startswith("**advice decision**")
    )
    named = names(Decision) | keys(laid_out(count, DISAGREEMENT, "disagreement"))
    missing = sorted(n for n in named if f"`{n}`" not in paragraph)
    assert missing == []


def _named_source_paths(text: str) -> list[str]:
    """The ``.py`` paths a page names in backticks, such as `advice/search/decide.py`."""
    import re

    return re.findall(r"`((?:[\w.-]+/)+[\w-]+\.py)`", text)


def test_every_source_file_the_docs_name_exists() -> None:
    """A ``.py`` path named in the README or docs/*.md is a file of the repository, read
    from its root, from src/ or from src/gpuscale/ or src/gpuscale/advice/ (pages name
    advice modules from there): a module moved or merged leaves no page pointing at it."""
    bases = [ROOT, ROOT / "src", ROOT / "src" / "gpuscale", ROOT / "src" / "gpuscale" / "advice"]
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    missing = [
        f"{page.relative_to(ROOT)}: {path}"
        for page in pages
        for path in _named_source_paths(page.read_text())
        if not any((base / path).is_file() for base in bases)
    ]
    assert missing == []


def test_the_development_page_lays_out_every_advice_module() -> None:
    """docs/development.md's table of the advice package names each module of
    src/gpuscale/advice/ once, and no module that is not there: a contributor's map of the
    package is the package."""
    text = (ROOT / "docs" / "development.md").read_text()
    section = text[text.index("## The advice package") :]
    rows = [line for line in section.splitlines() if line.startswith("| `advice/")]
    named = [line.split("`")[1] for line in rows]
    package = ROOT / "src" / "gpuscale"
    modules = sorted(
        str(p.relative_to(package))
        for p in (package / "advice").rglob("*.py")
        if p.name != "__init__.py"
    )
    assert sorted(named) == modules


def test_the_development_page_draws_the_layers_the_contract_enforces() -> None:
    """The layer chain docs/development.md draws is the ``layers`` contract of
    pyproject.toml, layer for layer (the page lacked ``sizes`` once it was a layer)."""
    import re

    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml")
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["id"] == "layers")["layers"]
    text = (ROOT / "docs" / "development.md").read_text()
    chain = re.search(r"```text\n(cli -> .*?)```", text, re.S)
    assert chain, "development.md draws no layer chain"
    drawn = [layer.strip() for layer in " ".join(chain.group(1).split()).split("->")]
    assert drawn == layers


# The refusals docs/tour.md quotes, each with the command line that gives it.
TOUR_REFUSALS = (
    (
        ["advise", "--step-ms", "-5"],
        "error: --step-ms -5: must be a number at least 0.001 and at most 10^8",
    ),
    (["advise", "--step-ms", "abc"], "error: --step-ms abc: must be a number"),
    (
        ["report", "--out", "/proc/x/y"],
        "error: --out /proc/x/y: cannot be written: /proc is a folder that takes no new files",
    ),
    (
        ["advise", "--stepms", "5"],
        "error: --stepms: no such option of gpuscale advise (did you mean '--step-ms'?); "
        "see gpuscale advise --help",
    ),
    (["bench", "--backend", "glo"], "give gloo in full"),
)


@pytest.mark.parametrize(
    ("args", "quote"), TOUR_REFUSALS, ids=[" ".join(args) for args, _ in TOUR_REFUSALS]
)
def test_the_tour_quotes_each_refusal_as_the_cli_words_it(args: list[str], quote: str) -> None:
    """A newcomer reads the tour's examples of one-line refusals: each is on the page, and
    the command line it stands for ends with exit 2 saying those words."""
    from typer.testing import CliRunner

    from gpuscale.cli import app

    page = " ".join((ROOT / "docs" / "tour.md").read_text().split())
    assert quote in page
    result = CliRunner().invoke(app, args, prog_name="gpuscale")
    assert result.exit_code == 2
    assert quote in " ".join(result.output.split())


# ``advise -f json`` cases whose documents hold every key between them: by numbers (strong
# scaling, the fixed cost and the link assumed), a bench file, FSDP over two nodes (memory),
# a transformer's shape, and a bench whose count is measured
JSON_CASES = (
    ["--params", "7M", "--step-ms", "2", "--batch", "64", "--global-batch", "1000"],
    ["--bench", "tests/advice/h100_resnet50_bf16.jsonl"],
    ["--bench", "tests/advice/cpu_tiny_model_gloo.jsonl"],
    ["--bench", "tests/advice/cpu_mlp_two_sweeps_gloo.jsonl"],  # a row derived: its keys
    [
        *("--params", "7B", "--step-ms", "900", "--batch", "8192", "--device-name", "H100"),
        *("--interconnect", "nvlink4", "--strategy", "fsdp", "--nodes", "2"),
    ],
    ["--preset", "llama2-7b", "--step-ms", "900", "--batch", "8", "--device-name", "H100"],
    [  # a topology read: each count's ring, and the GPUs of a faster one
        *("--params", "350M", "--step-ms", "120", "--batch", "16", "--device-name", "V100"),
        *("--topo", "tests/advice/v100_nvlink_0_2_topo.txt"),
    ],
)


def _json_keys(found: object) -> set[str]:
    """The keys of ``found`` and of the objects it holds, but a device count's (``at``)."""
    if isinstance(found, list):
        return set().union(*map(_json_keys, found)) if found else set()
    if not isinstance(found, dict):
        return set()
    own = {key for key in found if not key.isdigit()}
    return own.union(*map(_json_keys, found.values()))


def test_the_schema_page_names_every_key_advise_json_prints() -> None:
    """docs/schemas.md's advice paragraphs name every key ``advise -f json`` prints, nested
    ones too (a user walk found ``scaling`` and ``recommendation``'s keys named nowhere)."""
    import json
    import re

    from typer.testing import CliRunner

    from gpuscale.cli import app

    documents = []
    for case in JSON_CASES:
        result = CliRunner().invoke(app, ["advise", *case, "-f", "json"], prog_name="gpuscale")
        assert result.exit_code == 0, result.output
        documents.append(json.loads(result.stdout))
    printed = _json_keys(documents)
    text = (ROOT / "docs" / "schemas.md").read_text()
    advice = text[text.index("**advice document**") : text.index("**bench**")]
    top = next(p for p in re.split(r"\n(?=\*\*)", advice) if p.startswith("**advice document**"))
    tops = dict.fromkeys(key for document in documents for key in document)
    assert [key for key in tops if f"`{key}`" not in top] == []
    assert sorted(key for key in printed if f"`{key}`" not in advice) == []


def test_the_analyze_csv_page_names_every_column_it_prints() -> None:
    """docs/analyze-csv.md names every column ``analyze -f csv`` prints, in order, under
    either reference rule (14 of them, ``samples_vs_expected`` and the ``*_ci_*`` ones
    among them, were named nowhere), and the site's nav links it."""
    import csv
    import io
    import re

    from typer.testing import CliRunner

    from gpuscale.cli import app

    text = (ROOT / "docs" / "analyze-csv.md").read_text()
    named = re.findall(r"^\| (`[^|]*`) \|", text, flags=re.MULTILINE)
    order = [c.strip("` ") for cell in named for c in cell.split(",")]
    for rule in ("study", "family"):
        asked = ["analyze", "--round", "v4.1", "-b", "bert", "--reference", rule, "-f", "csv"]
        result = CliRunner().invoke(app, asked)
        assert result.exit_code == 0, result.output
        header = next(csv.reader(io.StringIO(result.stdout)))
        assert order == header
    assert "analyze-csv.md" in (ROOT / "mkdocs.yml").read_text()
