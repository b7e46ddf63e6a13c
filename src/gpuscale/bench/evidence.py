"""How strong one bench row's evidence is: ``strong``, or ``weak`` with the reasons;
``flagged`` where the row is flagged (not trusted: never strong evidence, whatever its
steps), its notes still saying what would be weak about it.

A row is not flagged (``gpuscale.plausibility``) yet may rest on little: a few timed
steps (one slow step moves their mean by 1/steps), a spread short of the noisy flag, or a
busy share not measured: read over a timed phase too short for the clock it is read from
(``plausibility.MIN_BUSY_WINDOW_S``, the rule the busy flag follows too: such a share is
stored as not measured, never as 0, and flags nothing), or not read at all (no
``/proc/stat``). Whether the host was busy is then unknown, which is what makes it weak.

Weak rows stay in the table and the advice; the summary and the advice say they are weak.
Every message that asks for more ``--steps`` (here, in the advice) gives the number of
:func:`steps_needed`: one rule over every check that more steps pass, so the numbers agree
and a run benched with it is not weak for too few steps. Every message that says what
would make weak runs firm says :func:`remedy`: ``--steps`` only for what more steps fix
(few steps timed, a busy share unmeasured over a short timed phase), never fewer than the
runs timed, and a quieter machine for a spread measured over ``NOISY_MIN_STEPS`` or more
(more steps measure a spread, they do not narrow it); a spread over fewer steps is their
few-steps weakness (one slow step, warm-up as likely as noise, sets the p95), more steps.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from gpuscale.plausibility import (
    MIN_BUSY_WINDOW_S,
    NOISY_MIN_STEPS,
    host_measured,
    too_few_for_noise,
)
from gpuscale.plausibility import timed_window_s as _window_s
from gpuscale.quantities import counted, filled, format_ms, joined
from gpuscale.sizes import number_or_none
from gpuscale.tables.bench import BENCH_CONFIG_COLUMNS
from gpuscale.tables.codes import Code

MIN_STEPS = 10  # fewer timed steps: one slow step moves the mean by more than 10%
SPREAD_P95_OVER_P50 = 1.2  # a spread this wide (short of the noisy flag at 1.5x) is weak
# the fewest steps asked for: a third of a slow step's weight; over NOISY_MIN_STEPS, so a
# run benched with any ask has its spread judged (a spread over fewer is its few steps')
FIRM_STEPS = 3 * MIN_STEPS
# the timed phase asked for is this much longer than the busy-share check's: a run benched
# again may time faster steps than the one the number was read from
WINDOW_HEADROOM = 1.5
# What makes a weak run firm, by what its notes say (:func:`remedy`)
STEPS_FIX = "steps"
QUIETER_FIX = "quieter"
UNREAD_FIX = "unread"
FLAGGED = "flagged"  # the grade of a flagged ok row: not trusted, so neither strong nor weak
_FIXES = {
    STEPS_FIX: "",  # said with the number of steps
    QUIETER_FIX: "on a quieter machine, nothing else running (more steps do not narrow a spread)",
    UNREAD_FIX: "on a host whose /proc/stat can be read (Linux)",
}


def _finite(value: object) -> bool:
    number = number_or_none(value)
    return number is not None and math.isfinite(number)


def timed_window_s(row: Mapping[str, object]) -> float:
    """Seconds a bench row's host shares were read over (NaN when the step times are
    missing): ``plausibility.timed_window_s`` of its step times and ``steps``."""
    return _window_s(row, row.get("steps"))


def _configuration(row: Mapping[str, object]) -> tuple[str, ...]:
    """What a bench run again with other ``--steps`` keeps: its configuration less steps."""
    return tuple(str(row.get(c)) for c in BENCH_CONFIG_COLUMNS if c != "steps")


def _tens(steps: float) -> int:
    return 10 * math.ceil(steps / 10)


def _runs(row: Mapping[str, object]) -> int:
    """The runs a row stands for: its ``--repeat`` (each timed its steps), else 1."""
    repeat = row.get("repeat")
    return max(1, int(repeat)) if isinstance(repeat, int | float) and _finite(repeat) else 1


def steps_asked(rows: Iterable[Mapping[str, object]]) -> tuple[int, str]:
    """The ``--steps`` a model's runs (``rows``: its bench rows, or table rows) need for
    every check that more steps pass, and its basis, said: at least :data:`FIRM_STEPS`
    (the few-steps check, ``MIN_STEPS``; a noise scale's 10 steps,
    ``advice.model.priors.FEW_NOISE_STEPS``); a timed phase of ``MIN_BUSY_WINDOW_S`` (the
    busy-share check) x ``WINDOW_HEADROOM`` at the time per step of each configuration
    (the runs of one configuration at one device count, whatever their steps), read from
    all the steps its runs timed together (their timed phases over their steps: a short
    run's first steps weigh by their number, never as a whole run's), the slowest need of
    them; in tens; never fewer than any of the runs timed (a run weak for its steps needs
    more than it timed). One run more of a configuration moves the number by what its
    steps add to that configuration's mean, not by its own extreme."""
    rows = list(rows)
    found = (FIRM_STEPS, f"at least {FIRM_STEPS}: one slow step moves a mean by 1/{FIRM_STEPS}")
    # per configuration: its timed phases' seconds, steps and runs, and its first row
    pooled: dict[tuple[str, ...], tuple[float, int, int, Mapping[str, object]]] = {}
    for row in rows:
        ran, window = row.get("steps"), timed_window_s(row)
        if not (_finite(ran) and ran > 0):
            continue
        if _tens(ran) > found[0]:
            found = (_tens(ran), f"never fewer than the {int(ran)} steps a run already timed")
        if _finite(window) and window > 0:
            times = _runs(row)  # --repeat R: R runs ran its steps, the median's timing recorded
            seconds, steps, runs, first = pooled.get(_configuration(row), (0.0, 0, 0, row))
            pooled[_configuration(row)] = (
                seconds + window * times,
                steps + int(ran) * times,
                runs + times,
                first,
            )
    for window, steps, runs, row in pooled.values():
        per = window / steps
        asked = _tens(WINDOW_HEADROOM * MIN_BUSY_WINDOW_S / per)
        if asked > found[0]:
            where = f"{row.get('model')} at N = {row.get('accelerators')}"
            step_ms, need_ms = per * 1e3, MIN_BUSY_WINDOW_S * 1e3  # one unit, the step's
            found = (
                asked,
                f"a timed phase of {format_ms(WINDOW_HEADROOM * need_ms, like=step_ms)}, the "
                f"{format_ms(need_ms, like=step_ms)} a busy share needs and half again, at "
                f"{format_ms(step_ms)} of timed phase a step (the synchronised, no-sync "
                f"and, at N = 1, bare steps: each is timed every step), as {where} timed it "
                f"over {counted(steps, 'step')} in {counted(runs, 'run')}",
            )
    return found


def steps_needed(rows: Iterable[Mapping[str, object]]) -> int:
    """The number of :func:`steps_asked`."""
    return steps_asked(rows)[0]


class Weakness(Code):
    """Why an ``ok`` row is weak evidence, as data (the ``evidence_kinds`` column); its
    words are the ``evidence_notes``, its kind in short :data:`LABEL`."""

    FEW_STEPS = "few_steps"  # under MIN_STEPS timed
    SPREAD = "spread"  # p95 over SPREAD_P95_OVER_P50 x the median, NOISY_MIN_STEPS+ timed
    # the same over fewer steps (plausibility.NOISY_MIN_STEPS): one slow step may set it
    FEW_STEPS_SPREAD = "few_steps_spread"
    SHORT_PHASE = "short_phase"  # busy share read over a timed phase too short for it
    CPU_UNREAD = "cpu_unread"  # the host's CPU time could not be read


# Each weakness in short, as the summaries say it (two read as one: the share is unknown).
LABEL = {
    Weakness.FEW_STEPS: "few steps timed",
    Weakness.SPREAD: "steps spread",
    Weakness.FEW_STEPS_SPREAD: "steps spread over few steps",
    Weakness.SHORT_PHASE: "busy share not measured",
    Weakness.CPU_UNREAD: "busy share not measured",
}


def weaknesses(
    row: Mapping[str, object], needed: int | None = None, basis: str | None = None
) -> list[tuple[Weakness, str]]:
    """Why an ``ok`` row is weak evidence, each kind with its reason in words (empty:
    strong); ``needed`` and ``basis``: the steps its model needs and why
    (:func:`steps_asked` of its runs; of this row alone where not given), the basis said
    once, with the first ask."""
    reasons: list[tuple[Weakness, str]] = []
    steps = row.get("steps")
    if needed is None:
        needed, basis = steps_asked([row])
    said = iter([filled(" ({})", basis)])

    def ask() -> str:  # the basis with the first ask only
        return f"bench with --steps {needed} or more{next(said, '')}"

    if _finite(steps) and steps < MIN_STEPS:
        runs = _runs(row)  # --repeat R: R runs each timed ``steps``
        each = f" in each of {runs} runs" if runs > 1 else ""
        why = (
            f"only {counted(int(steps), 'step')} timed{each} (under {MIN_STEPS}: one slow step "
            f"moves the mean by 1/{int(steps)}); {ask()}"
        )
        reasons.append((Weakness.FEW_STEPS, why))
    p50, p95 = row.get("step_ms_p50"), row.get("step_ms_p95")
    if _finite(p50) and _finite(p95) and p50 > 0 and p95 / p50 > SPREAD_P95_OVER_P50:
        if too_few_for_noise(steps):  # its p95 may be one slow step: more steps tell
            why = (
                f"steps spread over few steps: p95 is {p95 / p50:.2f}x the median over "
                f"{counted(int(steps), 'timed step')} (under {NOISY_MIN_STEPS}, one slow step "
                f"sets the p95: warm-up as likely as a busy machine); {ask()}"
            )
            reasons.append((Weakness.FEW_STEPS_SPREAD, why))
        else:
            why = f"steps spread: p95 is {p95 / p50:.2f}x the median; bench {_FIXES[QUIETER_FIX]}"
            reasons.append((Weakness.SPREAD, why))
    window = timed_window_s(row)
    if _finite(window) and not host_measured(window):
        why = (
            f"busy share not measured: the timed phase lasted {format_ms(window * 1e3)}, "
            f"{counted(max(1, round(window * 100)), 'clock tick')} a core (needs "
            f"{format_ms(MIN_BUSY_WINDOW_S * 1e3, like=window * 1e3)}: {ask()})"
        )
        reasons.append((Weakness.SHORT_PHASE, why))
    elif not _finite(row.get("other_load_share")):
        why = "busy share not measured: the host's CPU time could not be read"
        reasons.append((Weakness.CPU_UNREAD, why))
    return reasons


def grade(rows: list[Mapping[str, object]]) -> tuple[list[str], list[str], list[tuple[str, ...]]]:
    """(``evidence``, ``evidence_notes``, ``evidence_kinds``) per row: ``strong``/``weak``
    for ``ok`` rows, :data:`FLAGGED` for flagged ones (not trusted: never strong), ``""``
    for failed ones; the reasons a row is weak ("; "-separated, a flagged row's too), each
    asking for the steps its model's ``ok`` runs need, with why (:func:`steps_asked`: one
    number a model); and their :class:`Weakness` kinds."""
    grades, notes, kinds = [], [], []
    ok = [row for row in rows if row.get("status") == "ok"]
    asked = {
        m: steps_asked(r for r in ok if r.get("model") == m) for m in {r.get("model") for r in ok}
    }
    for row in rows:
        found: list[tuple[Weakness, str]] = []
        evidence = ""  # a failed run's
        if row.get("status") == "ok":
            found = weaknesses(row, *asked[row.get("model")])
            evidence = "weak" if found else "strong"
        if evidence and row.get("flagged"):
            evidence = FLAGGED
        grades.append(evidence)
        notes.append("; ".join(why for _, why in found))
        kinds.append(tuple(kind.value for kind, _ in found))
    return grades, notes, kinds


def labels(kinds: Iterable[Iterable[str]]) -> list[str]:
    """Each weakness of rows' ``evidence_kinds`` once, in short (:data:`LABEL`), in order."""
    return list(dict.fromkeys(LABEL[Weakness(k)] for row in kinds for k in row))


def kinds_counted(kinds: Iterable[Iterable[str]]) -> str:
    """Each kind of weakness in weak runs' ``evidence_kinds`` once, with how many runs it
    holds for: ``busy share not measured (22 runs) and steps spread (3 runs)`` (a run may
    hold two kinds)."""
    counts: dict[str, int] = dict.fromkeys(dict.fromkeys(LABEL.values()), 0)
    for row in kinds:
        for label in dict.fromkeys(LABEL[Weakness(k)] for k in row):
            counts[label] += 1
    return joined(f"{label} ({counted(n, 'run')})" for label, n in counts.items() if n)


# What each weakness's fix is: few steps, a spread over few steps and a short timed phase,
# more steps; a spread, a quieter machine; a host's CPU time not read, a host where it can be.
_ANSWERS = {
    Weakness.FEW_STEPS: STEPS_FIX,
    Weakness.FEW_STEPS_SPREAD: STEPS_FIX,
    Weakness.SHORT_PHASE: STEPS_FIX,
    Weakness.SPREAD: QUIETER_FIX,
    Weakness.CPU_UNREAD: UNREAD_FIX,
}


def fixes(kinds: Iterable[Iterable[str]]) -> tuple[str, ...]:
    """What would make runs with these ``evidence_kinds`` firm (:data:`STEPS_FIX`,
    :data:`QUIETER_FIX`, :data:`UNREAD_FIX`), in that order; empty for strong runs."""
    found = {_ANSWERS[Weakness(k)] for row in kinds for k in row}
    return tuple(fix for fix in _FIXES if fix in found)


def remedy(found: Iterable[str], needed: int, basis: str = "") -> str:
    """``bench with --steps 360 or more (basis) and on a quieter machine (...)``: what to
    bench for the fixes ``found`` (:func:`fixes`), ``needed`` the steps (:func:`steps_asked`,
    said with its ``basis``) asked only where more steps fix a weakness; ``""`` where
    nothing is to fix."""
    return filled("bench {}", joined(ways(found, needed, basis)))


def ways(found: Iterable[str], needed: int, basis: str = "") -> list[str]:
    """Each fix of ``found`` in words: ``with --steps 360 or more (basis)``, ``on a
    quieter machine, ...`` (what :func:`remedy` joins)."""
    steps = f"with --steps {needed} or more{filled(' ({})', basis)}"
    return [{**_FIXES, STEPS_FIX: steps}[fix] for fix in found]
