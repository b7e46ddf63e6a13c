"""The advice's priors as data: ``data/advice_priors.json`` holds each one's most likely
value, its range where it has one, its unit and its source; this module reads it once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

from gpuscale.advice.model.wording import phrase

PRIORS_FILE = "advice_priors.json"


@dataclass(frozen=True, slots=True)
class SourcedPrior:
    """A prior: its most likely value (``point``), its range (``low``, ``high``: None where
    the value is taken as it is), its unit and where it comes from."""

    point: float
    low: float | None
    high: float | None
    unit: str
    source: str
    said: str = ""  # the citation as the advice's sentences give it

    @property
    def ends(self) -> tuple[float, float, float]:
        """(low, point, high); a ``ValueError`` where the prior has no range."""
        if self.low is None or self.high is None:
            raise ValueError(phrase("prior_no_range", source=self.source))
        return self.low, self.point, self.high


def _read() -> dict[str, SourcedPrior]:
    text = (resources.files("gpuscale") / "data" / PRIORS_FILE).read_text()
    read = ("point", "low", "high", "unit", "source", "said")
    return {
        name: SourcedPrior(**{k: entry[k] for k in read if k in entry})
        for name, entry in json.loads(text)["priors"].items()
    }


PRIORS: dict[str, SourcedPrior] = _read()
