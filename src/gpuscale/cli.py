"""The ``gpuscale`` command line: parse options, call the library, print. Nothing else."""

from __future__ import annotations

import gc
import re
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gpuscale.cli_output import Format, print_frame

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="How training scales with the number of accelerators, and how many to use.",
)
out = Console(soft_wrap=False, width=None if sys.stdout.isatty() else 240)
err = Console(stderr=True)

# Arguments several commands share, declared once.
RoundPaths = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Round directories or archives (.tar, .tar.gz, .tar.xz, .zip); "
        "default: the bundled rounds."
    ),
]
RoundNames = Annotated[
    list[str] | None, typer.Option("--round", help="Bundled round(s), e.g. v4.1 (repeatable).")
]
Benchmarks = Annotated[
    list[str] | None,
    typer.Option(
        "--benchmark", "-b", help="Benchmark or workload name(s); 'study' for the study's four."
    ),
]

SCORE_COLUMNS = [
    "round",
    "benchmark",
    "submitter",
    "system_id",
    "system_name",
    "accelerator_family",
    "accelerators",
    "runs",
    "runs_converged",
    "scaling_factor",
    "time_to_train_min",
]


def fail(message: str, code: int = 2) -> None:
    """Print a one-line error (no traceback) and exit."""
    err.print(f"[bold red]error:[/] {message}", highlight=False, markup=True)
    raise typer.Exit(code)


def _progress_reader():
    """A (progress callback, context manager) pair: a rich bar on a terminal, else silent."""
    from contextlib import nullcontext

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    if not err.is_terminal:
        return None, nullcontext()
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task = progress.add_task("reading result logs", total=None)

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total or None)

    return update, progress


def read_paths(paths: list[Path], round_name: str | None = None):
    """Read raw rounds with a progress bar; a path that is no round ends the command."""
    from gpuscale.mlperf.ingest import RoundTables, read_round
    from gpuscale.mlperf.sources import SourceError

    update, context = _progress_reader()
    parts = []
    with context:
        for path in paths:
            try:
                parts.append(read_round(path, round_name, progress=update))
            except (SourceError, ValueError) as exc:
                fail(str(exc))
    return RoundTables.concat(parts)


def load_tables(paths: list[Path] | None, round_names: list[str] | None):
    """Tables from raw paths (read now) or from the bundled rounds."""
    from gpuscale.mlperf.bundled import load_round

    if paths:
        return read_paths(paths)
    try:
        return load_round(*(round_names or []))
    except (KeyError, ValueError) as exc:
        fail(str(exc).strip("'\""))
    raise AssertionError("unreachable")


def _summary(tables) -> None:
    for round_name, scores in tables.scores.groupby("round"):
        runs = tables.runs[tables.runs["round"] == round_name]
        systems = tables.systems[tables.systems["round"] == round_name]
        problems = tables.problems[tables.problems["round"] == round_name]
        err.print(
            f"[bold]{round_name}[/]: {len(systems)} systems, {len(runs)} runs "
            f"({int(runs['counted'].sum())} counted), "
            f"{int(scores['time_to_train_min'].notna().sum())} of {len(scores)} "
            f"benchmark results scored, {len(problems)} problems"
        )
    if len(tables.problems):
        counts = tables.problems.groupby(["round", "kind"]).size().reset_index(name="count")
        print_frame(err, counts, Format.table, title="problems found (see problems.csv)")


@app.command()
def ingest(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Round directories or archives (.tar, .tar.gz, .tar.xz, .zip)."),
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the tables.")] = Path(
        "gpuscale-tables"
    ),
    round_name: Annotated[
        str | None,
        typer.Option("--round-name", help="Round name when the path does not say it (e.g. v4.1)."),
    ] = None,
) -> None:
    """Read MLPerf Training rounds; write systems, runs, scores and problems tables."""
    from gpuscale.mlperf.bundled import write_tables

    if round_name and len(paths) > 1:
        fail("--round-name applies to one path at a time")
    tables = read_paths(paths, round_name)
    written = write_tables(tables, out_dir)
    _summary(tables)
    err.print(f"wrote {len(written)} files to {out_dir}/")


@app.command()
def scores(
    paths: RoundPaths = None,
    round_names: RoundNames = None,
    benchmark: Benchmarks = None,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
    all_columns: Annotated[
        bool, typer.Option("--all-columns", help="Every column of the scores table.")
    ] = False,
) -> None:
    """Official time-to-train scores (olympic average, minutes), one row per result."""
    from gpuscale.mlperf.benchmarks import resolve_workloads

    tables = load_tables(paths, round_names)
    frame = tables.scores
    if benchmark:
        workloads = resolve_workloads(benchmark)
        frame = frame[frame["workload"].isin(workloads) | frame["benchmark"].isin(benchmark)]
    frame = frame.sort_values(["round", "benchmark", "time_to_train_min"])
    print_frame(
        out,
        frame if all_columns else frame[SCORE_COLUMNS],
        fmt,
        title="MLPerf Training official scores (minutes)",
    )


DECOMPOSE_COLUMNS = [
    "global_batch_size",
    "throughput_factor",
    "convergence_factor",
    "throughput_efficiency",
]
ANALYZE_COLUMNS = [
    "submitter",
    "system_name",
    "accelerator_family",
    "accelerators",
    "time_to_train_min",
    "speedup",
    "efficiency",
    "normalized_efficiency",
    "gpu_hours",
    "cluster",
    "pareto",
]


@app.command()
def analyze(
    paths: RoundPaths = None,
    round_names: RoundNames = None,
    benchmark: Benchmarks = None,
    reference: Annotated[
        str,
        typer.Option(
            "--reference",
            "-r",
            help="study (fewest accelerators, slowest among them), family (the same rule within "
            "each accelerator family) or SUBMITTER/SYSTEM_ID.",
        ),
    ] = "study",
    threshold: Annotated[
        float,
        typer.Option(
            help="E' threshold of the equilibrium criterion, as a fraction of the best E'."
        ),
    ] = 0.8,
    division: Annotated[str | None, typer.Option(help="closed or open.")] = None,
    availability: Annotated[
        str | None,
        typer.Option(help="Keep systems whose availability contains this text (e.g. cloud)."),
    ] = None,
    family: Annotated[
        list[str] | None,
        typer.Option("--family", help="Keep only these accelerator families (repeatable)."),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option("-k", help="Number of K-means clusters (default: best silhouette, 2..6)."),
    ] = None,
    n_boot: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of K-means and the bootstrap.")] = 0,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
    decompose_columns: Annotated[
        bool,
        typer.Option("--decompose", help="Show speedup = throughput factor x convergence factor."),
    ] = False,
    bench_file: Annotated[
        Path | None,
        typer.Option(
            "--bench",
            help="Analyse `gpuscale bench` results (JSONL) instead of MLPerf rounds "
            "(both when --round or paths are given too).",
        ),
    ] = None,
) -> None:
    """Speedup, efficiency, E', clusters, equilibrium and 95% intervals per benchmark."""
    import json

    if bench_file is not None:
        table = _read_bench(bench_file)
        if fmt is Format.json:
            out.file.write(json.dumps(_bench_json(table), indent=2) + "\n")
        else:
            _print_bench(table, fmt)
        if not (paths or round_names):
            return

    from gpuscale.analysis import AnalysisOptions, as_json
    from gpuscale.analysis import analyze as run_analysis
    from gpuscale.analysis.metrics import ReferenceError
    from gpuscale.mlperf.benchmarks import resolve_workloads

    try:
        options = AnalysisOptions(
            reference=reference,
            threshold=threshold,
            division=division,
            availability=availability,
            families=tuple(family) if family else None,
            k=k,
            n_boot=n_boot,
            seed=seed,
        )
    except ValueError as exc:
        fail(str(exc))
    tables = load_tables(paths, round_names or (None if paths else ["v4.1"]))
    workloads = resolve_workloads(benchmark or [])
    try:
        results = run_analysis(tables, workloads, options)
    except ReferenceError as exc:
        fail(str(exc))
    if not results:
        fail("no scored system matches these options")
    if fmt is Format.json:
        from gpuscale.cli_output import jsonable

        out.file.write(json.dumps(jsonable(as_json(results, options)), indent=2) + "\n")
        return
    if fmt is Format.csv:
        import pandas as pd

        print_frame(out, pd.concat([r.table for r in results]), fmt)
        return
    for result in results:
        refs = ", ".join(
            f"{r.submitter}/{r.system_id} ({r.accelerators} x "
            f"{r.accelerator_family}, {r.time_to_train_min:.2f} min)"
            for r in result.references
        )
        print_frame(
            out,
            result.table[ANALYZE_COLUMNS + (DECOMPOSE_COLUMNS if decompose_columns else [])],
            fmt,
            title=f"{result.round} {result.workload}: reference ({reference}) {refs}",
        )
        eq = result.equilibrium
        for pick in eq.picks:
            out.print(
                f"  {pick.criterion}: {pick.submitter} {pick.system_name} "
                f"({pick.accelerators} x {pick.accelerator_family}, "
                f"{pick.time_to_train_min:.2f} min, E' {pick.normalized_efficiency:.2f})",
                markup=False,
                highlight=False,
            )
        out.print(
            f"  agreement: {eq.agreement}; Pareto front: {len(eq.pareto)} systems\n",
            markup=False,
            highlight=False,
        )


ENERGY_COLUMNS = [
    "round",
    "benchmark",
    "submitter",
    "system_name",
    "accelerator_family",
    "accelerators",
    "time_to_train_min",
    "energy_kj",
    "energy_per_sample_j",
    "energy_per_accelerator_hour_kj",
    "compute_share",
]


@app.command()
def energy(
    paths: RoundPaths = None,
    round_names: RoundNames = None,
    benchmark: Benchmarks = None,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Energy to train from MLPerf power logs (official rule), per sample and accelerator-hour."""
    from gpuscale.analysis.energy import energy_table
    from gpuscale.mlperf.benchmarks import resolve_workloads

    tables = load_tables(paths, round_names)
    frame = energy_table(tables)
    if benchmark:
        frame = frame[frame["workload"].isin(resolve_workloads(benchmark))]
    if frame.empty:
        rounds = ", ".join(sorted(tables.scores["round"].unique()))
        err.print(
            f"no power logs in {rounds}: these rounds have no energy results",
            markup=False,
            highlight=False,
        )
        return
    print_frame(out, frame[ENERGY_COLUMNS], fmt, title="energy to train (official rule)")


@app.command()
def trends(
    paths: RoundPaths = None,
    round_names: RoundNames = None,
    benchmark: Benchmarks = None,
    family: Annotated[
        list[str] | None,
        typer.Option("--family", help="Only these accelerator families (repeatable)."),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """How each benchmark moved across rounds: best times, E' at scale, equilibrium."""
    from gpuscale.analysis.trends import TREND_COLUMNS
    from gpuscale.analysis.trends import trends as run_trends
    from gpuscale.mlperf.benchmarks import resolve_workloads

    tables = load_tables(paths, round_names)
    frame = run_trends(tables.scores, resolve_workloads(benchmark) if benchmark else None)
    if family:
        frame = frame[frame["accelerator_family"].isin(family)]
    if frame.empty:
        fail("no scored results for these options")
    print_frame(out, frame[list(TREND_COLUMNS)], fmt, title="trends across rounds")


@app.command()
def report(
    paths: RoundPaths = None,
    round_names: RoundNames = None,
    benchmark: Benchmarks = None,
    reference: Annotated[
        str, typer.Option("--reference", "-r", help="study, family or SUBMITTER/SYSTEM_ID.")
    ] = "study",
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the report.")] = Path(
        "gpuscale-report"
    ),
    open_browser: Annotated[bool, typer.Option("--open", help="Open it in a browser.")] = False,
    bench_file: Annotated[
        Path | None,
        typer.Option(
            "--bench", help="Add a 'your hardware' section from `gpuscale bench` results."
        ),
    ] = None,
    with_advice: Annotated[
        bool, typer.Option("--advise", help="With --bench: add predicted scaling (advise).")
    ] = False,
    interconnect: Annotated[str, typer.Option(help="Link preset for --advise.")] = "pcie-phb",
    max_devices: Annotated[int, typer.Option(help="Largest device count for --advise.")] = 8,
) -> None:
    """Write the HTML report and figures (default: bundled v4.1, the study's four workloads)."""
    from gpuscale.analysis import AnalysisOptions
    from gpuscale.analysis.metrics import ReferenceError
    from gpuscale.mlperf.benchmarks import resolve_workloads
    from gpuscale.report.html import build_report

    tables = load_tables(paths, round_names or (None if paths else ["v4.1"]))
    workloads = resolve_workloads(benchmark or ["study"])
    try:
        path = build_report(
            tables,
            workloads,
            out_dir,
            AnalysisOptions(reference=reference),
            bench=_read_bench(bench_file) if bench_file else None,
            advice_link=_preset_link(interconnect) if with_advice else None,
            max_devices=max_devices,
        )
    except ReferenceError as exc:
        fail(str(exc))
    out.print(f"report written to {path}", markup=False, highlight=False)
    if open_browser:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())


def _world_sizes(text: str | None) -> tuple[int, ...]:
    """``1,2,4`` -> (1, 2, 4); default: 1, 2, 4, ... up to every device (GPUs, else 2 CPU
    processes at most per core pair)."""
    if text:
        try:
            return tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
        except ValueError:
            fail(f"--nproc takes whole numbers like 1,2,4, not {text!r}")
    import os

    try:
        import torch

        devices = torch.cuda.device_count() or min(2, os.cpu_count() or 1)
    except ImportError:
        devices = 1
    sizes, n = [], 1
    while n < devices:
        sizes.append(n)
        n *= 2
    return (*sizes, devices)


@app.command()
def bench(
    out_file: Annotated[Path, typer.Option("--out", help="Results file (JSONL, appended).")] = Path(
        "results.jsonl"
    ),
    models: Annotated[
        str | None,
        typer.Option("--models", help="Comma-separated ladder models (see --list); default: all."),
    ] = None,
    max_params: Annotated[str | None, typer.Option(help="Largest model, e.g. 2M.")] = None,
    min_params: Annotated[str | None, typer.Option(help="Smallest model, e.g. 1M.")] = None,
    nproc: Annotated[
        str | None,
        typer.Option(help="World sizes, e.g. 1,2,4 (default: 1, 2, 4, ... all devices)."),
    ] = None,
    backend: Annotated[str, typer.Option(help="auto, nccl (GPUs) or gloo (CPU).")] = "auto",
    steps: Annotated[int, typer.Option(help="Timed steps per run.")] = 20,
    warmup: Annotated[int, typer.Option(help="Warm-up steps, not timed.")] = 3,
    batch: Annotated[
        int | None,
        typer.Option(help="Per-device batch (weak scaling); default 32 on GPU, 8 on CPU."),
    ] = None,
    strong: Annotated[
        bool,
        typer.Option("--strong", help="Strong scaling: fixed --global-batch split over devices."),
    ] = False,
    global_batch: Annotated[int, typer.Option(help="Global batch for --strong.")] = 64,
    precision: Annotated[str, typer.Option(help="fp32, bf16 or fp16 (autocast).")] = "fp32",
    bucket_mb: Annotated[float, typer.Option(help="DDP bucket size, MB.")] = 25.0,
    timeout: Annotated[float, typer.Option(help="Seconds a model may run.")] = 600.0,
    resume: Annotated[bool, typer.Option(help="Skip configurations already in --out.")] = False,
    threads: Annotated[
        int, typer.Option(help="CPU threads per process (default: cores / processes).")
    ] = 0,
    list_models: Annotated[bool, typer.Option("--list", help="List the ladder.")] = False,
) -> None:
    """Measure DDP training-step scaling on this machine (torchrun, one process per device)."""
    try:
        from gpuscale.bench.models import parse_size, select_models
    except ImportError:
        fail("the benchmark needs PyTorch: pip install 'gpuscale[bench]'")
    from rich.progress import Progress, SpinnerColumn, TimeElapsedColumn

    from gpuscale.bench.results import bench_table, read_results
    from gpuscale.bench.runner import SweepConfig, run_sweep

    try:
        chosen = select_models(
            models.split(",") if models else None,
            parse_size(max_params) if max_params else None,
            parse_size(min_params) if min_params else None,
        )
    except ValueError as exc:
        fail(str(exc))
    if list_models:
        import pandas as pd

        print_frame(
            out,
            pd.DataFrame([{"model": s.name, "family": s.family, "params": n} for s, n in chosen]),
            Format.table,
            title="model ladder",
        )
        return
    try:
        cfg = SweepConfig(
            models=tuple(s.name for s, _ in chosen),
            nproc=_world_sizes(nproc),
            out=out_file,
            backend=backend,
            steps=steps,
            warmup=warmup,
            batch=batch,
            scaling="strong" if strong else "weak",
            global_batch=global_batch,
            precision=precision,
            bucket_mb=bucket_mb,
            timeout_s=timeout,
            resume=resume,
            threads=threads,
        )
    except ValueError as exc:
        fail(str(exc))
    total = len(cfg.models) * len(cfg.nproc)
    with Progress(
        SpinnerColumn(),
        "[progress.description]{task.description}",
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as progress:
        task = progress.add_task(f"{total} configurations", total=total)

        def on_event(message: str) -> None:
            progress.update(task, description=message)
            if not message.startswith("started"):
                progress.advance(task)

        report = run_sweep(cfg, {s.name: n for s, n in chosen}, on_event=on_event)
    records, problems = read_results(out_file) if out_file.exists() else ([], [])
    for problem in problems:
        err.print(problem, markup=False, highlight=False)
    _print_bench(bench_table(records))
    err.print(
        f"{report.appended} rows appended to {out_file}, {report.skipped} skipped "
        f"(--resume), {len(report.failures)} failed",
        markup=False,
        highlight=False,
    )
    if report.interrupted:
        err.print("interrupted: the rows above are saved")
        raise typer.Exit(130)


@app.command()
def collectives(
    out_file: Annotated[Path, typer.Option("--out", help="Results file (JSONL, appended).")] = Path(
        "collectives.jsonl"
    ),
    nproc: Annotated[str | None, typer.Option(help="Processes (one per device).")] = None,
    backend: Annotated[str, typer.Option(help="auto, nccl or gloo.")] = "auto",
    max_bytes: Annotated[str, typer.Option(help="Largest message, e.g. 1G, 64M.")] = "1G",
    ops: Annotated[
        str, typer.Option(help="Comma-separated collectives.")
    ] = "all_reduce,all_gather,reduce_scatter",
    interconnect: Annotated[
        str | None,
        typer.Option(help="Link preset to judge against (default: from the detected topology)."),
    ] = None,
) -> None:
    """All-reduce / all-gather / reduce-scatter sweep, 8 B to --max-bytes, nccl-tests style."""
    import subprocess
    import sys

    from gpuscale.bench.collectives import judge_busbw, load_collectives
    from gpuscale.bench.models import parse_size

    world = max(_world_sizes(nproc))
    try:
        size = int(parse_size(re.sub(r"(?i)i?b$", "", max_bytes.strip()) or max_bytes))
    except ValueError as exc:
        fail(str(exc))
    size = 1 << (size.bit_length() - 1) if size & (size - 1) else size
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={world}",
        "-m",
        "gpuscale.bench.collectives",
        "--out",
        str(out_file),
        "--backend",
        backend,
        "--ops",
        ops,
        "--max-bytes",
        str(size),
    ]
    with err.status(f"sweeping {ops} on {world} processes up to {size:,} bytes"):
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        fail("the collectives run failed: " + " | ".join(tail))
    table, topology = load_collectives(out_file)
    if table.empty:
        fail(f"no successful measurement in {out_file}")
    latest = table[table["ranks"] == world]
    print_frame(
        out,
        latest[["op", "bytes", "time_us", "algbw_gbs", "busbw_gbs"]],
        Format.table,
        title=f"collectives on {world} ranks ({latest['backend'].iloc[0]})",
    )
    preset = interconnect or (
        (topology or {}).get("preset") if latest["device"].iloc[0] == "cuda" else None
    )
    for op, group in latest.groupby("op"):
        _, sentence = judge_busbw(float(group["busbw_gbs"].max()), preset)
        out.print(f"{op}: {sentence}", markup=False, highlight=False)


@app.command()
def topo(
    saved: Annotated[
        Path | None,
        typer.Option("--file", help="Parse a saved `nvidia-smi topo -m` output instead of NVML."),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """GPU-to-GPU links (NV#, PIX, PXB, PHB, NODE, SYS) and the NCCL/torch/CUDA versions."""
    import json
    import os

    from gpuscale.bench.topology import nvml_topology, parse_topo_matrix

    if saved:
        try:
            info = parse_topo_matrix(saved.read_text(errors="replace")).to_dict()
        except (OSError, ValueError) as exc:
            fail(f"{saved}: {exc}")
    else:
        info = nvml_topology() or {
            "error": "no NVML (no NVIDIA driver or GPU); use --file "
            "with a saved `nvidia-smi topo -m`"
        }
    try:
        import torch

        versions = {
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "nccl": ".".join(map(str, torch.cuda.nccl.version()))
            if torch.cuda.is_available()
            else None,
        }
    except ImportError:
        versions = {"torch": None}
    info["versions"] = versions
    info["nccl_env"] = {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}
    if fmt is Format.json or "matrix" not in info:
        out.file.write(json.dumps(info, indent=2) + "\n")
        return
    import pandas as pd

    frame = pd.DataFrame(info["matrix"], columns=info["gpus"])
    frame.insert(0, "", info["gpus"])
    print_frame(out, frame, fmt, title="GPU topology (nvidia-smi topo -m legend)")
    out.print(
        f"slowest link: {info['slowest_link']} -> interconnect preset {info['preset']}; "
        f"versions: {versions}",
        markup=False,
        highlight=False,
    )


def _preset_link(name: str):
    """The advice model's link for a preset name; a clean error for an unknown one."""
    from gpuscale.advise.model import Link
    from gpuscale.links import get_preset

    try:
        preset = get_preset(name)
    except KeyError as exc:
        fail(str(exc.args[0]))
    return Link(busbw_gbs=preset.busbw_gbs, latency_us=preset.latency_us, name=preset.name)


def _read_bench(path: Path):
    """The bench table of a results file; a clean error when it cannot be used."""
    from gpuscale.bench.results import ResultsError, bench_table, read_results

    try:
        records, problems = read_results(path)
    except ResultsError as exc:
        fail(str(exc))
    for problem in problems:
        err.print(f"skipped: {problem}", markup=False, highlight=False)
    if not records:
        fail(f"{path}: no gpuscale bench results in it")
    return bench_table(records)


def _bench_json(table) -> dict:
    from gpuscale.analysis.bench_scaling import bench_scaling, break_even_params
    from gpuscale.cli_output import jsonable

    scaling = bench_scaling(table)
    worlds = sorted(set(scaling["world_size"]) - {1}) if len(scaling) else []
    return jsonable(
        {
            "source": "bench",
            "runs": scaling.to_dict("records"),
            "failed": table[table["status"] != "ok"][
                ["model", "world_size", "status", "error"]
            ].to_dict("records"),
            "break_even_params": {str(w): break_even_params(scaling, w) for w in worlds},
        }
    )


def _print_bench(table, fmt: Format = Format.table) -> None:
    from gpuscale.analysis.bench_scaling import bench_scaling, break_even_params

    scaling = bench_scaling(table)
    if scaling.empty:
        err.print("no successful bench run to analyse")
        return
    columns = [
        "model",
        "params",
        "world_size",
        "step_ms_mean",
        "samples_per_s",
        "forward_ms",
        "backward_ms",
        "exposed_comm_ms",
        "optimizer_ms",
        "comm_fraction",
        "speedup",
        "efficiency",
    ]
    print_frame(out, scaling[columns], fmt, title="bench results (ok runs)")
    if fmt is not Format.table:
        return
    for world in sorted(set(scaling["world_size"]) - {1}):
        size = break_even_params(scaling, world)
        text = f"{size / 1e6:.2f}M parameters" if size else "not crossed by the models run"
        out.print(f"break-even on {world} devices: {text}", markup=False, highlight=False)


@app.command()
def advise(
    bench_file: Annotated[
        Path | None,
        typer.Option(
            "--bench", help="Calibrate from `gpuscale bench` results (compute at N = 1, overlap)."
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="Model of --bench to advise on (default: the largest with an N = 1 run)."
        ),
    ] = None,
    params: Annotated[
        str | None, typer.Option(help="Parameters, e.g. 7M (without --bench).")
    ] = None,
    step_ms: Annotated[
        float | None, typer.Option(help="Measured single-device step time, ms (without --bench).")
    ] = None,
    batch: Annotated[int, typer.Option(help="Per-device batch of that step.")] = 32,
    interconnect: Annotated[
        str | None,
        typer.Option(help="Link preset (see gpuscale/links.py), e.g. pcie-phb, nvlink4."),
    ] = None,
    busbw_gbs: Annotated[float | None, typer.Option(help="Bus bandwidth, GB/s.")] = None,
    latency_us: Annotated[float | None, typer.Option(help="Per-step latency, us.")] = None,
    collectives_file: Annotated[
        Path | None,
        typer.Option(
            "--collectives", help="Calibrate the link from `gpuscale collectives` results."
        ),
    ] = None,
    nodes: Annotated[int, typer.Option(help="Nodes (two-level network when > 1).")] = 1,
    gpus_per_node: Annotated[int, typer.Option(help="Devices per node.")] = 8,
    inter_node: Annotated[str, typer.Option(help="Link preset between nodes.")] = "ib-ndr400",
    max_devices: Annotated[
        int | None,
        typer.Option(help="Largest device count to predict (default: nodes x gpus-per-node)."),
    ] = None,
    overlap: Annotated[
        float | None,
        typer.Option(help="Share of the all-reduce backward hides (default: measured, else 0.5)."),
    ] = None,
    precision_bytes: Annotated[
        int, typer.Option("--grad-bytes", help="Bytes per gradient element (4 fp32, 2 bf16).")
    ] = 4,
    target_efficiency: Annotated[float, typer.Option(help="Efficiency to keep.")] = 0.7,
    price: Annotated[float, typer.Option(help="Price per device-hour.")] = 0.0,
    power_w: Annotated[
        float | None,
        typer.Option(help="Device power, W (default: NVML from --bench, else the TDP table)."),
    ] = None,
    samples: Annotated[float, typer.Option(help="Samples to train (time, cost, energy).")] = 1e7,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Predict step time on 1..N devices and recommend how many to use, and why."""
    import json

    from gpuscale.advise.calibrate import (
        CalibrationError,
        compute_from_bench,
        link_from_collectives,
        overlap_or_default,
    )
    from gpuscale.advise.model import Compute, Link
    from gpuscale.advise.recommend import DEFAULT_OVERLAP, TDP_W, AdviceInputs
    from gpuscale.advise.recommend import advise as run_advice
    from gpuscale.bench.models import parse_size
    from gpuscale.links import get_preset

    try:
        if collectives_file:
            link = link_from_collectives(collectives_file)
        elif busbw_gbs is not None:
            link = Link(busbw_gbs=busbw_gbs, latency_us=latency_us or 10.0, name="custom")
        else:
            preset = get_preset(interconnect or "pcie-phb")
            link = Link(
                busbw_gbs=preset.busbw_gbs,
                latency_us=latency_us or preset.latency_us,
                name=preset.name,
            )
        measured_power = None
        if bench_file:
            table = _read_bench(bench_file)
            ok1 = table[(table["status"] == "ok") & (table["world_size"] == 1)]
            chosen = model or (ok1.sort_values("params")["model"].iloc[-1] if len(ok1) else "")
            compute, n_params, measured_power = compute_from_bench(table, chosen)
            calibrated_overlap = overlap_or_default(table, chosen, link)
        else:
            if params is None or step_ms is None:
                fail("give --bench results.jsonl, or --params and --step-ms (and --batch)")
            n_params = parse_size(params)
            # Without a breakdown: backward ~ 2/3 of a step (2x the forward), optimizer small.
            compute = Compute(
                forward_ms=step_ms * 0.3,
                backward_ms=step_ms * 0.6,
                optimizer_ms=step_ms * 0.1,
                batch=batch,
            )
            calibrated_overlap = DEFAULT_OVERLAP
        inter = get_preset(inter_node) if nodes > 1 else None
        inputs = AdviceInputs(
            params=n_params,
            compute=compute,
            link=link,
            max_devices=max_devices or nodes * gpus_per_node,
            per_node=gpus_per_node if nodes > 1 else None,
            inter=Link(busbw_gbs=inter.busbw_gbs, latency_us=inter.latency_us, name=inter.name)
            if inter
            else None,
            bytes_per_grad=precision_bytes,
            overlap=overlap if overlap is not None else calibrated_overlap,
            target_efficiency=target_efficiency,
            price_per_device_hour=price,
            power_w=power_w or measured_power or TDP_W["H100"],
            samples=samples,
        )
        result = run_advice(inputs)
    except (ValueError, KeyError, CalibrationError) as exc:
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc))
    if fmt is Format.json:
        from gpuscale.cli_output import jsonable

        doc = {
            "inputs": {
                "params": n_params,
                "link": link.name,
                "busbw_gbs": link.busbw_gbs,
                "latency_us": link.latency_us,
                "overlap": inputs.overlap,
                "grad_bytes": inputs.grad_bytes,
                "power_w": inputs.power_w,
            },
            "recommendation": {
                "fastest": result.fastest,
                "efficient": result.efficient,
                "equilibrium": result.equilibrium,
                "break_even_params": result.break_even_params,
                "target_efficiency_params": result.target_params,
                "dominant_term": result.dominant_term,
            },
            "explanation": result.explanation,
            "predictions": result.predictions.to_dict("records"),
        }
        out.file.write(json.dumps(jsonable(doc), indent=2) + "\n")
        return
    print_frame(
        out,
        result.predictions,
        fmt,
        title=f"predicted DDP scaling, {n_params / 1e6:.3g}M parameters on {link.name} "
        f"(overlap {inputs.overlap:.2f})",
    )
    if fmt is Format.table:
        for line in result.explanation:
            out.print(f"- {line}", markup=False, highlight=False)
        eq = {k: "none" if v is None else v for k, v in result.equilibrium.items()}
        knee = "none (no bend in the curve)" if eq["knee"] == "none" else eq["knee"]
        out.print(
            f"- Equilibrium: knee {knee}, speed x "
            f"efficiency {eq['max_speed_x_efficiency']}, E' >= 0.8 x best "
            f"{eq['efficiency_threshold']}.",
            markup=False,
            highlight=False,
        )


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    finally:
        # The interpreter's final garbage collection walks every object of the scientific
        # stack (~0.3 s after a report) just before the memory is handed back anyway.
        gc.freeze()


if __name__ == "__main__":
    main()
