"""Every shell and Python block of README.md and docs/*.md, run as a user would.

Blocks are found by markdown-it (fenced code, info ``bash``/``sh``/``shell``/``console``
or ``python``), so a block added to a page is covered without touching this file. An
HTML comment right before a block says how it is checked, ``;``-separated:

* ``<!-- example: gpu -->`` (needs a GPU), ``<!-- example: nodes -->`` (several nodes),
  ``<!-- example: no-run REASON -->`` (e.g. rewrites the bundled data, runs the suite):
  checked only: syntax (``bash -n`` / ``compile``) and every ``gpuscale`` option name
  against the Typer app;
* ``<!-- example: replace "OLD" "NEW" -->`` (repeatable): the stand-in arguments a
  long block runs with here (a tiny bench instead of a full one);
* ``<!-- example: raw-round NAME -->`` (repeatable): the block reads the raw round
  ``NAME`` (``training_results_v5.0.tar.xz``) a reader clones or downloads; here it is read
  from the raw rounds beside the checkout (marked ``shared``, skipped without it);
* ``<!-- example: shared-file NAME PATH -->`` (repeatable): the block's file ``NAME`` is
  the one at ``PATH`` in the checkout's shared data folder (bench rows measured on hardware
  this machine lacks; marked ``shared``, skipped without it);
* ``<!-- main-command -->`` and ``<!-- test-command -->``: run by ``test_readme.py``.

Every other block runs: shell blocks under ``bash -e`` with ``gpuscale`` and ``python``
the code under test and ``pip`` a no-op, Python blocks as a script, each in its own
temporary directory. ``results.jsonl``/``collectives.jsonl`` read (not written) by a
block come from one tiny CPU bench and sweep made per session. Blocks naming
``../shared`` run against the raw rounds beside the checkout (marked ``shared``; skipped
without them). Option names are checked in every block, run or not.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from filelock import FileLock
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL, PYTHON = {"bash", "sh", "shell", "console"}, {"python", "py"}
CHECK_ONLY = {"gpu", "nodes", "no-run"}
SEEDS = {
    "results.jsonl": "bench --backend gloo --nproc 1,2 --models mlp-0.2m --steps 2 --warmup 1 "
    "--out results.jsonl",
    "collectives.jsonl": "collectives --max-bytes 64K --out collectives.jsonl",
}


@dataclass
class Block:
    page: str
    line: int
    lang: str
    code: str
    markers: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def check_only(self) -> str | None:
        for marker in self.markers:
            word = marker.split()[0] if marker.split() else ""
            if word in CHECK_ONLY:
                return marker
        return None

    @property
    def raw_rounds(self) -> list[str]:
        """The raw rounds the block reads (``raw-round NAME`` markers)."""
        return [m.split()[1] for m in self.markers if m.startswith("raw-round ")]

    @property
    def shared_files(self) -> list[tuple[str, str]]:
        """(name in the block, path in the shared folder) of ``shared-file`` markers."""
        return [tuple(m.split()[1:3]) for m in self.markers if m.startswith("shared-file ")]

    def missing(self) -> list[str]:
        """What the block reads from beside the checkout that is not there."""
        rounds = SHARED / "mlperf"
        return (
            shared_missing(self.code)
            + [str(rounds / name) for name in self.raw_rounds if not (rounds / name).exists()]
            + [str(SHARED / path) for _, path in self.shared_files if not (SHARED / path).exists()]
        )

    def runnable_code(self) -> str:
        code = self.code
        for marker in self.markers:
            if marker.startswith("replace "):
                old, new = shlex.split(marker)[1:3]
                assert old in code, f"{self.id}: stand-in {old!r} not in the block"
                code = code.replace(old, new)
        for name in self.raw_rounds:
            assert name in code, f"{self.id}: raw round {name!r} not in the block"
            code = code.replace(name, self._path(SHARED / "mlperf" / name))
        for name, path in self.shared_files:
            assert name in code, f"{self.id}: shared file {name!r} not in the block"
            code = code.replace(name, self._path(SHARED / path))
        return code.replace("../shared/", f"{self._path(SHARED)}/")

    def _path(self, path: Path) -> str:
        """``path`` as the block's language reads it: quoted for the shell (a checkout
        under a folder with a space, ``/tmp/new user/``, is one word), as it is in Python
        (where ``../shared`` stands inside a string literal)."""
        return shlex.quote(str(path)) if self.lang in SHELL else str(path)


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        tokens = MarkdownIt().parse(page.read_text())
        for i, token in enumerate(tokens):
            lang = token.info.strip().split()[0] if token.type == "fence" and token.info else ""
            if lang not in SHELL | PYTHON:
                continue
            before = tokens[i - 1] if i else None
            comments = (
                re.findall(r"<!--(.*?)-->", before.content, re.S)
                if before and before.type == "html_block"
                else []
            )
            markers = [
                m.strip().removeprefix("example:").strip()
                for c in comments
                for m in c.split(";")
                if m.strip()
            ]
            found.append(Block(page.name, token.map[0] + 1, lang, token.content, markers))
    return found


BLOCKS = blocks()


def shared_missing(code: str) -> list[str]:
    """The ``../shared`` paths a block names that are not there (the folder may hold
    some rounds and not others)."""
    if "../shared" in code and not SHARED.is_dir():
        return ["../shared"]
    named = re.findall(r"\.\./shared/[^\s\"'`)]+", code)
    return [p for p in named if not (SHARED / p.removeprefix("../shared/")).exists()]


def _params(block: Block) -> list[object]:
    reads_shared = "../shared" in block.code or block.raw_rounds or block.shared_files
    marks = [pytest.mark.shared] if reads_shared else []
    return [pytest.param(block, id=block.id, marks=marks)]


ALL = [p for b in BLOCKS for p in _params(b)]


def _commands(code: str) -> list[list[str]]:
    """Every ``gpuscale ...`` argument list in a shell block, also inside quoted
    ``bash -c '...'`` strings."""
    found = []

    def scan(text: str) -> None:
        for line in text.replace("\\\n", " ").splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                words = []
            for k, word in enumerate(words):
                if word == "gpuscale":
                    found.append(words[k + 1 :])
                elif "gpuscale " in word:
                    scan(word)

    scan(code)
    return found


def unknown_options(code: str) -> list[str]:
    """``gpuscale COMMAND --option`` uses in a shell block that the Typer app lacks."""
    import typer.main

    from gpuscale.cli import app

    group = typer.main.get_command(app)
    problems = []
    for argv in _commands(code):
        if not argv or argv[0].startswith("-"):
            continue
        command = group.commands.get(argv[0])  # type: ignore[attr-defined]
        if command is None:
            problems.append(f"no command `gpuscale {argv[0]}`")
            continue
        names = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        problems += [
            f"`gpuscale {argv[0]}` has no option {word}"
            for word in argv[1:]
            if word.startswith("-")
            and not re.fullmatch(r"-?\d[\d.]*", word)
            and word.split("=")[0] not in names
        ]
    return problems


def test_a_renamed_option_or_command_is_caught() -> None:
    code = (
        "gpuscale bench --stepz 2 --out r.jsonl \\\n  --nproc 1\nsrun bash -c 'gpuscale benchx --x'"
    )
    stepz, benchx = unknown_options(code)  # one problem each, in order
    assert stepz.endswith("option --stepz") and benchx.endswith("`gpuscale benchx`")
    known = "gpuscale bench --steps 2 --nproc=1,2 --no-resume  # --comment"
    assert unknown_options(known) == []


@pytest.mark.parametrize("block", [b for b in ALL if b.values[0].lang in SHELL])
def test_shell_block_syntax_and_options(block: Block) -> None:
    syntax = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True)
    assert syntax.returncode == 0, f"{block.id}: {syntax.stderr}"
    assert unknown_options(block.code) == [], block.id


@pytest.mark.parametrize("block", [b for b in ALL if b.values[0].lang in PYTHON])
def test_python_block_compiles(block: Block) -> None:
    compile(block.code, block.id, "exec")


@dataclass
class Outputs:
    """The session's shared results/sweep files and the run of each block making them."""

    folder: Path
    runs: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)


def _writes(block: Block, name: str) -> bool:
    return bool(re.search(rf"--out\s+{re.escape(name)}", block.code))


def _runnable(block: Block) -> bool:
    return (
        block.check_only is None
        and not {"main-command", "test-command"} & set(block.markers)
        and not block.missing()
    )


@pytest.fixture(scope="session")
def outputs(run_folder: Path) -> Outputs:
    """The files blocks read: made by the first runnable block that writes each (the
    README's own CPU bench), else by a tiny CPU run; made once per test run, whichever of
    pytest-xdist's workers asks first (the others wait on a lock and read them)."""
    made = Outputs(run_folder / "readme-outputs")
    record = made.folder / "runs.json"
    with FileLock(str(run_folder / "readme-outputs.lock")):
        if record.exists():
            saved = json.loads(record.read_text())
            made.runs = {k: subprocess.CompletedProcess(**v) for k, v in saved.items()}
            return made
        made.folder.mkdir(exist_ok=True)
        for name, args in SEEDS.items():
            if (made.folder / name).exists():
                continue
            producer = next((b for b in BLOCKS if _runnable(b) and _writes(b, name)), None)
            if producer is not None:
                made.runs[producer.id] = _run_block(producer, made.folder)
            else:
                done = _run(["bash", "-ec", f"gpuscale {args}"], made.folder)
                assert done.returncode == 0, done.stdout + done.stderr
        runs = {k: {f: getattr(r, f) for f in RUN_FIELDS} for k, r in made.runs.items()}
        record.write_text(json.dumps(runs))
    return made


RUN_FIELDS = ("args", "returncode", "stdout", "stderr")


def _run_block(block: Block, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = block.runnable_code()
    if block.lang in SHELL:
        return _run(["bash", "-e", "-o", "pipefail", "-c", code], cwd)
    (cwd / "example.py").write_text(code)
    return _run([sys.executable, "example.py"], cwd)


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    shims = cwd / ".shims"
    shims.mkdir(exist_ok=True)
    for name, body in {
        "gpuscale": f'exec "{sys.executable}" -m gpuscale.cli "$@"',
        "python": f'exec "{sys.executable}" "$@"',
        "pip": 'echo "(pip $* : not run in the tests)"',
    }.items():
        (shims / name).write_text(f"#!/bin/sh\n{body}\n")
        (shims / name).chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])
        ),
        "COLUMNS": "120",
    }
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


# What a busy host makes of the advice examples: every bench row flagged, and advise
# refuses, listing the flags and suggesting --allow-flagged. The test then does what the
# user is told: the same block with --allow-flagged, which must succeed and warn.
# The refusal names the option as the caller spells it: the CLI's flag or Python's keyword.
REFUSED = re.compile(r"allow flagged runs \((--allow-flagged|allow_flagged=True)")


def _allowing_flagged(block: Block) -> Block:
    """The block with ``--allow-flagged`` on every ``advise --bench`` command (and
    ``allow_flagged=True`` on every ``gpuscale.advise(bench=...)`` call)."""
    code = re.sub(
        r"gpuscale advise(?=[^\n]*--bench)", "gpuscale advise --allow-flagged", block.code
    )
    code = code.replace("gpuscale.advise(bench=", "gpuscale.advise(allow_flagged=True, bench=")
    assert code != block.code, f"{block.id}: refused, but has no advise --bench to allow"
    return Block(block.page, block.line, block.lang, code, block.markers)


def _as_told(block: Block, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The refused block run again with flagged runs allowed; the command line must then
    say how many flagged runs it used."""
    done = _run_block(_allowing_flagged(block), cwd)
    if block.lang in SHELL:
        printed = " ".join(done.stdout.split())  # the terminal wraps long lines
        assert re.search(
            r"\b(1 flagged run|[\d,]+ flagged runs) used \(--allow-flagged\)", printed
        ), done.stdout[-3000:]
    return done


@pytest.mark.slow
@pytest.mark.parametrize("block", ALL)
def test_block_runs(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if block.check_only is not None:
        pytest.skip(f"checked only ({block.check_only}): syntax and option names")
    if {"main-command", "test-command"} & set(block.markers):
        pytest.skip("run by test_readme.py")
    missing = block.missing()
    if missing:
        pytest.skip(f"needs {missing[0]} beside the checkout (as the other shared tests)")
    code = block.code
    if any(name in code for name in SEEDS):
        made: Outputs = request.getfixturevalue("outputs")
        for name in SEEDS:
            if name in code and not _writes(block, name):
                shutil.copy(made.folder / name, tmp_path / name)
        done = made.runs.get(block.id) or _run_block(block, tmp_path)
    else:
        done = _run_block(block, tmp_path)
    if done.returncode != 0 and REFUSED.search(" ".join(done.stderr.split())):
        for name in SEEDS:
            if name in code and not (tmp_path / name).exists():
                shutil.copy(request.getfixturevalue("outputs").folder / name, tmp_path / name)
        done = _as_told(block, tmp_path)
    assert done.returncode == 0, (
        f"{block.id} failed:\n{block.runnable_code()}\n--- stdout\n{done.stdout[-3000:]}"
        f"\n--- stderr\n{done.stderr[-3000:]}"
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


def test_a_shared_path_with_a_space_stays_one_shell_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout under ``/tmp/new user/`` runs its raw-round, shared-file and
    ``../shared`` examples with each path one argument."""
    shared = Path("/tmp/new user/shared")
    monkeypatch.setattr(sys.modules[__name__], "SHARED", shared)
    code = "gpuscale scores r.tar.xz --out t/\ngpuscale advise --bench b.jsonl ../shared/x.jsonl\n"
    markers = ["raw-round r.tar.xz", "shared-file b.jsonl gpu/b.jsonl"]
    shell = Block("p.md", 1, "bash", code, markers).runnable_code()
    words = [shlex.split(line) for line in shell.splitlines()]
    assert words[0][2] == str(shared / "mlperf" / "r.tar.xz")
    assert words[1][3:] == [str(shared / "gpu" / "b.jsonl"), str(shared / "x.jsonl")]
    python = Block("p.md", 1, "python", 'load("../shared/x.jsonl")', []).runnable_code()
    assert python == f'load("{shared}/x.jsonl")'


def test_a_block_naming_a_shared_file_that_is_absent_skips() -> None:
    """../shared with some rounds and not others (a GPU image) skips the blocks whose files
    are missing, as every other shared test does (no ../shared at all: the folder is what
    is missing, as on a clone elsewhere)."""

    def missing(path: str) -> list[str]:
        return [path] if SHARED.is_dir() else ["../shared"]

    named = "../shared/mlperf/no_such_round.tar.xz"
    assert shared_missing(f"gpuscale scores {named}") == missing(named)
    named = "../shared/mlperf/nothing.tar.xz"
    python = f'read_round("{named}", workers=4)'
    assert shared_missing(python) == missing(named)
    nothing_shared = "gpuscale advise --params 7M --step-ms 20"
    assert shared_missing(nothing_shared) == []


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["python", "bash"])
def test_a_busy_hosts_refusal_is_recognised_and_allowed(lang: str, tmp_path: Path) -> None:
    """On a busy host every bench row is flagged: the refusal, in Python's words or the
    command line's, is recognised, and the block re-run with flagged runs allowed works."""
    from .builders import one_and_two

    busy = ["machine busy: other processes used 60% of its CPU time during the timed steps"]
    with (tmp_path / "results.jsonl").open("w") as out:
        for record in one_and_two("tf-7m", 6_870_000, flags=busy):
            out.write(json.dumps(record) + "\n")
    code = {
        "python": 'import gpuscale\nprint(gpuscale.advise(bench="results.jsonl"))\n',
        "bash": "gpuscale advise --bench results.jsonl\n",
    }[lang]
    block = Block("busy.md", 1, lang, code, [])
    refused = _run_block(block, tmp_path)
    assert refused.returncode != 0 and REFUSED.search(" ".join(refused.stderr.split()))
    done = _as_told(block, tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
