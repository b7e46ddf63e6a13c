"""One ``--steps N`` a model, whichever command asks: for each bench file under tests/, the
``--steps`` numbers ``advise --bench F --model M`` asks for (its ``-f json`` document and
its ``--explain`` lines) are the one number ``analyze --bench F -f json`` asks of ``M``'s
runs (``bench.evidence.steps_asked`` of every ``ok`` run of the model in the file, short
runs a longer one outlasts too).

A file whose plain advice is refused (every N = 1 run flagged) is advised with
--allow-flagged: the number asked does not depend on what the advice trusts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuscale.advice.api import advise_loaded
from gpuscale.advice.explain.document import advice_view
from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis.bench_sentences import bench_document
from gpuscale.bench.results import load_bench

TESTS = Path(__file__).parent.parent
FILES = sorted(TESTS.glob("**/*.jsonl"))
STEPS = re.compile(r"--steps (\d+)")


def _asked(text: str) -> set[int]:
    return {int(n) for n in STEPS.findall(text)}


def _analyzed(path: Path) -> dict[str, set[int]]:
    """Each model's ``--steps`` in ``analyze --bench -f json`` (its runs' notes)."""
    found: dict[str, set[int]] = {}
    for run in bench_document(load_bench(path).table)["runs"]:
        model = str(run.get("model"))
        found[model] = found.get(model, set()) | _asked(str(run.get("evidence_notes") or ""))
    return found


def _advised(path: Path, model: str) -> tuple[set[int], set[int]] | None:
    """The ``--steps`` of the advice on ``model`` (-f json, --explain); None: refused."""
    for allow in (False, True):
        request = AdviceRequest(bench=str(path), model=model, allow_flagged=allow)
        try:
            advice = advise_loaded(request)
        except ValueError:
            continue
        document = advice_view(advice, terminal=False, document=True).document
        explained = advice_view(advice, terminal=True, explain=True)
        lines = "\n".join((str(explained.title), *explained.said))
        return _asked(json.dumps(document)), _asked(lines)
    return None


CASES = [
    pytest.param(path, model, id=f"{path.relative_to(TESTS)}:{model}")
    for path in FILES
    for model in sorted(_analyzed(path))
]


def test_every_bench_file_is_checked() -> None:
    assert len(FILES) >= 7 and any("two_sweeps" in p.name for p in FILES)


@pytest.mark.parametrize(("path", "model"), CASES)
def test_advise_asks_the_steps_analyze_asks(path: Path, model: str) -> None:
    analyzed = _analyzed(path)[model]
    assert len(analyzed) <= 1  # one number a model
    advised = _advised(path, model)
    if advised is None:
        pytest.skip(f"no advice on {model} in {path.name}")
    document, explained = advised
    assert document == analyzed
    assert explained <= analyzed
    # where the advice asks for more steps at all, its --explain asks for that number
    assert bool(explained) == bool(document)


def test_two_sweeps_asks_510_steps() -> None:
    """The file's 2-step and 30-step runs at N = 1 pooled: 1.5 s of timed phase at 2.99 ms
    a step, in tens (the 30-step run alone, 3.03 ms a step, would ask 500)."""
    path = TESTS / "advice" / "cpu_mlp_two_sweeps_gloo.jsonl"
    assert _analyzed(path) == {"mlp-0.2m": {510}}
    assert _advised(path, "mlp-0.2m") == ({510}, {510})
