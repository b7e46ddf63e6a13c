"""The sweep: for each world size, launch torchrun with the worker; nothing is ever lost.

Each launch runs in a private folder (``gpuscale.sources.processes.run_folder``); the
worker notes there each model it starts and each row it measured, and this process
appends the rows to the results file as they come (it is the only writer: nothing is
appended once it has ended, however it ended). A model that started and did not finish
in ``timeout_s`` is stopped and recorded as ``timeout``; a launch that dies mid-model
gets one row for that model, with the cause the failing rank raised (``oom`` when any
rank ran out of memory); a launch that fails before its first model starts gets a row
for each model it was to run, with the launch's cause; one that ends between two models
fails neither (a warning says so). Models that never started after a failure run in a
fresh launch. Ctrl-C stops the launch and keeps every row already
written.

Several nodes: run the same ``gpuscale bench`` on every node with ``--nnodes``,
``--node-rank`` and ``--rdzv-endpoint`` (torchrun's c10d rendezvous); ``--nproc`` is then
the processes per node. The node holding global rank 0 appends the rows (keep the results
file on a shared filesystem); the runner of node 0 records failures.
"""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.cores import cores_said, usable_cores
from gpuscale.bench.launch import Events, launcher_env, row_of, start, torchrun_command, watch
from gpuscale.bench.launch_events import cause, failure_row, log_tail
from gpuscale.bench.results import ResultsError, resume_file
from gpuscale.bench.results_file import append_result, check_writable
from gpuscale.bench.resume_said import Again, again_note, planned_keys, resume_sentence, run_fields
from gpuscale.bench.row_keys import model_of_key, resolved_config, run_key
from gpuscale.bench.sweep_request import check_endpoint, check_nodes, check_threads
from gpuscale.bench.sweep_said import done_line, kept_note
from gpuscale.quantities import counted
from gpuscale.sources.processes import remove_stale_runs, run_folder
from gpuscale.sources.signals import note_on_stop
from gpuscale.tables import BenchStatus
from gpuscale.tables.requests import FieldError, comma_items, given_twice

__all__ = [
    "SweepConfig",
    "SweepReport",
    "check_devices",
    "device_kind",
    "local_devices",
    "run_sweep",
    "torchrun_command",
]

MAX_NPROC = 4096  # processes per node
# Before the first model starts, a minute more for torchrun to come up (and every node to join)
LAUNCH_GRACE_S = 60


@dataclass(frozen=True, kw_only=True, slots=True)
class SweepConfig:
    """What to run: ``models`` at each of ``nproc`` processes per node, on ``nnodes``
    nodes, every run configured by ``bench``; ``oversubscribe`` allows more CPU
    processes than the host has cores."""

    models: tuple[str, ...]
    nproc: tuple[int, ...]
    out: Path
    bench: BenchConfig = field(default_factory=BenchConfig)
    resume: bool = False
    nnodes: int = 1
    node_rank: int = 0
    rdzv_endpoint: str | None = None
    # the rendezvous' run id, its world size and model count appended per launch: nodes
    # of another job that reach this endpoint join no rendezvous of this one
    rdzv_id: str = "gpuscale"
    oversubscribe: bool = False
    worker: str = "gpuscale.bench.worker"  # the module torchrun runs (tests inject faults)

    def __post_init__(self) -> None:
        if not self.nproc or min(self.nproc) < 1 or max(self.nproc) > MAX_NPROC:
            raise ValueError(f"--nproc needs world sizes from 1 to {MAX_NPROC:,}, e.g. 1,2")
        check_nodes(self.nnodes, self.node_rank)
        check_endpoint(self.rdzv_endpoint)
        check_rendezvous(self.nnodes, self.rdzv_endpoint)
        for per_node in self.nproc:  # strong scaling: the global batch splits everywhere
            try:
                self.bench.per_device_batch(per_node * self.nnodes, "cpu")
            except ValueError as exc:
                raise ValueError(
                    f"{exc}: give --global-batch a multiple of every world size x --accum"
                ) from None
        device = check_devices(
            self.bench.backend, max(self.nproc), oversubscribe=self.oversubscribe
        )
        check_threads(self.bench.threads, max(self.nproc), device, self.oversubscribe)


def check_rendezvous(nnodes: int, endpoint: str | None) -> None:
    """Several nodes meet at node 0's address (torchrun's c10d rendezvous): without one,
    a ``ValueError`` (checked before any model is built: a refusal is quick)."""
    if nnodes > 1 and not endpoint:
        raise ValueError("several nodes need --rdzv-endpoint HOST:PORT (node 0's address)")


def check_devices(
    backend: str,
    nproc: int,
    *,
    oversubscribe: bool,
    measured: str = "the scaling",
    holds: str = "its own copy of the model",
) -> str:
    """The device kind (``cuda``/``cpu``) ``nproc`` processes per node of ``backend`` run
    on here, after what every launching command refuses (ValueError, one line): nccl
    without a CUDA device, more processes than CUDA devices visible, and more CPU
    processes than cores unless ``oversubscribe`` (they would measure the contention, not
    ``measured``; each holds ``holds``)."""
    device = device_kind(backend)
    if backend == "nccl" and device != "cuda":
        raise ValueError(
            "--backend nccl needs CUDA devices; none is visible: use --backend gloo or auto"
        )
    if device == "cuda" and nproc > (visible := cuda_devices()):
        raise ValueError(
            f"{counted(visible, 'CUDA device')} visible; --nproc {nproc} needs {nproc} (one per "
            f"process on each node): give --nproc up to {visible}, or time CPU processes "
            "with --backend gloo"
        )
    cores = usable_cores()
    if device == "cpu" and nproc > cores and not oversubscribe:
        raise ValueError(
            f"--nproc {nproc} runs {nproc} processes on {cores_said(cores)}: each "
            "process is a device, so they would share cores and measure the contention, not "
            f"{measured} (and each holds {holds}); give at most {cores}, or add "
            "--oversubscribe to run them anyway"
        )
    return device


@dataclass
class SweepReport:
    """What happened on this node: rows it appended (``measured`` of them ``ok`` runs;
    0 on a node that is not the writer), configurations skipped by --resume, failures;
    ``sweep_id``: the id every row of this sweep carries (its summary reads those)."""

    sweep_id: str = ""
    appended: int = 0
    measured: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    exit_warnings: list[str] = field(default_factory=list)
    interrupted: bool = False


Progress = Callable[[str], None]


def device_kind(backend: str) -> str:
    """``cuda`` where torch sees a GPU (and the backend is not gloo), else ``cpu``."""
    if backend == "gloo":
        return "cpu"
    try:
        import torch  # torch: only for a command that runs devices

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def cuda_devices() -> int:
    """The CUDA devices this process sees (``CUDA_VISIBLE_DEVICES`` counts); 0 without torch."""
    try:
        import torch  # torch: only for a command that runs devices
    except ImportError:
        return 0
    return torch.cuda.device_count()


def local_devices() -> int:
    """The processes one node runs by default: its GPUs, else up to two CPU processes
    (one without torch)."""
    if importlib.util.find_spec("torch") is None:
        return 1
    return cuda_devices() or min(2, usable_cores())


def world_sizes(text: str | None) -> tuple[int, ...]:
    """``1,2,4`` -> (1, 2, 4); None: 1, 2, 4, ... up to every local device (GPUs, else two
    CPU processes). Text that is no list of positive whole numbers, or names a count
    twice (``1,2,2``, ``1,01``), is ``nproc``'s :class:`FieldError`."""
    if text:
        parts = comma_items("nproc", text, "1,2,4", "count")
        if not all(re.fullmatch(r"[0-9]{1,9}", part) for part in parts):
            raise FieldError("nproc", text, "must be whole numbers like 1,2,4")
        if twice := given_twice([int(part) for part in parts], "count"):
            raise FieldError("nproc", text, twice)
        sizes = tuple(sorted(int(part) for part in parts))
        if not sizes or min(sizes) < 1:
            raise FieldError("nproc", text, "must be positive whole numbers like 1,2,4")
        return sizes
    devices, sizes, n = local_devices(), [], 1
    while n < devices:
        sizes.append(n)
        n *= 2
    return (*sizes, devices)


def _failure_key(cfg: SweepConfig, model: str, world: int, params: int | None) -> tuple:
    """The key and row config of ``model`` at ``world`` devices as this node would run
    it, for a row written here (a model that could not be built or launched)."""
    from gpuscale.bench.models import family_of  # lazy: torch, only with a model to name

    common = run_fields(cfg, world, device_kind(cfg.bench.backend))
    config = resolved_config(
        cfg.bench, model=model, family=family_of(model), params=params, **common
    )
    return run_key(cfg.bench, model=model, **common), config


def record_broken(cfg: SweepConfig, broken: dict[str, object], sweep_id: str = "") -> list[str]:
    """One row per model that could not even be built, with its status (a
    :class:`~gpuscale.bench.config.ModelError`'s, else ``error``) and cause, keyed at the
    sweep's smallest world size (``--resume`` tries it again) and marked with
    ``sweep_id``; node 0 writes them."""
    lines = []
    for name, why in broken.items():
        status = str(getattr(why, "status", BenchStatus.ERROR))
        key, config = _failure_key(cfg, name, min(cfg.nproc) * cfg.nnodes, None)
        if cfg.node_rank == 0:
            row = failure_row(key, config, status, str(why))
            append_result(cfg.out, {**row, "sweep_id": sweep_id} if sweep_id else row)
        lines.append(f"{name}: {status}: {why}")
    return lines


def _check_resolves(endpoint: str | None) -> None:
    """``ValueError`` where the rendezvous host has no address: torchrun would wait for
    it without end (its own timeout is not the launch's)."""
    found = check_endpoint(endpoint)
    if found is None:
        return
    try:
        socket.getaddrinfo(found[0], found[1])
    except (OSError, UnicodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ValueError(f"--rdzv-endpoint {endpoint}: cannot resolve {found[0]} ({why})") from None


def run_sweep(
    cfg: SweepConfig,
    sizes: dict[str, int],
    *,
    on_event: Progress | None = None,
    broken: dict[str, object] | None = None,
) -> SweepReport:
    """Run every (model, world size): all of them, or with ``cfg.resume`` those not yet
    measured (an ``ok`` row with the same key, i.e. the same configuration) in ``cfg.out``.

    ``sizes`` maps each model to its parameter count; ``broken`` maps models that could
    not be built to why (a message or a ``ModelError``; recorded once as rows, the others
    run; ``cfg.models`` may then be empty). ``on_event`` gets one line per event
    (started, done, failed), for a progress display. Raises ``ResultsError`` when the
    results file cannot be written (before anything runs, or when a row cannot be
    appended: the launch is stopped, the rows before it kept) and ``ValueError`` when
    there is nothing to run or record.
    """
    if not cfg.models and not broken:
        raise ValueError("no model selected (check --models / --max-params)")
    _check_resolves(cfg.rdzv_endpoint)
    check_writable(cfg.out)
    remove_stale_runs()  # what a killed earlier sweep left
    report = SweepReport(sweep_id=uuid.uuid4().hex[:12])
    note_on_stop(lambda: kept_note(report.appended, cfg.out))  # Ctrl-C: what is kept
    notify = on_event or (lambda _msg: None)
    for line in record_broken(cfg, broken or {}, report.sweep_id):
        report.failures.append(line)
        report.appended += cfg.node_rank == 0
        notify(f"failed {line}")
    skip, again, weak = set(), {}, {}
    if cfg.resume:  # what it keeps, measures again (and why) and misses, said first
        skip, again, weak = resume_file(cfg.out)
        notify(
            resume_sentence(
                planned_keys(cfg, sizes, device_kind(cfg.bench.backend)), skip, again, weak
            )
        )
    launch = _Launch(cfg, sizes, skip, notify, report.sweep_id, report, again)
    for per_node in cfg.nproc:
        todo: list[str] | None = list(cfg.models)
        while todo:
            todo = launch.run(per_node, todo)
            if todo is None:
                report.interrupted = True
                return report
    return report


@dataclass
class _Launch:
    """Launches of one sweep, each recorded into ``report``."""

    cfg: SweepConfig
    sizes: dict[str, int]
    skip: set[str]
    notify: Progress
    sweep_id: str
    report: SweepReport
    again: Again  # the runs --resume measures again, and why

    def run(self, per_node: int, todo: list[str]) -> list[str] | None:
        """One launch of ``todo`` at ``per_node`` processes per node, recorded; the
        models still to run (the launch stopped at a failure), or None when interrupted."""
        world = per_node * self.cfg.nnodes
        with run_folder("bench") as folder:
            events = Events(folder / "progress")
            status = self._launch(per_node, todo, folder, events)
            found = events.seen
            started_any = any(e == "started" for e, _, _ in found)
            row_status, message = cause(folder, log_tail(folder / "log"), status, started_any)
        wrote = [k for e, k, _ in found if e == "row"]
        skipped = [k for e, k, _ in found if e == "skipped"]
        started = {k: extra for e, k, extra in found if e == "started"}
        self.report.skipped += len(skipped)
        if status == "interrupted":
            return None
        # a node that did not write learns what finished from the next start
        order = list(started)
        finished = [k for e, k, _ in found if e == "finished"]
        done = {model_of_key(k) for k in (*skipped, *wrote, *finished, *order[:-1])}
        if status == "ok":
            return []
        if all(m in done for m in todo):  # every model measured: the launch failed leaving
            line = f"x{world} ended badly after every model finished ({row_status}: {message})"
            self._warn(f"{line}; its rows are kept")
            return []
        # Only a model that started and did not finish failed; the rest never ran.
        failed = next((k for k in reversed(order) if model_of_key(k) not in done), None)
        if failed is None and order:  # between two models: none failed, the rest run again
            line = f"x{world} ended between two models ({row_status}: {message})"
            self._warn(f"{line}; the models not yet run start in a new launch")
            return [m for m in todo if m not in done]
        if failed is None:  # before its first model: each model it was to run, this cause
            pending = [m for m in todo if m not in done]
            for model in pending:
                key, config = _failure_key(self.cfg, model, world, self.sizes.get(model))
                self._failed(key, config, model, world, row_status, message)
            return []
        model = model_of_key(failed)
        config = json.loads(started[failed]) if started[failed] else {"model": model}
        self._failed(failed, config, model, world, row_status, message)
        return [m for m in todo if m not in done and m != model]

    def _warn(self, line: str) -> None:
        """A launch that ended badly where no model failed: said, and kept in the report."""
        self.report.exit_warnings.append(line)
        self.notify(f"warning: {line}")

    def _failed(self, key: str, config: dict, model: str, world: int, status: str, why: str):
        if self.cfg.node_rank == 0:
            row = failure_row(key, config, status, why)
            append_result(self.cfg.out, {**row, "sweep_id": self.sweep_id})
            self.report.appended += 1
        self.report.failures.append(f"{model} on {world}: {status}: {why}")
        self.notify(f"failed {model} x{world}: {status}: {why}")

    def _on_event(self, world: int) -> Callable[[str, str, str], None]:
        def on_event(event: str, key: str, extra: str) -> None:
            if event == "sweep" and key:  # the id the rows carry: node 0's runner's
                self.sweep_id = self.report.sweep_id = key
            elif event == "started":
                self.notify(
                    f"started {model_of_key(key)} x{world}{again_note(self.again.get(key))}"
                )
            elif event == "row" and (record := row_of(extra)) is not None:
                try:  # this process writes every row
                    append_result(self.cfg.out, record)
                except ResultsError as exc:  # the launch stops; what was written stays
                    raise ResultsError(
                        f"{exc} ({self.report.appended} appended by this sweep); the sweep "
                        "was stopped"
                    ) from None
                self.report.appended += 1
                self.report.measured += 1
                self.notify(done_line(record))

        return on_event

    def _launch(self, per_node: int, models: list[str], folder: Path, events: Events) -> str:
        """Run one torchrun launch; return its status (``ok``, ``exit N``, ``timeout``,
        ``interrupted``)."""
        cfg = self.cfg
        world = per_node * cfg.nnodes
        largest = max(cfg.nproc)
        params = {m: self.sizes[m] for m in models if m in self.sizes}
        command = [
            *torchrun_command(
                per_node,
                cfg.worker,
                nnodes=cfg.nnodes,
                node_rank=cfg.node_rank,
                rdzv_endpoint=cfg.rdzv_endpoint,
                rdzv_id=f"{cfg.rdzv_id}-{world}-{len(models)}",
            ),
            *("--models", ",".join(models), "--params", json.dumps(params)),
            *("--config", cfg.bench.to_json(), "--threads", str(cfg.bench.threads)),
            *("--largest-local", str(largest), "--sweep-id", self.sweep_id),
            *("--node-rank", str(cfg.node_rank)),
            *("--progress", str(events.path), "--skip-keys", ";".join(sorted(self.skip))),
        ]
        extra = {}
        if device_kind(cfg.bench.backend) == "cpu":  # the worker sets its own once it knows
            extra["OMP_NUM_THREADS"] = str(cfg.bench.resolved_threads(largest))  # the host
        proc = start(command, folder / "log", launcher_env(folder, extra))
        timeout = cfg.bench.timeout_s * cfg.bench.repeat

        def limit_s(started: bool) -> float:
            return timeout if started else timeout + LAUNCH_GRACE_S

        return watch(proc, events, self._on_event(world), limit_s)
