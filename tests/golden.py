"""Rendered text kept in golden files, so that a better sentence changes a golden file, not
a test.

A test asserts the numbers and fields itself (counts, kinds, names, paths) and hands the
words to :meth:`Golden.check`: ``tests/golden/<view>.json`` holds one view's text (a
command's output, one family of refusals), a case per key. ``pytest --update-golden``
writes the text of every case that differs or is new; review the diff as you would a test.
Without the flag a case that differs fails with both texts, and a case that is missing
fails asking for the flag (nothing is written).
"""

from __future__ import annotations

import difflib
import json
import math
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_FLAG = "--update-golden"


class Golden:
    """The golden files of this test session; ``update``: write what differs."""

    def __init__(self, update: bool) -> None:
        self.update = update

    def check(
        self, view: str, case: str, text: str, *, paths: dict[str, str] | None = None
    ) -> None:
        """Compare ``text`` with case ``case`` of view ``view`` (``paths``: text to write as
        its placeholder first, e.g. ``{str(tmp_path): "<tmp>"}``, so a temporary folder
        does not make every run differ)."""
        for real, placeholder in sorted((paths or {}).items(), key=lambda p: -len(p[0])):
            text = text.replace(real, placeholder)
        path = GOLDEN / f"{view}.json"
        cases: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}
        if self.update:
            if cases.get(case) != text:
                cases[case] = text
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(
                    json.dumps(cases, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
                )
            return
        if case not in cases:
            pytest.fail(
                f"no golden text for {view}: {case}; run pytest {UPDATE_FLAG} and review it"
            )
        if text != cases[case]:
            diff = "\n".join(
                difflib.unified_diff(
                    cases[case].splitlines(), text.splitlines(), "golden", "now", lineterm=""
                )
            )
            pytest.fail(
                f"{view}: {case} differs from its golden text ({UPDATE_FLAG} to accept):\n{diff}"
            )


def differences(golden: object, now: object, where: str = "", rel: float = 1e-9) -> list[str]:
    """Where ``now`` differs from ``golden``: a number beyond ``rel`` (relative), another string,
    another key or length."""
    if isinstance(golden, dict) and isinstance(now, dict):
        if golden.keys() != now.keys():
            return [f"{where}: keys {sorted(golden.keys() ^ now.keys())} differ"]
        return [d for k in golden for d in differences(golden[k], now[k], f"{where}.{k}", rel)]
    if isinstance(golden, list) and isinstance(now, list):
        if len(golden) != len(now):
            return [f"{where}: {len(golden)} items, now {len(now)}"]
        return [
            d
            for i, (g, n) in enumerate(zip(golden, now, strict=True))
            for d in differences(g, n, f"{where}[{i}]", rel)
        ]
    numbers = (int, float)
    if isinstance(golden, numbers) and isinstance(now, numbers):
        if isinstance(golden, bool) or isinstance(now, bool):
            return [] if golden is now else [f"{where}: {golden} -> {now}"]
        close = math.isclose(golden, now, rel_tol=rel, abs_tol=0.0)
        return [] if close else [f"{where}: {golden!r} -> {now!r}"]
    return [] if golden == now else [f"{where}: {golden!r} -> {now!r}"]
