"""What a bench sweep says as it goes: each run done, and what an interrupted sweep kept."""

from __future__ import annotations

from pathlib import Path

from gpuscale.quantities import counted, number
from gpuscale.tables.commands import quoted_path


def done_line(record: dict) -> str:
    """``done mlp-1m x2: ok, 35.8 ms/step, 447.1 samples/s`` for a row the sweep wrote."""
    config, timing = record.get("config") or {}, record.get("timing") or {}
    text = f"done {config.get('model')} x{config.get('accelerators')}: {record.get('status')}"
    if timing.get("step_ms_mean"):
        step, rate = number(timing["step_ms_mean"]), number(timing["samples_per_s"], 4)
        text += f", {step} ms/step, {rate} samples/s"
    return text


def kept_note(rows: int, out_file: Path) -> str:
    """What follows "interrupted" when a sweep is stopped: the ``rows`` it appended to
    ``out_file`` are kept, and the same command with ``--resume`` measures only the runs
    not yet measured well there."""
    kept = f"{counted(rows, 'row')} of this sweep kept in {quoted_path(out_file)}"
    return f": {kept}; run the same command with --resume to measure only what is missing"
