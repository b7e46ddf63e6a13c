"""What the search hands back: the predictions, the one decision read off them and what
qualifies it, as data (:class:`Advice`); its words are rendered when read, by
``advice/explain``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.inputs import AdviceInputs
from gpuscale.advice.types import Decision, Disagreement


@dataclass(frozen=True)
class Advice:
    """The predictions, the one :class:`Decision` read off them and what qualifies it, as
    data; the words (``decision``'s warnings and what to measure first, ``caveats``,
    ``explanation``, ``str``) are rendered from them when read
    (``advice/explain/caveats.py``), never stored by the search."""

    # one row per device count (see ``predictions``), its flags as data (``FLAGGED``):
    # ``predictions`` says them
    table: pd.DataFrame
    decided: Decision  # as the search decided it (``decision``: with its words)
    efficient: int | None  # largest count with efficiency >= target
    cheapest: int | None
    equilibrium: dict[str, int | None]
    break_even_ms_per_mb: float | None  # step compute per MB of gradients
    break_even_params: float | None
    target_params: float | None
    inputs: AdviceInputs | None = None
    # strong scaling decided: the same counts keeping the per-device batch (weak), whose
    # gain rests on the samples a larger global batch needs
    weak_table: pd.DataFrame | None = None  # ``alternative``, its flags as data
    # counts whose measured runs fall outside the predicted interval: their rows rest on
    # the measurement (``decision.applied``), said first
    disagreements: tuple[Disagreement, ...] = ()
    # (count, predicted minutes, the fastest MLPerf system's floor, that system) of each
    # count predicted faster than MLPerf allows: an input that cannot be true
    below_mlperf: tuple[tuple[int, float, float, str], ...] = ()
    # what qualifies the headline: the options the times rest on that were never given
    # ("samples", "batch", "link"), the steps of a noise scale measured over too few,
    # another model than the largest advised on (said first), which benched model was
    # advised on (said after the decision)
    defaults: tuple[str, ...] = ()
    # the input pipeline: the samples/s the largest count predicted consumes, and that
    # count (``assumptions`` says it in the input pipeline's term)
    input_rate: tuple[float, int] | None = None
    noise_steps: int | None = None
    model_note: str = ""
    chosen: str = ""

    def __str__(self) -> str:
        """The advice as ``gpuscale advise`` says it (``print(advice)``; the fields, and
        every number, are the dataclass's: ``repr``)."""
        return "\n".join(f"- {line}" for line in self.explanation)

    @cached_property
    def predictions(self) -> pd.DataFrame:
        """The predictions table (``tables.advice``): ``table`` with its flags said."""
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import flagged

        return flagged(self.table)

    @cached_property
    def alternative(self) -> pd.DataFrame | None:
        """The weak-scaling alternative (``weak_table``) with its flags said."""
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import flagged

        return None if self.weak_table is None else flagged(self.weak_table)

    @cached_property
    def assumptions(self) -> tuple[Assumption, ...]:
        """The inputs' assumptions, the input pipeline's saying ``input_rate``."""
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import assumed

        return assumed(self)

    @cached_property
    def decision(self) -> Decision:
        """``decided`` with its words (the warnings, what to measure first)."""
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import render_decision

        return render_decision(self)

    @cached_property
    def caveats(self) -> tuple[str, ...]:
        """What makes the headline less firm, and measurements beside the prediction:
        also the explanation's first lines."""
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import caveats

        return caveats(self)

    @cached_property
    def explanation(self) -> list[str]:
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import explanation

        return explanation(self)

    @property
    def recommended(self) -> int:
        return self.decided.accelerators

    @property
    def fastest(self) -> int:
        return self.decided.fastest

    @property
    def dominant_term(self) -> str:
        return self.decided.dominant_term

    @property
    def cap(self) -> str:
        return self.decided.cap

    @property
    def decision_line(self) -> int:
        """Where "Use N devices ..." stands in ``explanation``: after what qualifies it
        (``caveats``, said first) and the decision's warnings (``explain`` says them
        before it)."""
        return len(self.caveats) + len(self.decision.warnings)
