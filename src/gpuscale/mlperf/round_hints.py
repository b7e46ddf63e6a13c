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

from gpuscale.mlperf.rules import benchmarks_of, known_rulesets, ruleset_of
from gpuscale.quantities import agreeing, counted, joined
from gpuscale.tables.commands import quoted_path
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


def result_starts(runs: Iterable[Mapping[str, object]]) -> list[float]:
    """Each result's median run start (ms), of the runs that logged one."""
    starts: dict[tuple[object, object, object], list[float]] = {}
    for run in runs:
        t = run.get("run_start_ms")
        if isinstance(t, int | float) and t == t and t > 0:
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


GIVEN = "the round given"  # how a round was named: by the caller (else "its name")


def other_round(
    round_name: str, runs: Iterable[Mapping[str, object]], how: str, where: str
) -> str | None:
    """Why the logs read as ``round_name`` (named by ``how``: ``GIVEN``, or "its
    name") are not that round's, naming ``where`` (the path, quoted) and the rounds they fit;
    None when nothing in them contradicts it. ``runs``: rows of the runs table (``org``,
    ``system_id``, ``benchmark``, ``log_benchmark``, ``run_start_ms``)."""
    runs = list(runs)
    known = _rounds()
    some_round = set().union(*(_allowed(r) for r in known))
    logged = {str(r["log_benchmark"]) for r in runs if r.get("log_benchmark")} & some_round
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
    last = max(starts, default=None)
    fits = [
        r
        for r in known
        if logged <= _allowed(r)
        and (last is None or (_end_ms(r) or float("inf")) > last)
        and r != round_name
    ]
    fits.sort(key=round_key)
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
