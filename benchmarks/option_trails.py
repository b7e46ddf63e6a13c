"""How far each ``gpuscale advise`` option travels from the CLI to where it is used.

Usage::

    python benchmarks/option_trails.py [--goal-stays 12] [--goal-returns 5]

Runs ``gpuscale advise`` (Typer's test runner, in this process) on a few requests a user
makes (by numbers; on the bench rows of ``../shared/gpu/h100/`` where they exist; on a
results file this script writes) with every read of an :class:`AdviceRequest` field
recorded with its call stack, and the value read followed into every package function
handed it (the same object) until it is turned into another. For each option, its
trail is the modules of the stack from ``cli/advice.py``'s command to the deepest
function reading it or handed it: a *stay* is a run of frames in one module, a *return*
a module entered again after the trail left it.
Prints, per option, its longest trail (stays, returns, the modules), and the most of
any option against the goals (issue 39: at most 12 stays and 5 returns).

What it does not measure: a value once turned into another (``bucket_mb * 2**20``) or
put in a container (a dataclass, a DataFrame) is followed no further; flags, None and
small ints cannot be told apart by identity, so their trail ends where they are read.
The whole request's trip through the advice (every value derived from it) is a longer
one, one module per step of the model.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from types import FrameType

from typer.testing import CliRunner

from gpuscale.advice.request import AdviceRequest
from gpuscale.cli import app

PACKAGE = Path(sys.modules["gpuscale"].__file__).resolve().parent
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "gpu" / "h100"
FIELDS = frozenset(f.name for f in fields(AdviceRequest))


def _module(frame: FrameType) -> str | None:
    """The package module a frame runs in (``advice/api.py``), else None."""
    path = Path(frame.f_code.co_filename).resolve()
    return str(path.relative_to(PACKAGE)) if path.is_relative_to(PACKAGE) else None


def _trail(frame: FrameType | None) -> list[str] | None:
    """The package modules from the advise command down to ``frame``, one entry a stay
    (consecutive frames in one module); None where the read is outside the command
    (Typer building the request)."""
    modules: list[str] = []
    while frame is not None:
        module = _module(frame)
        if module is not None:
            modules.append(module)
        if module == "cli/advice.py" and frame.f_code.co_name == "advise_command":
            outward = modules[::-1]
            return [m for k, m in enumerate(outward) if k == 0 or m != outward[k - 1]]
        frame = frame.f_back
    return None


def returns_of(trail: list[str]) -> int:
    """Modules entered again after the trail left them."""
    return len(trail) - len(set(trail))


def _followed(value: object) -> bool:
    """Whether a value can be told apart by identity as it is passed on: not None, a
    flag, an interned small int or a short string (those are shared by unrelated code)."""
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, int) and -5 <= value <= 256:
        return False
    return not (isinstance(value, str) and len(value) < 2)


@contextmanager
def recorded(reads: dict[str, list[list[str]]]) -> Iterator[None]:
    """Every read of an ``AdviceRequest`` field inside the command, and every later call
    of a package function that is handed the value read (the same object), with its
    trail."""
    plain = AdviceRequest.__getattribute__
    values: dict[int, tuple[str, object]] = {}  # id -> (field, the value, kept alive)

    def traced(self: AdviceRequest, name: str):  # type: ignore[no-untyped-def]
        value = plain(self, name)
        if name in FIELDS:
            trail = _trail(sys._getframe(1))
            if trail is not None:
                reads.setdefault(name, []).append(trail)
                if _followed(value):
                    values[id(value)] = (name, value)
        return value

    def calls(frame: FrameType, event: str, _arg: object) -> None:
        if event != "call" or not values or _module(frame) is None:
            return
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount
        for argument in code.co_varnames[:count]:
            held = values.get(id(frame.f_locals.get(argument)))
            if held is not None and frame.f_locals.get(argument) is held[1]:
                trail = _trail(frame)
                if trail is not None:
                    reads[held[0]].append(trail)

    AdviceRequest.__getattribute__ = traced  # type: ignore[method-assign]
    sys.setprofile(calls)
    try:
        yield
    finally:
        sys.setprofile(None)
        AdviceRequest.__getattribute__ = plain  # type: ignore[method-assign]


def _results_file(folder: Path) -> Path:
    """A bench results file of the README's quickstart, written by ``gpuscale bench``."""
    out = folder / "results.jsonl"
    args = ["bench", "--backend", "gloo", "--nproc", "1,2", "--models", "mlp-0.2m"]
    args += ["--steps", "2", "--warmup", "1", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    if not out.exists():
        raise SystemExit(f"gpuscale bench wrote no results: {result.output[-400:]}")
    return out


BY_NUMBERS = (  # every option a request by numbers takes, at least once
    "--params 7M --step-ms 2 --batch 64 --interconnect pcie-phb",
    "--params 350M --step-ms 120 --batch 8 --flops-per-sample 2.1T --device-name h100"
    " --nodes 2 --gpus-per-node 8 --noise-scale 4096 --samples 1e9 --price 2.5"
    " --power-w 700 --strategy fsdp --fixed-ms 3 --busbw-gbs 300 --latency-us 5"
    " --inter-node ib-ndr400",
)


def requests(folder: Path) -> list[list[str]]:
    """The ``advise`` argument lists measured: by numbers, on a results file
    ``gpuscale bench`` writes here, and on each file of bench rows measured on an H100."""
    runs = [shlex.split(line) for line in BY_NUMBERS]
    runs.append(["--bench", str(_results_file(folder)), "-f", "json"])
    rows = sorted(SHARED.glob("*.jsonl"))
    if not rows:  # the trails are then those of the other requests alone: said
        print(f"(no bench rows measured on an H100 at {SHARED}: those requests left out)")
    runs += [["--bench", str(p), "-f", "csv"] for p in rows]
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goal-stays", type=int, default=12)
    parser.add_argument("--goal-returns", type=int, default=5)
    args = parser.parse_args()
    reads: dict[str, list[list[str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for argv in requests(Path(tmp)):
            with recorded(reads):
                result = CliRunner().invoke(app, ["advise", *argv])
            if result.exit_code != 0:  # a refused request measures nothing: say so, stop
                raise SystemExit(f"advise {shlex.join(argv)} failed: {result.output[-400:]}")
            print(f"advise {shlex.join(argv)[:100]}")
    longest = {name: max(trails, key=len) for name, trails in reads.items()}
    print(f"\n{len(longest)} of {len(FIELDS)} options read; their longest trails:")
    for name, trail in sorted(longest.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {name:18} {len(trail):2} stays {returns_of(trail)} returns  {' > '.join(trail)}")
    unread = sorted(FIELDS - longest.keys())
    if unread:
        print(f"  not read in these requests: {', '.join(unread)}")
    most_stays = max(len(t) for t in longest.values())
    most_returns = max(returns_of(t) for t in longest.values())
    print(
        json.dumps(
            {
                "most_stays": most_stays,
                "goal_stays": args.goal_stays,
                "most_returns": most_returns,
                "goal_returns": args.goal_returns,
            }
        )
    )


if __name__ == "__main__":
    main()
