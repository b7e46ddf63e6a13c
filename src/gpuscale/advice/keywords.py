"""``gpuscale.advise(...)``: the advice by keywords, for Python users.

A thin wrapper: it builds the :class:`~gpuscale.advice.request.AdviceRequest` of its
keywords, reads the files it names (``advice.load``) and calls the strictly typed
``advice.api.advise``. From numbers::

    gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb")

or from measurements (``gpuscale bench`` results as a path or a bench table, optionally
a ``gpuscale collectives`` sweep and a saved topology)::

    gpuscale.advise(bench="results.jsonl", collectives="collectives.jsonl")
    gpuscale.advise(AdviceRequest(params=7e6, step_ms=2, batch=64, interconnect="nvlink4"))
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from gpuscale.advice.api import advise as advise_request
from gpuscale.advice.load import load_advice_data
from gpuscale.advice.model.network import Link
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.search.recommend import Advice
from gpuscale.bench.telemetry import topology_here
from gpuscale.interconnect.topology import Topology
from gpuscale.tables.requests import check_keywords


def advise(
    request: AdviceRequest | None = None,
    /,
    *,
    bench: str | Path | pd.DataFrame | None = None,
    link: str | Link | None = None,
    topology: Topology | None = None,
    **fields: Any,
) -> Advice:
    """The advice of ``request`` with ``fields`` (:class:`AdviceRequest`'s) replaced.
    ``bench``: a results file's path or its bench table; ``link``: a preset's name (the
    ``interconnect`` field) or a :class:`Link` (its ``busbw_gbs`` and ``latency_us``);
    ``topology``: a detected or parsed one (else the ``topo`` field's file is read)."""
    check_keywords(AdviceRequest, fields, "advise", "bench", "link", "topology")
    frame = None
    if isinstance(bench, pd.DataFrame):
        frame = bench
    elif isinstance(bench, str | os.PathLike):
        fields["bench"] = str(bench)
    elif bench is not None:
        raise TypeError(f"bench must be a results file's path or a bench table, not {bench!r}")
    named = sorted({"interconnect", "busbw_gbs", "latency_us"} & fields.keys())
    if link is not None and named:  # never one of two silently (a user walk: link won)
        raise TypeError(f"give the link once: link= or {'= and '.join(named)}=, not both")
    if isinstance(link, Link):
        fields |= {"busbw_gbs": link.busbw_gbs, "latency_us": link.latency_us}
    elif link is not None:
        fields["interconnect"] = link
    return _advise_loaded(AdviceRequest.of(request, **fields), bench=frame, topology=topology)


def advise_here(request: AdviceRequest) -> Advice:
    """``gpuscale advise``: the files ``request`` names read (``advice.load``), this
    machine's topology detected where no link, topology file or sweep is given, and the
    advice of it all."""
    given = (request.interconnect, request.busbw_gbs, request.topo, request.collectives)
    detected = topology_here(None, None) if all(v is None for v in given) else None
    return _advise_loaded(request, topology=detected)


def _advise_loaded(
    request: AdviceRequest, *, bench: pd.DataFrame | None = None, topology: Topology | None = None
) -> Advice:
    """The advice of ``request`` once the files it names are read (``bench`` or
    ``topology`` given: used as they are)."""
    data = load_advice_data(request, bench=bench, topology=topology)
    return advise_request(
        request,
        bench=data.bench,
        topology=data.topology,
        collectives=data.collectives,
        notes=data.notes,
    )
