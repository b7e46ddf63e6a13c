"""The advice as ``gpuscale advise`` shows it: the short answer (``explain.answer``)
wrapped at the output's width, and the predictions' table: by default the deciding
columns under that answer, with ``--explain`` every shown column under the whole
explanation, as CSV every column, as JSON the whole document (``explain.document``)."""

from __future__ import annotations

import re
from textwrap import wrap

from gpuscale.advice.explain.answer import lines
from gpuscale.advice.explain.document import advice_document
from gpuscale.advice.explain.phrasebook import TERMS, strategy_words
from gpuscale.advice.explain.view import AdviceView
from gpuscale.quantities import counted, filled, format_count
from gpuscale.tables.views import TableView

# The short answer's lines wrap at this many columns whatever the terminal's.
LINE_COLUMNS = 100
# The terminal's columns, the deciding overhead's after the step.
LEADING = ("accelerators", "batch_per_device", "step_ms")
TRAILING = ("speedup", "speedup_low", "speedup_high", "efficiency", "time_to_train_min")
# What a terminal narrower than the table drops first.
TERM_COLUMNS = tuple(dict.fromkeys(row["column"] for row in TERMS.values()))
DROP_ORDER = ("speedup_high", "speedup_low", *TERM_COLUMNS, "batch_per_device")
# Three digits where the interval's ends differ, the efficiency as a share.
FORMATS = {"speedup": ".3g", "speedup_low": ".3g", "speedup_high": ".3g", "efficiency": ".0%"}
# Whether a count's devices hold the model, as a terminal's ``fits`` column says it (a
# flag elsewhere is said only where set: here "no" is the news).
FITS_SAID = {True: "yes", False: "no"}
# The prediction columns a terminal shows (JSON and CSV carry them all).
ADVICE_SHOWN = (
    *("accelerators", "batch_per_device", "accum", "global_batch", "step_ms", "compute_ms"),
    *("exposed_comm_ms", "samples_per_s", "time_to_train_min", "speedup", "speedup_low"),
    *("speedup_high", "efficiency", "throughput_efficiency", "convergence_factor"),
    *("accelerator_hours", "cost", "energy_kwh"),
)


def columns(advice: AdviceView) -> tuple[str, ...]:
    """The table's deciding columns: the count and batch (its accumulation where a row has
    one), the step and its deciding overhead, the speedup with its interval, the efficiency
    and the time to train (cost and energy: the decision's line; every column: -f csv), and
    whether the devices hold the model where a row's do not."""
    term = TERMS.get(advice.decision.limit.dominant_term, {}).get("column")
    frame = advice.predictions
    # the accumulation where used; whether the devices hold the model where some do not
    shown = {"accum": (frame["accum"] > 1).any(), "fits": not frame["fits"].all(), None: False}
    wanted = (*LEADING[:2], "accum", LEADING[2], term, *TRAILING, "fits")
    return tuple(column for column in wanted if shown.get(column, True))


def more(advice: AdviceView) -> str:
    """Where the rest is, said under the table."""
    caveats = filled("{}, ", advice.caveats and counted(len(advice.caveats), "caveat"))
    return f"More: --explain ({caveats}every assumption with its source); -f json (every number)."


def advice_view(
    result: AdviceView, *, terminal: bool, document: bool = False, explain: bool = False
) -> TableView:
    """The predictions as a terminal shows them: by default the short answer
    (``explain.answer``: the deciding columns, four lines), with ``explain`` every shown
    column (``ADVICE_SHOWN``) and the whole explanation; or (``terminal`` False: CSV)
    every column with what qualifies the numbers as notes; ``document``: with the whole
    answer for ``-f json`` (:func:`advice_document`)."""
    if document:
        return TableView(result.predictions, (), document=advice_document(result))
    cal = result.calibration
    params = format_count(cal.model.spec.params)
    name = cal.model.name
    named = name if params in name else f"{name} ({params} parameters)"
    strategy = strategy_words(cal.run.strategy)["name"]
    title = f"predicted training of {named} with {strategy} on {cal.machine.network_name}"
    if not terminal:
        every = list(result.predictions.columns)
        return TableView(result.predictions, every, title, notes=tuple(result.caveats))
    if not explain:
        frame = result.predictions
        return TableView(
            frame.assign(fits=frame["fits"].map(FITS_SAID)),
            columns(result),
            title,
            drop_order=DROP_ORDER,
            formats=FORMATS,
            said=(more(result),),
        )
    said = tuple(f"- {line}" for line in result.explanation)  # the equilibrium's last
    return TableView(result.predictions, ADVICE_SHOWN, title, said=said)


def shown(advice: AdviceView, columns: int = LINE_COLUMNS) -> list[str]:
    """``lines`` as a terminal shows them: wrapped at ``columns`` (the output's width, at
    most ``LINE_COLUMNS``), continued indented, a command broken only between its words
    (a path with a space or a hyphen pastes whole; one longer than the line runs past it)."""
    width = min(LINE_COLUMNS, columns)
    return [
        w.translate(_FREE)
        for line in lines(advice)
        for w in wrap(_kept_whole(line), width, subsequent_indent="  ", break_long_words=False)
    ]


# a quoted word's spaces and hyphens, held while a line is wrapped, then given back
_HOLD = str.maketrans({" ": "\x00", "-": "\x01"})
_FREE = str.maketrans({"\x00": " ", "\x01": "-"})


def _kept_whole(line: str) -> str:
    """``line`` with the spaces of each quoted word and every hyphen inside a backticked
    command held (``_HOLD``), so that wrapping breaks a command only between its words
    (never inside a path such as ``/tmp/ci-clone/results.jsonl`` or an option)."""

    def held(command: re.Match[str]) -> str:
        quoted = re.sub(r"'[^']*'", lambda word: word[0].translate(_HOLD), command[0])
        return quoted.replace("-", "\x01")

    return re.sub(r"`[^`]*`", held, line)
