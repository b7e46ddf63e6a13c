"""The advice's entrance: the request checked against its data, the calibration built once,
the search on it, its refusals said by ``explain``; each error a ``ValueError`` for the user."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

import pandas as pd

from gpuscale.advice.calibrate.build import AdviceData, build
from gpuscale.advice.calibrate.errors import BenchFieldError, CalibrationError
from gpuscale.advice.derived import Searched
from gpuscale.advice.explain.answer import shown
from gpuscale.advice.explain.caveats import field_refusal, nothing_fits, refusal
from gpuscale.advice.explain.document import Worded
from gpuscale.advice.explain.explanation import worded
from gpuscale.advice.explain.phrasebook import said, spelled_as
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.request_fields import SHAPE_NUMBERS
from gpuscale.advice.search.decide import NoneHolds, search
from gpuscale.advice.search.predict import Refused
from gpuscale.bench.results import holds_records, load_bench, records_bench
from gpuscale.bench.telemetry import topology_here
from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.measured import MeasuredCurves
from gpuscale.interconnect.network import Link
from gpuscale.interconnect.records import read_collectives
from gpuscale.interconnect.topology import Topology, read_topo_file
from gpuscale.quantities import counted, joined
from gpuscale.tables.checks import check_bench_numbers
from gpuscale.tables.inputs import missing_input, missing_results, refuse_missing
from gpuscale.tables.requests import (
    FieldError,
    NamedError,
    check_keywords,
    keyword_doc,
    keyword_signature,
    ref,
)
from gpuscale.tables.result_repr import result_repr


@dataclass(frozen=True)
class Advice(Worded, Searched):
    """The search's record with its words; its repr the short answer ``gpuscale advise``
    prints and the fields that hold the rest."""

    def __repr__(self) -> str:
        return result_repr("Advice", shown(self), ADVICE_FIELDS)


# What a notebook reads next: the count, the table, every sentence, the one Decision.
ADVICE_FIELDS = (".recommended", ".predictions", ".explanation", ".decision", ".calibration")


def advise(
    request: AdviceRequest,
    *,
    bench: pd.DataFrame | None = None,
    topology: Topology | None = None,
    collectives: MeasuredCurves | None = None,
    notes: Sequence[str] = (),
) -> Advice:
    """The advice for ``request`` from the data read (``bench`` None: from its numbers);
    ``notes``: sentences on reading the data (lines skipped)."""
    if not isinstance(request, AdviceRequest):
        raise TypeError(f"request must be an AdviceRequest, not {request!r}")
    if bench is not None and not isinstance(bench, pd.DataFrame):
        raise TypeError(
            f"bench must be a bench table (read it with load_advice_data), not {bench!r}"
        )
    if bench is not None:  # an edited table's impossible rate, said before any is read
        check_bench_numbers(bench)
    check_with_data(request, bench=bench is not None)
    try:
        calibration = build(request, AdviceData(bench, topology, collectives, tuple(notes)))
    except CalibrationError as refused:  # the bench's reason, said
        worded_refusal(refused)
        raise
    try:
        found = search(worded(calibration))
    except Refused as refused:  # the search's reason, said
        raise ValueError(said(refused.finding)) from None
    except NoneHolds as none:
        raise NamedError(nothing_fits(none.memory, none.sources)) from None
    return Advice(**{f.name: getattr(found, f.name) for f in fields(found)})


def worded_refusal(refused: CalibrationError) -> CalibrationError:
    """``refused`` with its words: the refusal and the runs left out; a bench field's also
    naming the field (its option or keyword)."""
    refused.text = refusal(refused.found, refused.left)
    if isinstance(refused, BenchFieldError):
        refused.field_text = field_refusal(refused.field, refused.value, refused.found)
    return refused


def advise_loaded(
    request: AdviceRequest,
    *,
    bench: pd.DataFrame | None = None,
    topology: Topology | None = None,
    here: bool = False,
    notes: Sequence[str] = (),
) -> Advice:
    """The advice on the files ``request`` names (``bench``, ``topology``: given, as read);
    ``here`` (``gpuscale advise``): this machine's topology where no link is given;
    ``notes``: said before the data's own (how a name typed was read)."""
    given = (request.interconnect, request.busbw_gbs, request.topo, request.collectives)
    if here and all(v is None for v in given):
        topology = topology_here(None, None)
    data = load_advice_data(request, bench=bench, topology=topology)
    data = replace(data, notes=(*notes, *data.notes))
    return advise(request, **{f.name: getattr(data, f.name) for f in fields(data)})


def load_advice_data(
    request: AdviceRequest,
    *,
    bench: pd.DataFrame | None = None,
    topology: Topology | None = None,
) -> AdviceData:
    """The files ``request`` names, read; the sweep and the topology first, their mistakes
    said before a bench of up to 64 MiB is read; every one of them that is not there said
    at once, before any is read (:class:`MissingInputsError`, a ``ValueError``)."""
    refuse_missing(
        [
            missing_input(request.collectives, read_collectives),
            missing_input(request.topo if topology is None else None, read_topo_file),
            missing_results(request.bench if bench is None else None, takes_round=False),
        ]
    )
    curves = None if request.collectives is None else read_collectives(Path(request.collectives))
    if topology is None and request.topo is not None:
        topology = read_topo_file(Path(request.topo), request.device_name)
    notes: tuple[str, ...] = ()
    loaded, name, part = None, "", "line"
    if bench is None and request.bench is not None:
        # advise takes no --round: a round typed here is told the command that reads it
        loaded = load_bench(Path(request.bench), takes_round=False)
        name = Path(request.bench).name
    elif bench is not None and holds_records(bench):  # pd.read_json(file, lines=True)'s
        loaded, name, part = records_bench(bench), "the bench DataFrame", "row"
    if loaded is not None:
        bench, skipped = loaded.table, loaded.skipped
        if skipped:
            notes = (f"{counted(len(skipped), part)} of {name} skipped, e.g. {skipped[0]}.",)
    return AdviceData(bench=bench, topology=topology, collectives=curves, notes=notes)


def advise_by_keywords(
    request: AdviceRequest | None = None,
    /,
    *,
    bench: str | Path | pd.DataFrame | None = None,
    link: str | Link | None = None,
    topology: Topology | None = None,
    **fields: object,
) -> Advice:
    """``gpuscale.advise``: the advice of ``request`` with the keywords after ``topology``
    (its fields) replaced, or of a request built from them.
    ``bench``: a results file's path, its bench table, or its records as
    ``pd.read_json(path, lines=True)`` reads them; ``link``: a preset's name (the
    ``interconnect`` field) or a :class:`Link` (:func:`link_fields`)."""
    check_keywords(AdviceRequest, fields, "advise", "bench", "link", "topology")
    if request is not None and not isinstance(request, AdviceRequest):
        raise TypeError(
            f"advise takes an AdviceRequest or its fields as keywords, not {request!r}: "
            "advise(bench='results.jsonl') or advise(params=7e6, step_ms=2, batch=64)"
        )
    frame = bench if isinstance(bench, pd.DataFrame) else None
    if isinstance(bench, str | os.PathLike):
        fields["bench"] = str(bench)
    elif bench is not None and frame is None:
        raise TypeError(f"bench must be a results file's path or a bench table, not {bench!r}")
    if topology is not None and not isinstance(topology, Topology):  # a path is topo='s
        raise TypeError(
            f"topology must be a Topology, not {topology!r}: a saved `nvidia-smi topo -m` "
            "is read from its path as topo="
        )
    named = sorted({"interconnect", "busbw_gbs", "latency_us"} & fields.keys())
    if link is not None and named:  # never one of two silently: which wins is not a guess
        raise TypeError(f"give the link once: link= or {'= and '.join(named)}=, not both")
    if isinstance(link, Link):
        fields |= link_fields(link)
    elif link is not None:
        fields["interconnect"] = link
    try:
        request = AdviceRequest(**fields) if request is None else replace(request, **fields)
        with spelled_as(True):  # the words made for Python name its keywords
            # a workload read from a prefix or another name: said with the warnings
            found = advise_loaded(request, bench=frame, topology=topology, notes=request.read_as)
            return replace(found, keywords=True)
    except FieldError as refused:
        named = any(f == "interconnect" for f, _, _ in refused.problems)
        if not isinstance(link, str) or type(refused) is not FieldError or not named:
            raise  # another field's refusal, or one with its own message, as it is
        # the keyword the caller gave, link=, named (``invalid link nvlnk4: not a link ...``)
        problems = [("link" if f == "interconnect" else f, v, r) for f, v, r in refused.problems]
        (field, value, rule), *more = problems
        raise FieldError(field, value, rule, more=tuple(more)) from None


def link_fields(link: Link) -> dict[str, object]:
    """The request's fields of a :class:`Link`: a preset's own (``Link.from_preset``) its
    name, priced as the name is (a mesh's figure at each count, the preset's link class and
    device); else its ``busbw_gbs`` and ``latency_us``, a custom link of that one figure at
    every count. ``FieldError``: a mesh's links per device (``mesh_links``) on figures no
    preset has, which a request cannot carry (priced at one figure, it would not be the
    mesh given)."""
    if link.name in PRESETS and link == Link.from_preset(link.name):
        return {"interconnect": link.name}
    if link.mesh_links is not None:
        meshes = [name for name, p in PRESETS.items() if p.mesh_links is not None]
        rule = (
            f"a mesh of {link.mesh_links} links per device is priced at each count only as a "
            f"preset ({joined(meshes, 'or')}): give link='{meshes[0]}', or a Link of one "
            "figure at every count (mesh_links=None)"
        )
        raise FieldError("link", link, rule)
    return {"busbw_gbs": link.busbw_gbs, "latency_us": link.latency_us}


# help(gpuscale.advise) lists the request's fields, each a keyword with its default
# help() says what each keyword means, from the request's fields (their options' help)
advise_by_keywords.__doc__ = keyword_doc(advise_by_keywords, AdviceRequest)
advise_by_keywords.__signature__ = keyword_signature(advise_by_keywords, AdviceRequest)  # type: ignore[attr-defined]


# Fields that describe bench results: (field, why without them).
BENCH_ONLY: tuple[tuple[str, str], ...] = (
    ("model", "a model of the bench results"),
    ("family", f"whose measured rate a {ref('params')} model takes"),
    ("allow_flagged", "which bench runs are used"),
)
# Fields that describe a model given by numbers (a shape among them: a bench measured its own)
NUMBERS_ONLY = ("step_ms", "device_name", "preset", *SHAPE_NUMBERS, "vocab", "checkpointing")


def check_with_data(request: AdviceRequest, *, bench: bool) -> None:
    """``NamedError``: nothing to advise from, or an option that does not apply with
    (``bench``) or without bench results."""
    if not bench:
        if request.shape is not None and request.step_ms is None:
            raise NamedError(
                "a transformer's shape gives the parameters, the FLOPs and the activations, "
                f"not how fast a step runs: give {ref('step_ms')} (one device's step at "
                f"{ref('batch')})"
            )
        given = {"params": request.model_params, "step_ms": request.step_ms}
        if len(lacking := [name for name, value in given.items() if value is None]) == 1:
            (one,) = set(given) - set(lacking)  # the one given, as typed
            raise NamedError(
                f"nothing to advise from: {ref(one)} without {ref(lacking[0])}: a model by "
                f"its numbers needs both ({ref('params')} and {ref('step_ms')}), or give "
                f"bench results (a file as {ref('bench')})"
            )
        if lacking:
            raise NamedError(
                f"nothing to advise from: give bench results (a file as {ref('bench')}), or "
                f"the model's parameters and step time ({ref('params')} and {ref('step_ms')})"
            )
        for option, why in BENCH_ONLY:
            if getattr(request, option) not in (None, False):
                raise NamedError(
                    f"{ref(option)} without {ref('bench')}: it says {why}; give bench results "
                    f"(a file as {ref('bench')}), or leave it out"
                )
        return
    if isinstance(request.batch, tuple):
        raise NamedError(
            f"{ref('batch')} is given once with {ref('bench')} (the per-device batch to use)"
        )
    unused = [ref(f) for f in NUMBERS_ONLY if getattr(request, f) is not None]
    if unused:  # never silently ignored: an option unused is refused
        raise NamedError(
            f"{joined(unused)}: for a model given by numbers; with bench results the "
            "step and the device are measured: give one or the other"
        )
    if request.params is not None and request.model is not None:
        raise NamedError(  # two questions: one at a time
            f"give {ref('model', request.model)} (a model the bench measured) or "
            f"{ref('params')} (a model by its numbers, advised from its family's "
            "calibration), not both"
        )
    if request.params is None:
        for field in ("family", "flops_per_sample"):
            if getattr(request, field) is not None:
                raise NamedError(
                    f"{ref(field)} with {ref('bench')} but no {ref('params')}: it describes a "
                    "model given by its numbers; the bench measured its own models' (give "
                    f"{ref('params')} too, or leave it out)"
                )
