"""One report request: what ``gpuscale report`` is asked, written once (each field's help
is the option's), and :func:`write_report`, the library call that owns the worker pool and
the figure cache. Pure Python at import: the CLI imports the request at start."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuscale.hardware.links import check_preset
from gpuscale.hardware.memory import STRATEGIES
from gpuscale.sources.atomic import replacing
from gpuscale.tables.analysis_request import BASIS_HELP, DIVISION_HELP, reference_option
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.out_paths import check_folder_out
from gpuscale.tables.requests import (
    FieldError,
    flag,
    folder_out_option,
    option,
    ref,
    settle_choice,
)

# their types alone: pandas, the tables, the analysis and the advice load only when a report
# is written
if TYPE_CHECKING:
    import pandas as pd

    from gpuscale.advice.request import AdviceRequest
    from gpuscale.analysis import AnalysisOptions
    from gpuscale.bench.results import BenchFile
    from gpuscale.tables import RoundTables


DEFAULT_OUT = Path("gpuscale-report")
HOLDS = "the report's files (its index.html and the figures it links)"
MAX_DEVICES = 1_000_000  # as the advice allows


@dataclass(frozen=True, kw_only=True, slots=True)
class ReportRequest:
    """How to write the report: each field's help (the ``report`` option's) in its
    metadata."""

    reference: str = reference_option()
    out: Path = folder_out_option(DEFAULT_OUT, "the report (its index.html and figures)")
    advise: bool = flag("--advise", help="With --bench: add predicted scaling (advise).")
    interconnect: str | None = option(
        None, help="Link preset for --advise (default: the detected topology)."
    )
    max_devices: int | None = option(
        None,
        help="Largest device count for --advise (default: 8 GPUs; on CPU bench rows, "
        "the processes this host can run).",
    )
    model: str | None = option(
        None,
        help="The bench model --advise advises on (default: as `gpuscale advise --bench`, "
        "the largest with a trustworthy N = 1 run).",
    )
    strategy: str | None = option(
        None,
        help="ddp, zero2, fsdp or hybrid, for --advise, as `gpuscale advise --strategy` takes "
        "them (default: the strategy the bench measured the model with).",
    )
    allow_flagged: bool = flag(
        "--allow-flagged",
        help="With --advise: use bench runs flagged as untrustworthy, with a warning (never "
        "those of a broken model, its loss not finite).",
    )
    convergence_basis: str = option("expected", help=BASIS_HELP)
    division: str = option("closed", help=DIVISION_HELP)
    png: bool = flag("--png", help="Write each figure as PNG (150 dpi) too, beside the SVG.")
    all_figures: bool = flag(
        "--all-figures",
        help="Draw every figure (default: the overview and each workload's four panels: "
        "speedup, E', time against accelerator-hours and why E' falls; each section names "
        "the figures it leaves out).",
    )
    cache: bool = flag(
        "--cache/--no-cache",
        default=True,
        help="Reuse figures and analyses of an earlier report of the same data and code "
        "(kept in gpuscale/report under ~/.cache or $XDG_CACHE_HOME).",
    )

    def __post_init__(self) -> None:
        check_folder_out("out", self.out, holds=HOLDS, default=DEFAULT_OUT)  # before any work
        self.analysis()  # ValueError: a convergence basis that is none, before any work
        if self.max_devices is not None and not 1 <= self.max_devices <= MAX_DEVICES:
            raise FieldError(
                "max_devices", self.max_devices, f"must be a whole number from 1 to {MAX_DEVICES:,}"
            )
        if self.advise:  # a preset named wrongly ends it before any work (unused without)
            check_preset(self)
        if self.strategy is not None:  # the strategies `advise --strategy` takes
            settle_choice(self, "strategy", STRATEGIES)
        # an advice option without --advise is refused, never ignored without a word
        for name, value in (
            ("interconnect", None),
            ("max_devices", None),
            ("model", None),
            ("strategy", None),
            ("allow_flagged", False),
        ):
            if not self.advise and getattr(self, name) != value:
                raise FieldError(
                    name,
                    getattr(self, name),
                    f"applies with {ref('advise', True, flag=True)} (and {ref('bench')})",
                )

    def advice_request(self, bench_path: Path | None = None) -> AdviceRequest:
        """The :class:`~gpuscale.advice.request.AdviceRequest` of ``--advise``: what
        ``gpuscale advise --bench`` is asked with the same options (its strategy, unless
        given, the one the bench measured the model with, as the command's; its model,
        unless given, the command's default); ``bench_path``: the results file the bench
        table was read from (the bench commands the advice gives write to it)."""
        from gpuscale.advice.request import AdviceRequest  # lazy: as the report, not --help

        return AdviceRequest(
            bench=None if bench_path is None else str(bench_path),
            interconnect=self.interconnect,
            max_devices=self.max_devices,
            model=self.model,
            strategy=self.strategy,
            allow_flagged=self.allow_flagged,
        )

    def analysis(self) -> AnalysisOptions:
        """The :class:`~gpuscale.analysis.AnalysisOptions` of this report."""
        from gpuscale.analysis import AnalysisOptions  # lazy: pandas, not for --help

        return AnalysisOptions(
            reference=self.reference,
            convergence_basis=self.convergence_basis,
            division=self.division,
        )


@dataclass(frozen=True, slots=True)
class ReportWritten:
    """A report written: its HTML file, what its first screen leads with, a line each
    (``report.page.report_headline``: your hardware's answer, else each workload's
    recommended count), and the earlier report it replaced (``, replacing its report of
    v4.1``; "" for none: ``sources.atomic.replacing``); ``missing``: a sentence for each
    part asked for that it could not give (the advice ``--advise`` asked for and why)."""

    path: Path
    headline: tuple[str, ...] = ()
    replaced: str = ""
    missing: tuple[str, ...] = ()

    @property
    def said(self) -> list[str]:
        """What ``gpuscale report`` says of it: where it was written (a path that pastes
        whole with a space in it) and what it replaced, then its headline."""
        return [f"report written to {quoted_path(self.path)}{self.replaced}", *self.headline]

    @property
    def warned(self) -> list[str]:
        """A warning for each part asked for and not given (the command exits 1)."""
        return [f"warning: {line}" for line in self.missing]


def _model_in_bench(bench: pd.DataFrame, model: str, bench_path: Path | None) -> None:
    """A ``model`` the bench results do not hold (a typo, another file) refused before
    anything is written, as ``gpuscale advise --bench`` refuses it (its
    :class:`~gpuscale.tables.requests.FieldError`: the CLI names ``--model``); a model held
    whose every run failed is no typo: the report says so, without the advice."""
    # lazy: the advice's rule, only where a report advises on a model named
    from gpuscale.advice.api import worded_refusal
    from gpuscale.advice.calibrate.errors import BenchFieldError, CalibrationError
    from gpuscale.advice.calibrate.rows import known_model

    try:
        known_model(bench, model, bench_path)
    except BenchFieldError as refused:
        worded_refusal(refused)  # said as ``gpuscale advise --bench`` says it
        raise
    except CalibrationError:
        return


def refusals() -> tuple[type[Exception], ...]:
    """What :func:`write_report` raises for a request it cannot serve, each with a message
    for people (a missing reference, an output it cannot write, a field refused, a report
    that would hold nothing)."""
    from gpuscale.analysis.metrics import ReferenceNotFoundError  # lazy: pandas
    from gpuscale.report.html import NothingToReportError
    from gpuscale.sources import OutputError

    return ReferenceNotFoundError, OutputError, FieldError, NothingToReportError


def write_report(
    request: ReportRequest,
    tables: RoundTables,
    workloads: list[str],
    *,
    bench: pd.DataFrame | BenchFile | None = None,
    notes: Sequence[str] = (),
    bench_path: Path | None = None,
    sources: Sequence[str] = (),
) -> ReportWritten:
    """Write the report of ``workloads`` in ``tables`` (and ``bench``, a bench table, or
    a results file as ``load_bench`` read it: its skipped lines said in the section) as
    ``request`` says, drawing on every core (``bench_path``: the file ``bench`` was read
    from; ``sources``: the data arguments as typed, as ``build_report`` takes them); the
    HTML file's path, the page's headline and what it could not give. Raises what
    ``build_report`` raises (``ReferenceNotFoundError``, ``OutputError``,
    ``NothingToReportError``); a :class:`FieldError` for --advise without a bench
    (:func:`refusals`: each of them)."""
    # lazy: matplotlib and the analysis stack, only for a report
    from gpuscale.bench.results import BenchFile
    from gpuscale.report.html import build_report
    from gpuscale.sources.disk_cache import default_folder

    skipped = bench.skipped if isinstance(bench, BenchFile) else ()
    bench = bench.table if isinstance(bench, BenchFile) else bench

    if request.advise and bench is None:  # refused before the report's work, as a typo is
        why = f"needs {ref('bench')} (the advice is computed from your bench runs)"
        raise FieldError("advise", True, why)
    advice = request.advice_request(bench_path) if request.advise and bench is not None else None
    if advice is not None and request.model is not None:
        _model_in_bench(bench, request.model, bench_path)
    headline: list[tuple[str, ...]] = []
    missing: list[str] = []  # each part asked for and not given, said by the command
    replaced = replacing(request.out, "report", "report")
    path = build_report(
        tables,
        workloads,
        request.out,
        request.analysis(),
        bench=bench,
        bench_path=bench_path,
        bench_skipped=skipped,
        advice=advice,
        workers=os.cpu_count() or 1,  # the figures drawn in a process per core
        notes=notes,
        png=request.png,
        cache=default_folder() if request.cache else None,
        all_figures=request.all_figures,
        on_missing=missing.append,
        on_headline=headline.append,
        sources=sources,
    )
    return ReportWritten(path, next(iter(headline), ()), replaced, tuple(missing))
