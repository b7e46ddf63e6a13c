"""The compliance rule language on small synthetic logs: KEY (PRE, CHECK, POST,
FIRST_CHECK, ATLEAST_ONE_CHECK), BEGIN, END, per-config state, the ruleset's own
initialisation limit, the expression sandbox and rules the engine refuses."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from gpuscale.mlperf.compliance import ViolationKind, check_order, run_violations
from gpuscale.mlperf.expressions import RuleError, expression, program
from gpuscale.mlperf.rules import Rules, _config, keys_of_ruleset, rules_for
from gpuscale.mlperf.runlog import read_run_log
from gpuscale.mlperf.stateful import config_failures, unsupported

from .logbuilder import line, result_log

pytest.importorskip("mlperf_logging")


def violations(text: str, ruleset: str, benchmark: str, division: str = "closed"):
    log = read_run_log(text.encode(), keys_of_ruleset(ruleset))
    return run_violations(
        ruleset=ruleset,
        benchmark=benchmark,
        division=division,
        by_key=log.by_key,
        n_lines=log.mllog_lines,
    )


def _end_tensors(ruleset: str, benchmark: str) -> list[str]:
    """The tensor names the config's END check wants (its literal list)."""
    config = next(c for c in rules_for(ruleset, "closed", benchmark).configs if c.end_checks)
    tree = ast.parse(config.end_checks[0].text, mode="eval")
    lists = [n for n in ast.walk(tree) if isinstance(n, ast.List)]
    return [e.value for e in lists[0].elts]


def test_end_check_of_ruleset_1_1_is_evaluated() -> None:
    """1.1.0 closed ResNet's END block compares the initialised tensors with its list: all
    of them pass, one missing fails with the config named (never evaluated before)."""
    tensors = _end_tensors("1.1.0", "resnet")
    assert len(tensors) > 100

    def log(names: list[str]) -> str:
        init = [line("weights_initialization", None, 999_000, tensor=t) for t in names]
        text = result_log(benchmark="resnet", ruleset="1.1.0")
        kept = [x for x in text.splitlines() if "weights_initialization" not in x]
        return "\n".join(kept + init) + "\n"

    # The builder's own tensor lines replaced: compare with and without one tensor.
    complete = {v.message for v in violations(log(tensors), "1.1.0", "resnet")}
    short = {v.message for v in violations(log(tensors[1:]), "1.1.0", "resnet")}
    assert not any("END" in m for m in complete)
    added = short - complete
    (message,) = added
    assert message.startswith("END check") and "closed_resnet.yaml" in message


def _bert_070(gbs: int, accuracy: float) -> str:
    return "\n".join(
        [
            line("submission_division", "closed", 0),
            line("global_batch_size", gbs, 1),
            line("eval_accuracy", accuracy, 2, epoch_num=1),
        ]
    )


@pytest.mark.parametrize(
    ("gbs", "accuracy", "reached"),
    [(256, 0.715, True), (256, 0.709, False), (16384, 0.709, True), (16384, 0.70, False)],
)
def test_post_state_feeds_the_quality_check(gbs: int, accuracy: float, reached: bool) -> None:
    """0.7.0 closed BERT's target depends on s['global_batch_size'], set by a POST."""
    quality = [
        v
        for v in violations(_bert_070(gbs, accuracy), "0.7.0", "bert")
        if v.kind is ViolationKind.QUALITY_TARGET
    ]
    assert (quality == []) is reached, quality


def _init_log(division_first: bool, init_s: float) -> str:
    division = line("submission_division", "closed", 0)
    body = [line("init_start", None, 1000), line("init_stop", None, 1000 + init_s * 1000)]
    body += [line("run_start", None, 2e6), line("run_stop", None, 3e6, status="success")]
    return "\n".join([division, *body] if division_first else [*body, division])


@pytest.mark.parametrize(
    ("ruleset", "division_first", "init_s", "too_long"),
    [
        ("1.1.0", False, 94, False),  # a fixed 30 min: the division line's place is moot
        ("1.1.0", True, 31 * 60, True),
        ("2.0.0", False, 94, True),  # compile_time_mins is still 0 before the division
        ("2.0.0", True, 94, False),
        ("2.0.0", True, 31 * 60, True),
    ],
)
def test_initialisation_limit_is_the_rulesets_own(
    ruleset: str, division_first: bool, init_s: float, too_long: bool
) -> None:
    log = read_run_log(_init_log(division_first, init_s).encode(), keys_of_ruleset(ruleset))
    found = check_order(log.by_key, log.mllog_lines, rules_for(ruleset, "closed", "bert"))
    assert any("initialisation took" in m for m in found) is too_long, found


def _yaml(tmp_path: Path, text: str) -> str:
    path = tmp_path / "closed_toy.yaml"
    path.write_text(textwrap.dedent(text))
    _config.cache_clear()
    return str(path)


# The toy config's rules whose failures the test reads back, each by its expression.
COUNTED = "v['value'] == s['count']"
ORDER_SEEN = "s['seen'] == ['a', 'b']"
LR_FIRST = "s['lr'] is not None"
TOY = f"""
- BEGIN:
    CODE: >
        s.update({{'count': 0, 'seen': [], 'lr': None}})
- KEY:
    NAME: lr
    REQ: EXACTLY_ONE
    POST: " s['lr'] = v['value'] "
- KEY:
    NAME: step
    REQ: AT_LEAST_ONE
    PRE: " s['count'] += 1 "
    CHECK:
        - " {COUNTED} "
    FIRST_CHECK: " {LR_FIRST} "
    POST: " s['seen'].append(v['metadata']['tag']) "
- KEY:
    NAME: acc
    ATLEAST_ONE_CHECK: " v['value'] >= 0.5 / s['lr'] "
- END:
    CHECK: " {ORDER_SEEN} "
"""


def _by_key(lines: list[str]):
    return read_run_log(
        "\n".join(lines).encode(), frozenset({"lr", "step", "acc", "opt", "other"})
    ).by_key


def test_every_record_kind_on_a_toy_config(tmp_path: Path) -> None:
    config = _config(_yaml(tmp_path, TOY))
    assert config is not None and config.unsupported == ()
    rules = Rules("toy", config.keys, {}, None, ("closed_toy.yaml",), (), (config,))

    def run(lines: list[str]) -> tuple[list[str], dict[str, bool]]:
        failures, quality, _ = config_failures(config, rules, _by_key(lines))
        return failures, quality

    good = [
        line("lr", 2.0, 0),
        line("step", 1, 1, tag="a"),
        line("step", 2, 2, tag="b"),
        line("acc", 0.3, 3),
    ]
    assert run(good) == ([], {"acc": True})
    # FIRST_CHECK: the first step comes before lr set the state.
    failures, _ = run([good[1], good[0], good[2], good[3]])
    assert any(LR_FIRST in f for f in failures)
    # CHECK on the PRE-updated counter; END on what POST collected.
    failures, _ = run([good[0], good[1], line("step", 5, 2, tag="b"), good[3]])
    assert failures == [f"step fails {COUNTED}"]
    failures, _ = run([good[0], good[1], line("step", 2, 2, tag="c"), good[3]])
    (failure,) = failures
    assert failure.startswith("END check") and failure.endswith(f"fails: {ORDER_SEEN}")
    assert "closed_toy.yaml" in failure  # the config whose END it is
    # POST that raises (no tag) fails as the checker's exec does.
    failures, _ = run([good[0], good[1], line("step", 2, 2), good[3]])
    assert any("step POST fails" in f for f in failures)
    # ATLEAST_ONE with state: 0.3 >= 0.5 / 1.0 is false.
    assert run([line("lr", 1.0, 0), *good[1:]])[1] == {"acc": False}


def test_refused_rules_are_named_not_skipped(tmp_path: Path) -> None:
    config = _config(
        _yaml(
            tmp_path,
            """
            - KEY:
                NAME: opt
                REQ: EXACTLY_ONE
                CHECK: " open('/etc/passwd') "
            - KEY:
                NAME: other
                REQ: OPTIONAL
                POST: " import os "
            - END:
                CHECK: " v.__class__ "
            """,
        )
    )
    assert config is not None
    found = unsupported(config, _by_key([line("opt", 1, 0)]))
    assert any("opt CHECK" in m and "open" in m for m in found)
    assert any(m.startswith("closed_toy.yaml") and "END CHECK" in m for m in found)
    assert not any("other POST" in m for m in found)  # optional and absent: never run
    found = unsupported(config, _by_key([line("other", 1, 0)]))
    assert any("other POST" in m for m in found)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os')",
        "open('x')",
        "v.__class__",
        "v['value'].__class__.__bases__",
        "(lambda: 1)()",
        "[x for x in v]",
        "getattr(v, 'x')",
        "s.update({})",
        "ll.__dict__",
    ],
)
def test_sandbox_refuses_what_the_rule_language_lacks(text: str) -> None:
    with pytest.raises(RuleError):
        expression(text)


@pytest.mark.parametrize(
    "code",
    ["import os", "x = 1", "v['value'] = 1", "s['a'].__class__", "del s['a']", "for x in v: pass"],
)
def test_sandbox_refuses_statements_that_do_more_than_update_state(code: str) -> None:
    with pytest.raises(RuleError):
        program(code)


def test_programs_update_state_only() -> None:
    state = {"n": 1, "xs": []}
    program(
        "enqueue_config('x'); s['n'] += 2; s['xs'].append(v['value']);"
        " s['m'] = 240 if v['value'] == 'open' else 30"
    )({"value": "open"}, state)
    assert state == {"n": 3, "xs": ["open"], "m": 240}


def test_every_config_of_every_ruleset_compiles_whole() -> None:
    """Nothing in mlperf-logging's training configs is left unevaluated."""
    from gpuscale.mlperf.rules import _package_dir, known_rulesets

    rulesets = known_rulesets()
    assert "1.1.0" in rulesets and "5.0.0" in rulesets
    refused = []
    for ruleset in rulesets:
        for path in sorted((_package_dir() / f"training_{ruleset}").glob("*.yaml")):
            config = _config(str(path))
            assert config is not None, path
            refused += [f"{ruleset}/{path.name}: {m}" for m in config.unsupported]
            refused += [
                f"{ruleset}/{path.name}: {m}" for r in config.keys.values() for m in r.unsupported
            ]
    assert refused == []
