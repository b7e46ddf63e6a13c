"""A number a page quotes from a command or a results file is that command's or file's
now: each passage between ``<!-- numbers of: SOURCE -->`` and ``<!-- numbers end -->`` in
the README and docs/*.md has every number in it found in what SOURCE gives. A SOURCE
``gpuscale ...`` is run (its output as printed: the page quotes it as printed; with ``-f
json`` or ``-f csv``, each number at the decimals the page gives); a SOURCE
``benchmarks/results/*.json`` is read (each number in it, and each list's length, at the
decimals the page gives). A number the page keeps from an earlier run goes stale silently:
here it fails. The pages' own rules are checked too: no page over 4,000 words, none names
an issue of this project or a path outside the checkout."""

from __future__ import annotations

import itertools
import json
import re
import shlex
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# a marker in backticks is one shown, not one used (docs/development.md shows them)
PASSAGE = re.compile(r"(?<!`)<!-- numbers of: (.+?) -->(.*?)<!-- numbers end -->", re.S)
# a number as a sentence writes it: 1,280, 6.273, +0.008, -1.452; a factor's x (2.24x,
# x1.140) and a percent sign are not part of it, a name's digits (H100, v3.1, 70B) are
NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?![\w])")
FACTOR = re.compile(r"(?<=\d)x\b|\bx(?=\d)")


def numbers_in(text: str) -> list[str]:
    """The numbers of ``text`` as written, without a sign's + or a trailing comma."""
    text = FACTOR.sub(" ", text)
    return [n.rstrip(",").lstrip("+") for n in NUMBER.findall(text)]


def passages() -> list[tuple[str, str, str]]:
    """(page, source, text) of every quoted passage of the pages."""
    return [
        (page.name, m.group(1).strip(), m.group(2))
        for page in PAGES
        for m in PASSAGE.finditer(page.read_text())
    ]


@cache
def command_output(command: str) -> str:
    from typer.testing import CliRunner

    from gpuscale.cli import app

    argv = shlex.split(command)
    assert argv[0] == "gpuscale", command
    done = CliRunner().invoke(app, argv[1:], env={"COLUMNS": "400"})
    # a plan with no time at any count says why and exits 1 (docs/plan.md quotes one)
    no_time = argv[1] == "plan" and done.exit_code == 1 and "no time" in done.output
    assert done.exit_code == 0 or no_time, done.output
    return done.output


def command_numbers(command: str) -> frozenset[str]:
    return frozenset(numbers_in(command_output(command)))


def data_values(output: str) -> list[float]:
    """The numbers of a command's data (CSV, JSON), where a comma separates two values and
    never groups a number's thousands (``11,8,3.79`` is three numbers, not 1,183.79)."""
    return [float(n) for n in numbers_in(output.replace(",", " "))]


def raw(command: str) -> bool:
    """A command whose output is data (JSON, CSV): numbers at full precision."""
    argv = shlex.split(command)
    return any(
        a in ("-f", "--format") and b in ("json", "csv") for a, b in itertools.pairwise(argv)
    )


def file_values(path: Path) -> list[float]:
    """Every number of a JSON file, and the length of each of its lists."""
    out: list[float] = []

    def walk(node: object) -> None:
        if isinstance(node, bool):
            return
        if isinstance(node, int | float):
            out.append(float(node))
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            out.append(float(len(node)))
            for value in node:
                walk(value)

    walk(json.loads(path.read_text()))
    return out


def in_file(number: str, values: list[float]) -> bool:
    """``number`` is one of ``values`` at the decimals it is written with."""
    plain = number.replace(",", "")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    return any(f"{v:.{decimals}f}" == plain for v in values)


def test_the_pages_quote_numbers_from_somewhere() -> None:
    """The check below checks something: passages of commands and of results files."""
    sources = [source for _, source, _ in passages()]
    assert any(s.startswith("gpuscale ") for s in sources)
    assert any(s.endswith(".json") for s in sources)


@pytest.mark.parametrize(("page", "source", "text"), passages(), ids=lambda x: str(x)[:40])
def test_every_number_quoted_is_the_sources_now(page: str, source: str, text: str) -> None:
    quoted = numbers_in(text)
    assert quoted, f"{page}: a passage of {source} quotes no number"
    if source.startswith("gpuscale ") and raw(source):
        values = data_values(command_output(source))
        missing = [n for n in quoted if not in_file(n, values)]
    elif source.startswith("gpuscale "):
        found = command_numbers(source)
        missing = [n for n in quoted if n not in found]
    else:
        values = file_values(ROOT / source)
        missing = [n for n in quoted if not in_file(n, values)]
    assert missing == [], f"{page}: {missing} not in what `{source}` gives now"


def test_numbers_are_read_as_a_sentence_writes_them() -> None:
    said = "14.03 and 6.273 min, 2.24x on 2x, x1.140 from H100-SXM5-80GB's 1,280 (slope +0.008),"
    assert numbers_in(said) == ["14.03", "6.273", "2.24", "2", "1.140", "1,280", "0.008"]
    assert in_file("0.14", [0.144844]) and not in_file("0.15", [0.144844])
    assert in_file("11", [11.0]) and not in_file("14", [11.0])
    assert data_values('bert,11,8,3.79\n{"counts": [8,16]}') == [11, 8, 3.79, 8, 16]


MOST_WORDS = 4_000


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_is_short_and_names_nothing_outside_the_checkout(page: Path) -> None:
    """A page a reader gets through (at most 4,000 words), that names no issue of this
    project (an issue number means nothing to a reader of a clone; another project's,
    as ``NVIDIA/nccl-tests#212``, is a citation) and no ``../shared`` folder beside the
    developers' checkout."""
    text = page.read_text()
    words = len(re.sub(r"<!--.*?-->", " ", text, flags=re.S).split())
    assert words <= MOST_WORDS, f"{page.name}: {words:,} words"
    issues = re.findall(r"(?<![\w/-])#\d+\b|\b[Ii]ssues? #?\d+", text)
    assert issues == [], f"{page.name} names issues {issues}"
    assert "../shared" not in text, f"{page.name} names ../shared"


def test_every_results_file_is_named_by_a_page() -> None:
    """A results file no page names is a measurement no reader finds: each file under
    ``benchmarks/results/`` is named by the README or a docs page (where its run is
    described)."""
    said = " ".join(p.read_text() for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
    files = sorted((ROOT / "benchmarks" / "results").glob("*.json"))
    assert files
    assert [f.name for f in files if f.name not in said] == []
