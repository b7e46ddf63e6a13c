"""One quantity, one spelling on every command that takes it (``advise --power-w``
against ``plan --power``; ``--topo``, ``--topo-file`` and ``--file`` for a saved
``nvidia-smi topo -m``): each command accepts the shared spelling, its own kept too."""

from __future__ import annotations

import re

import pytest
import typer.main

from gpuscale.cli import app

COMMANDS = typer.main.get_command(app).commands
SHARED = {
    "--power-w": ("advise", "plan"),
    "--topo-file": ("advise", "collectives", "topo"),
    "--price": ("advise", "plan"),
    "--interconnect": ("advise", "plan", "report", "collectives"),
    "--max-devices": ("advise", "report"),
    "--allow-flagged": ("advise", "report"),
    # one quantity, several names across commands
    "--workload": ("scores", "analyze", "report", "energy", "trends", "plan", "advise"),
    "--benchmark": ("scores", "analyze", "report", "energy", "trends", "plan", "advise"),
    # and its short names: -b wherever it is taken, -w as plan takes it
    "-b": ("scores", "analyze", "report", "energy", "trends", "plan", "advise"),
    "-w": ("plan", "advise"),
}


def _spellings(command: str) -> set[str]:
    return {o for p in COMMANDS[command].params for o in [*p.opts, *p.secondary_opts]}


@pytest.mark.parametrize("option", sorted(SHARED))
def test_a_shared_quantity_is_spelled_alike(option: str) -> None:
    lacking = [c for c in SHARED[option] if option not in _spellings(c)]
    assert lacking == [], f"{option} not taken by {lacking}"


def test_every_option_has_a_long_name() -> None:
    """A short flag alone cannot be read in a script or found in the docs (``analyze -k``
    had no long name): every option of every command takes a ``--name``."""
    short_only = [
        f"{command} {'/'.join(p.opts)}"
        for command, cmd in COMMANDS.items()
        for p in cmd.params
        if p.param_type_name == "option"
        and not any(o.startswith("--") for o in [*p.opts, *p.secondary_opts])
    ]
    assert short_only == []


def test_a_letter_typed_for_a_digit_is_offered_the_name_it_looks_like() -> None:
    """``H1OO`` (letters O) and ``A1OO`` name no family; the suggestion reads an ``o``
    beside a digit as ``0`` and an ``l`` as ``1``, as the device names' search does."""
    from gpuscale.tables.spelling import did_you_mean, digits_read

    assert digits_read("h1oo") == "h100" and digits_read("a1l") == "a11"
    assert digits_read("bloom") == "bloom"  # no digit beside it: a word, unchanged
    assert did_you_mean("H1OO", ["H100", "A100", "B200"]) == " (did you mean 'H100'?)"
    assert did_you_mean("nosuch", ["H100", "A100"]) == ""


@pytest.mark.parametrize(
    ("command", "typed", "meant"),
    [
        ("plan", "--gpus", {"--devices"}),
        ("plan", "--num-gpus", {"--devices"}),
        ("plan", "--gpu", {"--accelerator"}),
        ("bench", "--gpus", {"--nproc"}),
        ("bench", "--gpu-count", {"--nproc"}),
        ("advise", "--accelerators", {"--max-devices"}),
        ("advise", "--gpus", {"--gpus-per-node", "--max-devices"}),
        ("advise", "--gpu", {"--gpus-per-node", "--device-name"}),
        ("advise", "--accelerator", {"--device-name"}),
        ("plan", "--device-name", {"--accelerator"}),
    ],
)
def test_a_users_word_for_devices_finds_the_option(command: str, typed: str, meant: set) -> None:
    """``plan --gpus 8`` is refused naming ``--devices`` (gpuscale's word for a count),
    every option offered one the command takes."""
    from gpuscale.tables.spelling import unknown_option

    said = unknown_option(typed, sorted(_spellings(command)), f"gpuscale {command}")
    offered = set(re.findall(r"'(--[a-z-]+)'", said))
    assert offered == meant
    assert offered <= _spellings(command)


@pytest.mark.parametrize(
    ("typed", "offered"),
    [
        ("llama3-7b", ["llama3-8b", "llama2-7b", "llama3-70b"]),  # a digit changed, then added
        ("llama2-7", ["llama2-7b"]),
        ("fsdpp", ["fsdp"]),
    ],
)
def test_a_near_name_of_other_digits_comes_after_those_of_the_same(
    typed: str, offered: list[str]
) -> None:
    import gpuscale
    from gpuscale.tables.requests import FieldError
    from gpuscale.tables.spelling import likeliest

    names = ["llama3-8b", "llama3-70b", "llama2-7b", "llama2-70b", "fsdp", "ddp"]
    assert likeliest(typed, names) == offered
    if typed.startswith("llama3"):  # the Python API and the command line alike
        with pytest.raises(FieldError) as refused:
            gpuscale.advise(preset=typed, step_ms=500, batch=8)
        assert re.findall(r"'([^']+)'", str(refused.value).split("did you mean")[1]) == offered


@pytest.mark.parametrize(
    ("command", "typed", "meant"),
    [
        ("advise", "--price-per-device-hour", "--price"),  # the Python keyword, dashed
        ("plan", "--price_per_device_hour", "--price"),
        ("advise", "--max_devices", "--max-devices"),
        ("plan", "--link", "--interconnect"),  # advise's keyword link=, on every command
    ],
)
def test_a_python_keyword_typed_as_an_option_is_offered_its_option(
    command: str, typed: str, meant: str
) -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, [command, typed, "3"])
    assert result.exit_code == 2
    assert re.findall(r"did you mean '(--[a-z-]+)'", result.output) == [meant]
