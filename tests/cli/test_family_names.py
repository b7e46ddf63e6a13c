"""An accelerator family is read alike by every command: ``--family H100`` on analyze and
trends is H100-SXM5-80GB, as ``plan -a H100`` reads it, said in a note (not "ambiguous:
H100-NVL-94GB, H100-SXM5-80GB")."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

READ = "'H100' read as the accelerator family H100-SXM5-80GB"


def test_analyze_reads_a_family_as_plan_does() -> None:
    result = CliRunner().invoke(
        app, ["analyze", "--round", "v4.1", "-b", "bert", "--family", "H100", "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    assert READ in result.stderr
    rows = json.loads(result.stdout)["rounds"][0]["systems"]
    assert {r["accelerator_family"] for r in rows} == {"H100-SXM5-80GB"}


def test_analyze_reads_the_one_part_a_short_name_names_in_the_round() -> None:
    """v4.1's only A100 part is A100-PCIe-80GB: ``--family A100`` reads it (said)."""
    result = CliRunner().invoke(
        app, ["analyze", "--round", "v4.1", "--family", "A100", "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    assert "A100-PCIe-80GB" in result.stderr
    rows = json.loads(result.stdout)["rounds"][0]["systems"]
    assert {r["accelerator_family"] for r in rows} == {"A100-PCIe-80GB"}


def test_trends_reads_a_family_as_plan_does() -> None:
    result = CliRunner().invoke(app, ["trends", "-b", "bert", "--family", "H100", "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert READ in result.stderr
    families = {line.split(",")[1] for line in result.stdout.splitlines()[1:]}
    assert families == {"H100-SXM5-80GB"}


@pytest.mark.parametrize("command", ["analyze", "trends"])
def test_a_family_no_catalogue_knows_is_refused_with_the_closest(command: str) -> None:
    result = CliRunner().invoke(app, [command, "-b", "bert", "--family", "H10O-SXM"])
    assert result.exit_code == 2
    # the option named, as every refused value is (it said "unknown accelerator family ...")
    assert result.stderr.startswith("error: --family H10O-SXM: unknown accelerator family")


def test_a_known_accelerator_the_rounds_lack_is_not_called_unknown() -> None:
    """`trends --family B200 --round v3.0 --round v3.1` says these rounds ran nothing on
    B200, a known family, not that it is unknown."""
    from gpuscale.names import UnknownNameError, resolve_family

    with pytest.raises(UnknownNameError) as refused:
        resolve_family("B200", ["A100-SXM4-80GB", "H100-SXM5-80GB"])
    said = str(refused.value)
    assert "unknown" not in said and "B200 ('B200') is a known accelerator with no MLPerf" in said
    with pytest.raises(UnknownNameError, match="unknown accelerator family 'Z9'"):
        resolve_family("Z9", ["A100-SXM4-80GB"])


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("H1000", "H100"), ("A1000", "A100"), ("B2000", "B200"), ("MI30X", "MI300X")],
)
def test_a_typo_of_a_family_is_offered_the_short_name_it_was_meant_as(
    typed: str, meant: str
) -> None:
    """`plan -a H1000` offered nothing (every valid name is a long part name, H100-SXM5-80GB)
    and `-a A1000` offered 'A10G'; the short names that read as a valid family are offered
    too, the valid list itself unchanged."""
    from gpuscale.names import UnknownNameError, resolve_family

    valid = ["A100-SXM4-80GB", "A10G", "B200", "H100-SXM5-80GB", "MI300X"]
    with pytest.raises(UnknownNameError) as refused:
        resolve_family(typed, valid)
    said = str(refused.value)
    assert f"(did you mean {meant!r}?)" in said and said.endswith(f"valid: {', '.join(valid)}")
    assert resolve_family(meant, valid)[0] in valid  # what is offered is read


def test_a_device_name_advise_reads_is_read_by_plan_too() -> None:
    """`advise --device-name 4090` is an RTX 4090 (the device catalogue's alias); `plan -a
    4090` was refused ("did you mean 'RTX 4090'?"): one reading of a device name."""
    from gpuscale.names import resolve_device, resolve_family

    assert resolve_device("4090") == "4090"  # advise takes it
    family, said = resolve_family("4090", ["A100-SXM4-80GB", "RTX 4090"])
    assert family == "RTX 4090" and said == "'4090' read as the accelerator family RTX 4090"
    result = CliRunner().invoke(app, ["plan", "-w", "bert", "-a", "4090", "-n", "2", "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"]["family"] == "RTX 4090"


@pytest.mark.parametrize(("typed", "part"), [("RTX 5090", "RTX 5090"), ("5090", "RTX 5090")])
def test_a_catalogued_device_no_round_ran_is_not_offered_another(typed: str, part: str) -> None:
    """`plan -a 'RTX 5090'` said "unknown accelerator family (did you mean 'RTX 4090'?)":
    the device catalogue knows the 5090, MLPerf never ran one; it says so and points to
    advise for one's own, offering no other device."""
    from gpuscale.names import UnknownNameError, resolve_family

    valid = ["A100-SXM4-80GB", "RTX 4090"]
    with pytest.raises(UnknownNameError) as refused:
        resolve_family(typed, valid)
    said = str(refused.value)
    assert "ran no MLPerf" in said and f"device_name={part!r}" in said  # Python's words
    assert "unknown" not in said and "did you mean" not in said
    result = CliRunner().invoke(app, ["plan", "-w", "bert", "-a", typed])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"--device-name '{part}'" in result.stderr  # the command line's


@pytest.mark.parametrize(
    ("argv", "typed", "families"),
    [
        (["plan", "-b", "bert", "-n", "8", "-a"], "B200,MI300X", ["B200", "MI300X"]),
        (["plan", "-b", "bert", "-n", "8", "-a"], "B200 MI300X", ["B200", "MI300X"]),
        (["analyze", "-b", "bert", "--family"], "H100,B200", ["H100-SXM5-80GB", "B200"]),
        (["trends", "-b", "bert", "--family"], "H100/H200", ["H100-SXM5-80GB", "H200-SXM5-141GB"]),
    ],
)
def test_a_value_naming_several_families_is_refused_not_read_as_the_last(
    argv: list[str], typed: str, families: list[str]
) -> None:
    """``-a B200,MI300X`` planned B200 alone, ``--family H100,B200`` analysed B200 alone
    (a note said so); several families in one value are refused, each named."""
    result = CliRunner().invoke(app, [*argv, typed])
    assert result.exit_code == 2, result.output
    option = argv[-1] if argv[-1] != "-a" else "--accelerator"
    head, named = result.stderr.split(": names ", 1)
    assert head == f"error: {option} {typed}"
    count, listed = named.split(";")[0].split(" accelerator families, ")
    assert int(count) == len(families) and listed.split(" and ") == families


@pytest.mark.parametrize(
    ("typed", "family"),
    [("RTX A5000", "RTX A5000"), ("H100 SXM5 80GB", "H100-SXM5-80GB"), ("MI300X 192GB", "MI300X")],
)
def test_a_name_written_in_words_is_still_one_family(typed: str, family: str) -> None:
    from gpuscale.names import resolve_family

    valid = ["B200", "H100-SXM5-80GB", "MI300X", "RTX A5000"]
    assert resolve_family(typed, valid)[0] == family


@pytest.mark.parametrize("command", ["analyze", "trends"])
@pytest.mark.parametrize("second", ["H100", "h100-sxm5-80gb"])
def test_a_family_given_twice_is_refused_as_a_benchmark_given_twice_is(
    command: str, second: str
) -> None:
    """``-b bert -b bert`` is refused; ``--family H100 --family H100`` ran, its note said
    twice. A family read twice, however typed, is refused naming it, nothing run."""
    result = CliRunner().invoke(
        app, [command, "--round", "v4.1", "-b", "bert", "--family", "H100", "--family", second]
    )
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: --family H100,{second}: ")
    assert "H100-SXM5-80GB given twice; give each family once" in result.stderr


def test_analysis_options_refuse_a_family_given_twice() -> None:
    from gpuscale.analysis import AnalysisOptions, analyze
    from gpuscale.mlperf.bundled import load_round

    with pytest.raises(ValueError, match="H100-SXM5-80GB given twice"):
        analyze(load_round("v4.1"), ["bert"], AnalysisOptions(families=("H100", "H100")))


VIEW = "names/unknown_families"


@pytest.mark.parametrize(
    "argv",
    [["plan", "-w", "bert", "-a", "Gaudi"], ["trends", "-b", "bert", "--family", "Gaudi"]],
)
def test_a_family_that_ran_none_is_offered_the_one_it_begins(argv: list[str], golden) -> None:
    """`plan -a Gaudi` (first-generation Gaudi, a family the catalogue knows) said only that
    Gaudi ran nothing, where Gaudi2 ran: offered, as `-a H10O` is offered H100."""
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2 and "'Gaudi2'" in result.stderr  # quoted: offered
    assert "--round" in result.stderr
    golden.check(VIEW, f"{argv[0]}: Gaudi", result.stderr)


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["plan", "-w", "bert", "-n", "8", "-a", "MI250"], "--accelerator"),
        (["analyze", "-b", "bert", "--family", "MI250"], "--family"),
    ],
)
def test_a_name_read_as_another_family_that_ran_none_says_how_it_was_read(
    argv: list[str], option: str, golden
) -> None:
    """A walk: `plan -w bert -a MI250` was refused about "accelerator family MI250X", a
    part the MI250 is not, without saying it read MI250 so; a family read and run says
    it ("'H100' read as ..."), a family read and refused now says it too, one line."""
    from gpuscale.names import UnknownNameError, resolve_family

    result = CliRunner().invoke(app, argv)
    said = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(said) == 1, result.output
    read = "'MI250' read as the accelerator family MI250X, which is a known accelerator"
    assert said[0].startswith(f"error: {option} MI250: {read}")
    golden.check(VIEW, f"{argv[0]}: MI250", result.stderr)
    with pytest.raises(UnknownNameError) as refused:  # Python's message: the same reading
        resolve_family("MI250", ["H100-SXM5-80GB"])
    assert str(refused.value).startswith(read) and "('MI250')" not in str(refused.value)


@pytest.mark.parametrize(
    ("typed", "family"),
    [("A100", "A100-SXM4-80GB"), ("h100", "H100-SXM5-80GB"), ("H100-PCIe", "H100-PCIe-80GB")],
)
def test_plan_says_how_it_read_each_short_name(typed: str, family: str) -> None:
    """`-a A100`, `-a h100`, `-a H100-PCIe` each say the family they were read as, in the
    answer's lines and JSON's notes."""
    asked = ["plan", "-w", "bert", "-n", "8", "-a", typed]
    result = CliRunner().invoke(app, asked)
    assert result.exit_code == 0, result.output
    read = f"{typed!r} read as the accelerator family {family}"
    assert read in " ".join(result.stderr.split())
    document = json.loads(CliRunner().invoke(app, [*asked, "-f", "json"]).stdout)
    assert document["model"]["family"] == family and document["notes"][0].startswith(read)


def test_python_is_told_python_words_where_a_family_is_refused(golden) -> None:
    """`gpuscale.plan(accelerator='Gaudi')` said `--round`, `scaling_table(families='H100,B200')`
    `--family`: Python's refusals name what Python takes (a keyword, a reader)."""
    import gpuscale
    from gpuscale.names import UnknownNameError

    scores = gpuscale.load_round("v4.1").scores
    calls = {
        "plan: Gaudi": lambda: gpuscale.plan(workload="bert", accelerator="Gaudi"),
        "plan: RTX 5090": lambda: gpuscale.plan(workload="bert", accelerator="RTX 5090"),
        "scaling_table: H100,B200": lambda: gpuscale.scaling_table(
            scores, "bert", families="H100,B200"
        ),
    }
    for case, call in calls.items():
        with pytest.raises(UnknownNameError) as refused:
            call()
        said = str(refused.value)
        assert "--" not in said, said
        golden.check(VIEW, f"Python {case}", said)
    with pytest.raises(UnknownNameError) as refused:
        gpuscale.plan(workload="bert", accelerator="Gaudi")
    assert "'Gaudi2'" in str(refused.value)


def test_a_phrase_is_spelled_for_each_reader() -> None:
    from gpuscale.tables.refusals import as_keywords, as_options, ref, spelled

    text = f"{spelled('--round', 'load_round()')} and {ref('fixed_ms', 30)}"
    assert as_options(text) == "--round and --fixed-ms 30"
    assert as_keywords(text) == "load_round() and fixed_ms=30"


@pytest.mark.parametrize(
    ("typed", "advised"),
    [
        ("V100", "V100"),
        ("B300", "B300"),
        ("GH200", "GH200"),
        ("MI355X", "MI355X"),
        ("B100", "B100"),
        ("MI300A", "MI300A"),
        ("L20", "L20"),
    ],
)
def test_a_known_product_the_rounds_lack_is_offered_no_family_spelt_alike(
    typed: str, advised: str, golden
) -> None:
    """`plan -a V100` offered 'H100', `-a B300` 'B200', `-a GH200` 'H200', `-a MI355X`
    'MI325X': other products, offered by their spelling alone. A known accelerator is said
    to have no result here, pointed to `advise --device-name`, which then runs."""
    result = CliRunner().invoke(app, ["plan", "-w", "bert", "-a", typed])
    said = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(said) == 1, result.output
    assert "did you mean" not in said[0] and "Traceback" not in result.output
    assert "is a known accelerator with no MLPerf result in the rounds loaded" in said[0]
    assert f"gpuscale advise --device-name {advised};" in said[0]
    advice = CliRunner().invoke(
        app, ["advise", "--device-name", advised, "--params", "7M", "--step-ms", "20"]
    )
    assert advice.exit_code == 0, advice.output
    golden.check(VIEW, f"plan: {typed}", result.stderr)


@pytest.mark.parametrize(("typed", "meant"), [("H10O", "H100"), ("B20O", "B200")])
def test_a_typo_of_a_family_is_still_offered_its_name(typed: str, meant: str) -> None:
    result = CliRunner().invoke(app, ["plan", "-w", "bert", "-a", typed])
    said = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(said) == 1, result.output
    assert f"unknown accelerator family (did you mean {meant!r}?)" in said[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["analyze", "--round", "v3.1", "-b", "bert", "--family", "CPU only"],
        ["trends", "--round", "v3.1,v4.0", "--family", "cpu only"],
    ],
)
def test_a_family_with_no_accelerator_count_is_refused_as_such_and_never_offered(
    argv: list[str],
) -> None:
    """v3.1's Intel SPR systems are family "CPU only" with no accelerator count: no scaling
    table holds them, so a --family naming them is refused saying why, and no list of valid
    families offers them (a typo's list neither)."""
    from gpuscale.analysis.metrics import counted_families
    from gpuscale.mlperf.load import load_round
    from gpuscale.names import UnknownNameError

    result = CliRunner().invoke(app, argv)
    said = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(said) == 1, result.output
    assert "no accelerator count" in said[0]
    assert "CPU only" not in said[0].split("valid here: ")[1].split(", ")
    typo = CliRunner().invoke(app, [*argv[:-1], "Z900"])
    assert typo.exit_code == 2 and "CPU only" not in typo.stderr
    scores = load_round("v3.1").scores
    assert "CPU only" in set(scores["accelerator_family"])  # the case is in the data
    with pytest.raises(UnknownNameError) as refused:
        counted_families(scores, ["CPU only"])
    assert refused.value.typed == "CPU only"
    chosen, _ = counted_families(scores, ["H100-SXM5-80GB"])
    assert chosen == ["H100-SXM5-80GB"]


@pytest.mark.parametrize(("typed", "offered"), [("H20", []), ("A10", ["A10G"])])
def test_a_number_is_never_offered_a_longer_number(typed: str, offered: list[str]) -> None:
    """H20 and H200 are other products, as A10 and A100 are: a family a known product's
    name begins is offered only where no digit follows a digit (A10 of A10G)."""
    import re

    result = CliRunner().invoke(app, ["plan", "-w", "bert", "-a", typed])
    (said,) = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and "known accelerator with no MLPerf result" in said
    meant = re.search(r"\(did you mean ([^)]*)\?\)", said)
    assert re.findall(r"'([^']+)'", meant[1] if meant else "") == offered, said
