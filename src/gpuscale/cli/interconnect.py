"""Commands on the user's interconnect: collectives (an nccl-tests style sweep and its
verdict) and topo (the GPU topology)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from gpuscale.bench.collectives_config import CheckRequest, CollectivesConfig
from gpuscale.bench.telemetry import topology_required
from gpuscale.cli.common import FormatOption, app, require_torch
from gpuscale.cli.options import command
from gpuscale.cli.output import Format, err, fail_on, out, print_json, say, show


@command(app, "collectives")
def collectives(
    asked: CheckRequest, config: CollectivesConfig, fmt: FormatOption = Format.table
) -> None:
    """Whether the interconnect is healthy (first), and the collectives sweep as nccl-tests
    runs it."""
    require_torch("the collectives sweep")
    # lazy: numpy, pandas and the torchrun sweep, only the measuring commands need them
    from gpuscale.bench.collectives_sweep import SweepError, check_interconnect
    from gpuscale.interconnect.shown import SWEEP_REST

    with fail_on(ValueError):
        world = asked.world()
    with (
        fail_on(SweepError, ValueError),
        err.status(f"{','.join(config.ops)} on {world} processes"),
    ):
        check = check_interconnect(asked, config, world)
    say(check.skipped, stderr=True)  # the file's lines not read, one each
    if fmt is Format.table:  # the verdict first (one line per collective), then the detail
        say(check.verdicts + check.said)
    else:  # stdout one document, the verdict records; what they say of it on stderr
        show(check.verdict_view, fmt)
    say(check.warned, stderr=True)  # a collective whose calls were far apart, a warning each
    for view in check.views if fmt is Format.table else ():  # a table per collective
        show(view, Format.table, rest=SWEEP_REST)
    say([check.closing], stderr=True)


@app.command()
def topo(
    saved: Annotated[
        Path | None,
        typer.Option(
            "--file",
            "--topo-file",  # as collectives spells it
            help="Parse a saved `nvidia-smi topo -m` output instead of NVML.",
        ),
    ] = None,
    gpu: Annotated[
        str | None, typer.Option(help="GPU model for --file (tells the NVLink generation).")
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """GPU-to-GPU links (NV#, PIX, PXB, PHB, NODE, SYS), NICs, and the expected bandwidth."""
    with fail_on(ValueError):
        topology = topology_required(saved, gpu)
    from gpuscale.interconnect import shown  # lazy: pandas

    info = shown.topology_info(topology, os.environ if saved is None else None)
    if fmt is Format.json:  # stdout one document, the matrix's problems on stderr
        say(shown.matrix_warnings(info), stderr=True)
        print_json(out, info)
        return
    for view in shown.topology_views(topology, info, terminal=fmt is Format.table):
        show(view, fmt)
