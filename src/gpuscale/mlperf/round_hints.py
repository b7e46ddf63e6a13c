"""What a round's logs say of the round they belong to, against the round they are read as.

MLPerf Training logs record no round or ruleset version: their ``:::MLLOG`` lines hold the
submission keys (``submission_benchmark``, ``_org``, ``_division``, ``_status``,
``_platform``; ``_poc_*`` in some), the hyperparameters and the events, in every round
v1.1-v5.0. Two things in them still bound the round:

* the **dates**: every line carries ``time_ms``, and a run cannot be part of a round
  whose results were published before it ran. A result (its runs' median start, so that
  one log with a wrong clock moves nothing) that started after the round's publication
  date (``PUBLISHED``, MLCommons' announcements) is not that round's;
* the **benchmarks**: ``submission_benchmark`` names one of the benchmarks the round's
  rules allow (``mlperf_logging.benchmark_meta``); a name some round allows but this one
  does not (``llama2_70b_lora`` read as v1.1, ``ssd`` read as v5.0, where RetinaNet is
  ``retinanet``) says another round. A name no round allows says nothing of the round.

A path read as a round its logs contradict (by the round given, ``--round``, or by its
name) is scored under rules that are not its own: :func:`other_round` says so, with the
rounds its logs fit. It is reported, not refused: scoring one's own logs under a chosen
round's rules is a use (the warning then says what was done); nothing is renamed silently.
What the logs cannot contradict (an older round's logs read as a later round that still
has their benchmarks) stays unsaid: they hold no hint of it.
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gpuscale.mlperf.rules import benchmarks_of, known_rulesets, ruleset_of
from gpuscale.quantities import agreeing, counted, joined
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.refusals import ref
from gpuscale.tables.workloads import PUBLISHED, round_key


def _end_ms(round_name: str) -> float | None:
    """The end of the round's publication day, in ms since the epoch (None: not listed)."""
    day = PUBLISHED.get(round_name)
    if day is None:
        return None
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tzinfo=dt.timezone.utc)
    return end.timestamp() * 1000.0


def _rounds() -> list[str]:
    """The rounds whose rules mlperf-logging ships, oldest first (``v4.1``)."""
    return [f"v{r.rsplit('.', 1)[0]}" for r in known_rulesets()]


def _allowed(round_name: str) -> set[str]:
    return set(benchmarks_of(ruleset_of(round_name)))


# MLPerf began in 2018 (its first training results, v0.5, were published that December):
# a run logged as starting earlier (1970: a clock never set) is dated by no real clock.
MLPERF_BEGAN_MS = dt.datetime(2018, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1000.0


def result_starts(runs: Iterable[Mapping[str, object]]) -> list[float]:
    """Each result's median run start (ms), of the runs that logged one since MLPerf
    began (``MLPERF_BEGAN_MS``)."""
    starts: dict[tuple[object, object, object], list[float]] = {}
    for run in runs:
        t = run.get("run_start_ms")
        if isinstance(t, int | float) and t == t and t >= MLPERF_BEGAN_MS:
            key = (run.get("org"), run.get("system_id"), run.get("benchmark"))
            starts.setdefault(key, []).append(float(t))
    return [statistics.median(v) for v in starts.values()]


def _day(ms: float) -> str:
    return dt.datetime.fromtimestamp(ms / 1000.0, tz=dt.timezone.utc).date().isoformat()


def _rounds_said(rounds: list[str]) -> str:
    """``v4.1``; ``v4.0 or v4.1``; ``one of v3.1 to v5.0`` (consecutive rounds)."""
    known = _rounds()
    if len(rounds) > 2 and all(r in known for r in rounds):
        at = [known.index(r) for r in rounds]
        if at == list(range(at[0], at[0] + len(at))):
            return f"one of {rounds[0]} to {rounds[-1]}"
    return joined(rounds, "or")


def _named(runs: Iterable[Mapping[str, object]]) -> set[str]:
    """The benchmarks the runs' logs name (``submission_benchmark``) that some round's
    rules have: a name no round has says nothing of the round."""
    some_round = set().union(*(_allowed(r) for r in _rounds()))
    return {str(r["log_benchmark"]) for r in runs if r.get("log_benchmark")} & some_round


def _fitting(named: set[str], last: float | None) -> list[str]:
    """The rounds, oldest first, whose rules have every benchmark ``named`` and that were
    not published before ``last`` (the latest result's start, ms; None: no date)."""
    fits = [
        r
        for r in _rounds()
        if named <= _allowed(r) and (last is None or (_end_ms(r) or float("inf")) > last)
    ]
    return sorted(fits, key=round_key)


GIVEN = "the round given"  # how a round was named: by the caller (else "its name")


def other_round(
    round_name: str, runs: Iterable[Mapping[str, object]], how: str, where: str
) -> str | None:
    """Why the logs read as ``round_name`` (named by ``how``: ``GIVEN``, or "its
    name") are not that round's, naming ``where`` (the path, quoted) and the rounds they fit;
    None when nothing in them contradicts it. ``runs``: rows of the runs table (``org``,
    ``system_id``, ``benchmark``, ``log_benchmark``, ``run_start_ms``)."""
    runs = list(runs)
    logged = _named(runs)
    starts = result_starts(runs)
    reasons = []
    allowed = _allowed(round_name)
    foreign = sorted(logged - allowed) if allowed else []
    if foreign:
        reasons.append(
            f"they name {agreeing(len(foreign), 'a benchmark', 'benchmarks')} "
            f"{round_name}'s rules do not have ({joined(foreign)})"
        )
    end = _end_ms(round_name)
    late = [t for t in starts if end is not None and t >= end]
    if late:
        share = f"{len(late):,} of its {counted(len(starts), 'result')}"
        if len(late) == len(starts):
            share = f"all {counted(len(late), 'result')}"
        if len(starts) == 1:
            share = "its one result"
        reasons.append(
            f"{share} ran after {round_name} was published "
            f"({PUBLISHED[round_name].isoformat()}), the latest on {_day(max(late))}"
        )
    if not reasons:
        return None
    fits = [r for r in _fitting(logged, max(starts, default=None)) if r != round_name]
    said = "its logs fit no one round (its benchmarks and dates are of different rounds)"
    if fits:
        said = f"its logs say {_rounds_said(fits)}"
    if how == GIVEN:
        give = "give the round its logs say"
        if len(fits) == 1:
            give += f" (--round {fits[0]})"
    else:  # a path named by a round: --round beside it adds a round (bundled or fetched)
        give = "name its folder by the round its logs say"
        if len(fits) == 1:
            give += f" (training_results_{fits[0]})"
    return (
        f"{quoted_path(where)}: read as {round_name} ({how}), but {said}: "
        f"{'; '.join(reasons)}. Its scores are {round_name}'s rules applied to another "
        f"round's logs; {give}"
    )


@dataclass(frozen=True, slots=True)
class LogsRound:
    """What a path's logs say of their round, where its name says none (the evidence a
    refusal gives; :func:`logs_round_said` says it). ``logs``: the result logs read;
    ``results``: those with a logged ``run_start`` (one per system and benchmark, its runs'
    median start); ``first_day``/``last_day``: the earliest and latest of those starts
    (UTC, ISO); ``benchmarks``: the ``submission_benchmark`` names some round's rules have;
    ``fits``: the rounds, oldest first, whose rules have every one of them and that were not
    published before the latest start; ``round``: the round the logs point to, the first
    of ``fits`` where the logs are dated (a result cannot be part of a round published
    before it ran, and the first round after it is the one it was run for: so in every
    bundled round, ``tests/mlperf/test_logs_round.py``), the one fit where they are not;
    None where they point to none (no fit, or several and no date). A pointer, never the
    round read: the caller still names it."""

    logs: int
    results: int
    first_day: str | None
    last_day: str | None
    benchmarks: tuple[str, ...]
    fits: tuple[str, ...]
    round: str | None


def logs_round(runs: Iterable[Mapping[str, object]]) -> LogsRound:
    """The :class:`LogsRound` of runs (rows as :func:`other_round` takes them), of every
    log read, dated or not."""
    runs = list(runs)
    named = _named(runs)
    starts = result_starts(runs)
    fits = _fitting(named, max(starts, default=None))
    pointed = fits[0] if fits and (starts or len(fits) == 1) else None
    if not starts and not named:  # nothing in the logs bounds the round
        fits, pointed = [], None
    return LogsRound(
        logs=len(runs),
        results=len(starts),
        first_day=_day(min(starts)) if starts else None,
        last_day=_day(max(starts)) if starts else None,
        benchmarks=tuple(sorted(named)),
        fits=tuple(fits),
        round=pointed,
    )


def _published_said(round_name: str) -> str:
    day = PUBLISHED.get(round_name)
    return f"published {day.isoformat()}" if day else "not yet published"


def logs_round_said(found: LogsRound, example: str) -> str:
    """``found`` in words, to follow "cannot tell the round from the name": the round its
    logs point to and why, with the option that gives it (``; its logs say v4.1: ...; give
    it: --round v4.1``); where they point to none, why not, and ``example`` as the round to
    give (`` nor from its logs: ...; give it, e.g. --round v5.0``)."""
    n = len(found.benchmarks)
    named = f"{agreeing(n, 'its benchmark', 'its benchmarks')} ({joined(found.benchmarks)})"
    them = agreeing(found.results, "it", "them")
    ran = f"its {counted(found.results, 'result')} ran on {found.first_day}"
    if found.first_day != found.last_day:
        ran = (
            f"its {counted(found.results, 'result')} ran from {found.first_day} to {found.last_day}"
        )
    if found.round:
        after = f"{found.round} ({_published_said(found.round)}) is the first round after {them}"
        if found.results and found.benchmarks:
            why = f"{ran}, and {after} whose rules have {named}"
        elif found.results:
            why = f"{ran}, and {after}"
        else:
            why = f"they hold no run_start date, and only {found.round}'s rules have {named}"
        return f"; its logs say {found.round}: {why}; give it: {ref('round_name', found.round)}"
    if not found.logs:
        why = "it holds no result log at <org>/results/<system>/<benchmark>/result_*.txt"
    elif not found.results and not found.benchmarks:
        why = "they hold no run_start date and name no benchmark of any round's rules"
    elif not found.results and not found.fits:
        why = f"they hold no run_start date, and no one round's rules have {named}"
    elif not found.results:  # several rounds fit, undated
        rules = f"the rules of {_rounds_said(list(found.fits))}"
        why = f"they hold no run_start date, and {named} {agreeing(n, 'is', 'are')} in {rules}"
    elif found.benchmarks:
        why = f"{ran}, and no round published after {them} has {named} in its rules"
    else:
        why = f"{ran}, after every round with rules gpuscale knows was published"
    return f" nor from its logs: {why}; give it, e.g. {ref('round_name', example)}"
