"""docs/advice.md's worked example of an input that cannot be true says what the command
prints: its numbers are read from the page and found in the output (the page said
"0.115 TFLOP/s on an H100 and 41 s" long after the command printed 2.88 TFLOP/s and
0.0421 min; a user walk)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from gpuscale.cli import app

PAGE = Path(__file__).resolve().parents[2] / "docs" / "advice.md"


def _example() -> list[str]:
    """The page's last `gpuscale advise` example (the one its text calls "the last")."""
    block = PAGE.read_text().split("```bash", 1)[1].split("```", 1)[0]
    commands = block.replace("\\\n", " ").strip().splitlines()
    last = [c for c in commands if c.strip().startswith("gpuscale advise")][-1]
    return shlex.split(last.split("#")[0])[1:]


def test_the_implausible_example_says_what_the_command_prints() -> None:
    text = " ".join(PAGE.read_text().split())
    said = text.split("The last example above is such an input:", 1)[1].split("Its rate,")[0]
    claimed = re.findall(r"(\d[\d.,]*) min", said)
    rate = re.search(r"Its rate, (\d[\d.]*) TFLOP/s", text)
    assert claimed and rate, said
    args = [a for a in _example() if a not in ("-f", "json")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    # the warning is in the short answer, the rate in the explanation (--explain)
    implausible = [s for s in result.stdout.replace("\n  ", " ").splitlines() if "IMPLAUSIBLE" in s]
    assert implausible, result.stdout
    for number in claimed:
        assert f"{number} min" in " ".join(implausible), (number, implausible)
    explained = CliRunner().invoke(app, [*args, "--explain"])
    output = " ".join(explained.stdout.split())
    assert f"{rate.group(1)} TFLOP/s" in output
    assert not any("TFLOP/s" in line for line in implausible)  # the rate is not flagged
