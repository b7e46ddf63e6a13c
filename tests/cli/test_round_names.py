"""``--round`` beside raw paths adds bundled rounds ("the bundled rounds plus my new
folder"); a path whose name says no round is read by the first ``--round``'s rules and
listed as the user's (its folder name, the round beside it), beside that round where
bundled."""

from __future__ import annotations

import ast
import io
import shutil
import tokenize
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.mlperf.bundled import bundled_rounds

from ..mlperf.logbuilder import RoundBuilder

runner = CliRunner()


def _rounds_of(output: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in output.splitlines()[1:]:
        counts[line.split(",")[0]] = counts.get(line.split(",")[0], 0) + 1
    return counts


def _new_round(tmp_path: Path) -> Path:
    rb = RoundBuilder(name="training_results_v5.1")
    rb.system("Acme", "box").runs("Acme", "box", "retinanet", [30, 31, 32, 33, 34])
    return rb.write_dir(tmp_path)


def test_round_names_add_bundled_rounds_beside_a_path(tmp_path: Path) -> None:
    path = _new_round(tmp_path)
    result = runner.invoke(app, ["scores", str(path), "--round", "v4.1", "-f", "csv"])
    assert result.exit_code == 0, result.output
    rounds = _rounds_of(result.stdout)
    assert rounds["v5.1"] == 1 and rounds["v4.1"] > 100  # the folder and bundled v4.1
    two = runner.invoke(app, ["trends", str(path), "--round", "v4.1", "--round", "v5.0"])
    assert two.exit_code == 0, two.output
    assert "v4.1" in two.stdout and "v5.0" in two.stdout and "v5.1" in two.stdout


def test_a_path_without_a_round_in_its_name_takes_the_first_round(tmp_path: Path) -> None:
    plain = tmp_path / "my-results"
    shutil.move(str(_new_round(tmp_path)), plain)
    result = runner.invoke(
        app, ["scores", str(plain), "--round", "v5.1", "--round", "v4.1", "-f", "csv"]
    )
    assert result.exit_code == 0, result.output
    rounds = _rounds_of(result.stdout)  # v5.1 is not bundled: not fetched beside the folder
    assert rounds.pop("my-results (v5.1)") == 1 and rounds.pop("v4.1") > 100 and not rounds
    alone = runner.invoke(app, ["scores", str(plain), "-f", "csv"])
    assert alone.exit_code == 2 and "cannot tell the round" in alone.output


def test_a_users_folder_is_listed_as_theirs_beside_the_bundled_round(tmp_path: Path) -> None:
    """A path whose name says no round, given --round v4.0, was listed as v4.0 itself and
    read instead of the bundled v4.0, so one's own results could not sit beside the
    published ones: they are listed under the folder's name with the round beside it, the
    bundled round read beside them, and the help says so."""
    from gpuscale import load_round
    from gpuscale.tables.requests import help_of
    from gpuscale.tables.round_requests import RoundSelection

    plain = tmp_path / "my results"
    shutil.move(str(_new_round(tmp_path)), plain)
    result = runner.invoke(app, ["scores", str(plain), "--round", "v4.0", "-f", "csv"])
    assert result.exit_code == 0, result.output
    published = len(load_round("v4.0").scores)
    assert _rounds_of(result.stdout) == {"my results (v4.0)": 1, "v4.0": published}
    said = " ".join(help_of(RoundSelection, "round_names").split())
    assert "listed as yours: 'my-results (v4.1)'" in said
    assert "that round is added beside it where bundled" in said


def test_the_scores_table_does_not_call_a_users_folder_official(tmp_path: Path) -> None:
    """The terminal table's title said 'official scores' above the rows of one's own
    folder: scored by the official rule, they are no official MLPerf result (as the
    report's header says); a published round alone keeps the title."""
    plain = tmp_path / "my results"
    shutil.move(str(_new_round(tmp_path)), plain)
    args = ["scores", str(plain), "--round", "v5.0", "-b", "retinanet"]
    mine = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert mine.exit_code == 0, mine.output
    assert "official scores" not in mine.stdout
    assert "MLPerf Training scores, by the official rule (minutes)" in mine.stdout
    published = runner.invoke(app, ["scores", *args[2:]], env={"COLUMNS": "200"})
    assert published.exit_code == 0, published.output
    assert "MLPerf Training official scores (minutes)" in published.stdout


def test_a_users_folder_has_its_own_report_section_beside_the_rounds(tmp_path: Path) -> None:
    """The report of one's own folder beside the published round: a section each, the
    folder's titled by its name with the round whose rules read it, its ruleset said,
    and its figures' files named without a space or bracket."""
    plain = tmp_path / "my results"
    shutil.move(str(_new_round(tmp_path)), plain)
    out = tmp_path / "report"
    args = ["report", str(plain), "--round", "v5.0", "-b", "retinanet", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    page = (out / "index.html").read_text()
    assert "<h2>RetinaNet (my results (v5.0))</h2>" in page and "<h2>RetinaNet (v5.0)</h2>" in page
    assert "my results (v5.0) (your folder, ruleset 5.0.0)" in page
    files = sorted(p.name for p in out.iterdir() if p.name.startswith("my"))
    assert "my-results-v5.0_retinanet_scaling.svg" in files, files
    assert not [f for f in files if set(f) & set(" ()")], files


def test_the_round_a_path_needs_is_said_as_an_option_and_a_repeated_one_says_what_to_drop(
    tmp_path: Path,
) -> None:
    """The error for a path whose name says no round names --round, never
    ``round_name='v4.1'`` (Python) on the command line; given that --round beside a copy
    whose name says the round, the refusal says --round is what to drop."""
    plain = tmp_path / "my-results"
    shutil.move(str(_new_round(tmp_path)), plain)
    alone = runner.invoke(app, ["scores", str(plain)])
    line = alone.stderr.strip()
    assert alone.exit_code == 2 and line.count("\n") == 0
    # the example is the newest round shipped (read from the package's tables), not v4.1
    newest = bundled_rounds()[-1]
    assert line.endswith(f"e.g. --round {newest}") and "round_name" not in line
    named = tmp_path / "copy_v5.1"
    shutil.move(str(plain), named)
    for extra in ([], ["-b", "retinanet"]):
        both = runner.invoke(app, ["scores", str(named), "--round", "v5.1", *extra])
        said = both.stderr.strip()
        assert both.exit_code == 2 and said.startswith("error: ") and "\n" not in said
        assert "drop --round" in said
    assert runner.invoke(app, ["scores", str(named), "-f", "csv"]).exit_code == 0


@pytest.mark.parametrize(("name", "how"), [("v4.1", "the bundled tables"), ("v1.1", "fetched")])
def test_a_path_and_the_same_round_by_name_say_what_the_name_adds(
    tmp_path: Path, name: str, how: str
) -> None:
    """A path and the same round by name are refused saying what the name adds beside the
    path: the bundled tables, or the round fetched by name (never "a bundled --round" for a
    round that is not bundled), before anything is read or fetched."""
    path = _new_round(tmp_path).rename(tmp_path / f"training_results_{name}")
    result = runner.invoke(app, ["scores", str(path), "--round", name])
    assert result.exit_code == 2
    assert f"and as --round {name}, which beside such a path adds" in result.stderr
    assert how in result.stderr and "bundled --round" not in result.stderr


ROOT = Path(__file__).resolve().parents[2]


def _sentences(text: str) -> list[str]:
    """``text``'s sentences, line breaks folded into spaces."""
    folded = " ".join(line.strip() for line in text.splitlines())
    return [s for s in folded.replace("`", "").split(". ") if s]


def _words_of_code(path: Path) -> str:
    """A module's docstrings and comments: its words, not its code."""
    source = path.read_text()
    docs = [
        ast.get_docstring(node) or ""
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    comments = [t.string.lstrip("#").strip() for t in tokens if t.type == tokenize.COMMENT]
    return "\n\n".join([*docs, " ".join(comments)])


def test_a_round_beside_a_path_is_said_bundled_or_fetched_never_bundled_only() -> None:
    """A ``--round`` beside a path adds that round whether bundled or fetched by name (a
    round not bundled is fetched): no page nor the code's words call what it adds "a
    bundled round" alone, the wording a path round that is not bundled was refused in."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    texts = {page: page.read_text() for page in pages}
    texts |= {m: _words_of_code(m) for m in sorted((ROOT / "src" / "gpuscale").rglob("*.py"))}
    wrong = [
        f"{path.relative_to(ROOT)}: {sentence}"
        for path, text in texts.items()
        for sentence in _sentences(text)
        if "--round" in sentence
        and "beside" in sentence
        and "bundled" in sentence
        and "fetched" not in sentence
        and "without --round" not in sentence  # the default: every bundled round, rightly
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("v5", "v5.0"),
        ("v41", "v4.1"),
        ("v4.l", "v4.1"),
        ("V5.O", "v5.0"),
        ("v123", None),
        ("v9", None),  # v9.0 is no round: never offered
        ("v08", None),  # nor v0.8
    ],
)
def test_a_mistyped_round_name_is_offered_the_round_it_reads_as(
    typed: str, meant: str | None, golden
) -> None:
    """``--round v5`` (the minor number left out), ``v41`` (the dot), ``v4.l`` (a letter
    for a digit): refused, one line, offering the round meant; a name with no such reading
    gets the example."""
    result = runner.invoke(app, ["scores", "--round", typed])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    said = result.stderr.strip()
    assert said.startswith("error: ") and typed in said
    assert repr(meant) in said if meant else "v4.1" in said  # the round offered, or the example
    golden.check("cli/round_names", f"--round {typed}", said)


def test_a_mistyped_round_name_in_python_and_ingest_is_offered_it_too() -> None:
    """``load_round("v5")`` and ``ingest PATH --round-name v5`` read names through
    ``normalise_round``: the same offer as ``--round``."""
    from gpuscale import load_round

    with pytest.raises(ValueError, match=r"'v5\.0'"):  # the round offered
        load_round("v5")
    with pytest.raises(ValueError, match=r"v4\.1"):  # no reading: the example
        load_round("v123")


@pytest.mark.parametrize("typed", ["v9", "9", "v08", "v7"])
def test_a_round_name_that_reads_as_no_round_is_offered_none(typed: str) -> None:
    """``load_round("v9")`` offered 'v9.0', a round that does not exist: only a round
    bundled or fetched by name is offered; else the example."""
    from gpuscale import load_round
    from gpuscale.mlperf.load import RoundNamesError, published_rounds

    with pytest.raises(RoundNamesError) as refused:
        load_round(typed, offline=True)
    said = str(refused.value)
    assert "did you mean" not in said and "like v4.1" in said, said
    assert len(said.splitlines()) == 1
    for offered in ("v5", "v41", "v1"):  # each round offered is one gpuscale reads
        with pytest.raises(RoundNamesError, match=r"did you mean 'v(\d\.\d)'") as refused:
            load_round(offered, offline=True)
        meant = str(refused.value).split("'")[-2]
        assert meant in published_rounds(), meant


@pytest.mark.parametrize(("rules", "offered"), [(("v6.0", "v6.1"), "v6.1"), ((), "v5.1")])
def test_a_round_offered_or_listed_is_said_published_only_where_it_is(
    monkeypatch, rules: tuple[str, ...], offered: str
) -> None:
    """A walk: `trends --round v9.9` offered 'v6.1' and listed "the rounds MLCommons
    published with mlperf-logging's rules, v0.6 to v6.1", where v6.0 and v6.1 are rounds
    only the installed mlperf-logging's rules name (their results not known to be out).
    The refusal lists the published rounds apart from those, and an offer of one says so."""
    from gpuscale import load_round
    from gpuscale.mlperf import load
    from gpuscale.mlperf.load import RoundNamesError
    from gpuscale.tables.workloads import PUBLISHED, round_key

    monkeypatch.setattr(load, "round_names_known", lambda: frozenset(PUBLISHED) | set(rules))
    newest = max(PUBLISHED, key=round_key)
    with pytest.raises(RoundNamesError) as refused:
        load_round("v9.9", offline=True)
    said = str(refused.value)
    assert f"(did you mean {offered!r}" in said
    assert ("whose results may not be out" in said) == bool(rules)
    assert f"the rounds MLCommons published, v0.6 to {newest}" in said
    listed = said.split("has rules for, ")[1].split(";")[0] if rules else ""
    assert listed == " and ".join(rules) and ("rules for" in said) == bool(rules)


def test_a_path_given_as_a_round_is_refused_with_the_path_to_give(tmp_path: Path, golden) -> None:
    """A folder or archive after --round: refused in one line that names it, quoted as a
    shell takes it, to give without --round, as the command then reads it."""
    path = _new_round(tmp_path / "my results")
    result = runner.invoke(app, ["scores", "--round", str(path), "-f", "csv"])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert result.stderr.strip().endswith(f"'{path}')")
    assert runner.invoke(app, ["scores", str(path), "-f", "csv"]).exit_code == 0
    for typed in ("my results/v5.1.zip", "v4.1.zip"):  # by its separator, or an archive's
        said = runner.invoke(app, ["scores", "--round", typed]).stderr.strip()  # none there
        golden.check("cli/round_names", f"--round {typed}", said)


def test_a_path_given_to_load_round_names_read_round(tmp_path: Path) -> None:
    """``load_round`` takes round names; a folder or an archive given to it is refused in
    one line naming ``read_round``, which reads it (a name of no such path: by its separator
    or its archive's suffix)."""
    from gpuscale import load_round
    from gpuscale.mlperf.load import RoundNamesError

    folder = tmp_path / "my results"
    folder.mkdir()
    for typed in (str(folder), "training_results_v1.1.tar.xz", "results/v0.7"):
        with pytest.raises(RoundNamesError) as refused:
            load_round(typed, offline=True)
        assert str(refused.value) == (
            f"not a round name: {typed!r} (a folder or archive: read_round({typed!r}) reads it)"
        )


# Every command taking --round by name (RoundSelection), each with what it needs beside it
ROUND_COMMANDS = [
    ["scores", "-b", "bert"],
    ["analyze", "-b", "bert", "-f", "json"],
    ["energy", "-b", "llama2_70b_lora"],
    ["trends", "-b", "bert"],
    ["plan", "-w", "bert", "-a", "H100-SXM5-80GB", "-n", "8"],
]


@pytest.mark.parametrize("args", ROUND_COMMANDS, ids=[a[0] for a in ROUND_COMMANDS])
def test_a_round_typed_without_its_v_is_said_read_as_the_round(args: list[str]) -> None:
    """``--round 4.1`` reads v4.1, said in one note (as a workload typed otherwise is),
    the output the same as ``--round v4.1``'s; ``--round v4.1`` and ``V4.1`` say nothing."""
    typed = runner.invoke(app, [*args, "--round", "4.1"])
    named = runner.invoke(app, [*args, "--round", "v4.1"])
    capital = runner.invoke(app, [*args, "--round", "V4.1"])
    assert typed.exit_code == named.exit_code == capital.exit_code == 0, typed.output
    notes = [x for x in typed.stderr.splitlines() if x.startswith("note: '4.1'")]
    assert [n.split() for n in notes] == [["note:", "'4.1'", "read", "as", "v4.1"]]
    assert typed.stdout == named.stdout == capital.stdout
    assert "read as v4.1" not in named.stderr + capital.stderr


def test_a_round_name_is_said_read_as_once_and_a_round_not_there_is_refused() -> None:
    """``4.0.0`` and ``4.0`` each said read as v4.0 (the round read once); a round that
    does not exist refused in one error naming the rounds there."""
    both = runner.invoke(app, ["scores", "--round", "4.0.0,4.0", "-b", "bert", "-f", "csv"])
    assert both.exit_code == 0, both.output
    said = [x.split()[1:] for x in both.stderr.splitlines() if "read as" in x]
    assert said == [["'4.0.0'", "read", "as", "v4.0"], ["'4.0'", "read", "as", "v4.0"]]
    missing = runner.invoke(app, ["scores", "--round", "4.7", "--offline"])
    assert missing.exit_code == 2
    error = [x for x in missing.stderr.splitlines() if x.startswith("error: ")]
    assert len(error) == 1 and all(r in error[0] for r in bundled_rounds())


def test_ingest_says_its_round_typed_without_its_v_read_as_the_round(tmp_path: Path) -> None:
    """``ingest PATH --round 5.1``: the path's round read as v5.1, said as every command
    taking --round says it."""
    rb = RoundBuilder(name="my-results")
    rb.system("Acme", "box").runs("Acme", "box", "retinanet", [30, 31, 32, 33, 34])
    path = rb.write_dir(tmp_path)
    out = tmp_path / "tables"
    result = runner.invoke(app, ["ingest", str(path), "--round", "5.1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert [x.split() for x in result.stderr.splitlines() if "read as" in x] == [
        ["note:", "'5.1'", "read", "as", "v5.1"]
    ]
