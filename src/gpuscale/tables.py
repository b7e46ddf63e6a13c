"""The data model: every table gpuscale produces, its columns, statuses and codes.

Producers (``gpuscale.mlperf`` reading rounds, ``gpuscale.bench`` measuring) write these
tables; consumers (``gpuscale.analysis``, ``gpuscale.advise``, ``gpuscale.report``) read
them and never import a producer. Nothing here reads or writes files.

Column names are a stable, documented schema (README, "Output schema"); units are in the
names (``_min``, ``_ms``, ``_s``, ``_kj``, ``_gbs``). The device count is ``accelerators``
in every table: MLPerf's accelerators, and for ``gpuscale bench`` the processes of a run,
one per device (GPUs, or CPU processes under gloo).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas only when tables are built: the CLI starts without it
    import pandas as pd


class Code(str, Enum):
    """A string enum: members compare equal to (and are stored in tables as) their value."""

    def __str__(self) -> str:
        return str(self.value)


# --- MLPerf rounds -------------------------------------------------------------------

SYSTEMS_COLUMNS: tuple[str, ...] = (
    "round",
    "org",
    "submitter",
    "system_id",
    "system_name",
    "division",
    "availability",
    "nodes",
    "accelerators_per_node",
    "accelerators",
    "accelerator_model",
    "accelerator_family",
    "accelerator_host_interconnect",
    "accelerator_interconnect",
    "accelerator_interconnect_topology",
    "host_networking",
    "host_networking_topology",
    "host_processor_model",
    "framework",
    "cooling",
    "official_row",
)

RUNS_COLUMNS: tuple[str, ...] = (
    "round",
    "org",
    "submitter",
    "system_id",
    "benchmark",
    "workload",
    "run_file",
    "run_start_ms",
    "run_stop_ms",
    "time_to_train_min",
    "status",
    "counted",
    "kept",
    "problem",
    "log_benchmark",
    "log_division",
    "global_batch_size",
    "samples_to_converge",
    "mean_logged_throughput",
    "final_quality",
    "seed",
    "mllog_lines",
    "parse_errors",
    "compute_energy_kj",
    "interconnect_energy_kj",
    "energy_kj",
)

# The columns of ``scores`` that are copied from the system's row of ``systems``.
SCORES_SYSTEM_COLUMNS: tuple[str, ...] = (
    "submitter",
    "system_name",
    "division",
    "availability",
    "accelerator_family",
    "accelerator_model",
    "nodes",
    "accelerators",
)

SCORES_COLUMNS: tuple[str, ...] = (
    "round",
    "org",
    "submitter",
    "system_id",
    "system_name",
    "division",
    "availability",
    "accelerator_family",
    "accelerator_model",
    "nodes",
    "accelerators",
    "benchmark",
    "workload",
    "runs",
    "runs_converged",
    "runs_required",
    "scaling_factor",
    "time_to_train_min",
    "score_reason",
    "kept_runs",
    "global_batch_size",
    "samples_to_converge",
    "source",
    "energy_kj",
)

PROBLEMS_COLUMNS: tuple[str, ...] = ("round", "path", "kind", "message")


class RunStatus(Code):
    """The ``status`` of a row of ``runs``, most specific first (a run that stopped with
    another logged status, e.g. ``aborted``, keeps that word)."""

    SUCCESS = "success"
    ABORTED = "aborted"
    NOT_CONVERGED = "not converged"
    MISSING_RUN_STOP = "missing run_stop"
    MISSING_RUN_START = "missing run_start"
    PARSE_ERROR = "parse error"
    NONCOMPLIANT = "noncompliant"
    NOT_TEXT = "not text"
    UNREADABLE = "unreadable"


class ProblemKind(Code):
    """The ``kind`` of a row of ``problems`` (besides the run statuses, which a run that
    does not count reports under its own status)."""

    MISSING_SYSTEM = "missing system"
    UNKNOWN_BENCHMARK = "unknown benchmark"
    EMPTY_BENCHMARK = "empty benchmark"
    BAD_SYSTEM = "bad system description"
    MISSING_FIELD = "missing field"
    BAD_FIELD = "bad field"
    BAD_SCALING = "bad scaling.json"
    UNSAFE_PATH = "unsafe path"
    NOT_A_FILE = "not a file"
    CORRUPT_ARCHIVE = "corrupt archive"
    UNREADABLE = "unreadable"
    NO_SCORE = "no score"
    POWER_LOG = "power log"
    WORKER = "worker"
    IMPOSSIBLE_VALUE = "impossible value"


@dataclass(frozen=True, slots=True)
class RoundTables:
    """The four tables of one or more rounds (columns: ``*_COLUMNS`` above)."""

    systems: pd.DataFrame
    runs: pd.DataFrame
    scores: pd.DataFrame
    problems: pd.DataFrame

    NAMES = ("systems", "runs", "scores", "problems")

    @staticmethod
    def concat(parts: Iterable[RoundTables]) -> RoundTables:
        import pandas as pd

        parts = list(parts)
        if not parts:
            return RoundTables.empty()
        return RoundTables(
            *(
                pd.concat([getattr(p, name) for p in parts], ignore_index=True)
                for name in RoundTables.NAMES
            )
        )

    @staticmethod
    def empty() -> RoundTables:
        import pandas as pd

        return RoundTables(
            *(
                pd.DataFrame(columns=list(columns))
                for columns in (SYSTEMS_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS, PROBLEMS_COLUMNS)
            )
        )


# --- Workloads: facts about each MLPerf Training benchmark ----------------------------


class Unit(Code):
    """What a benchmark's convergence is counted in (the RCP checker's unit)."""

    SAMPLES = "samples"
    EPOCHS = "epochs"


@dataclass(frozen=True, kw_only=True, slots=True)
class Workload:
    """What stays true of a benchmark across rounds.

    ``name`` is the cross-round workload name (``retinanet`` for the ``ssd`` folder of
    v4.x); ``convergence_unit`` what samples to converge count; ``progress_key`` the
    evaluation metadata member the RCP checker reads the progress from
    (``mlperf_logging.rcp_checker.read_submission_file``: ``samples_count`` for the LLM
    benchmarks, else ``epoch_num``, which BERT fills with samples; Stable Diffusion reads
    the step of the first passing FID/CLIP pair).
    """

    name: str
    display_name: str
    convergence_unit: Unit = Unit.EPOCHS
    progress_key: str = "epoch_num"


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(name="bert", display_name="BERT", convergence_unit=Unit.SAMPLES),
        Workload(
            name="llama2_70b_lora",
            display_name="Llama2 70B LoRA",
            convergence_unit=Unit.SAMPLES,
            progress_key="samples_count",
        ),
        Workload(name="retinanet", display_name="RetinaNet"),
        Workload(
            name="stable_diffusion",
            display_name="Stable Diffusion",
            convergence_unit=Unit.SAMPLES,
            progress_key="samples_count",
        ),
        Workload(name="dlrm_dcnv2", display_name="DLRM DCNv2"),
        Workload(name="dlrm", display_name="DLRM"),
        Workload(name="rgat", display_name="R-GAT"),
        Workload(name="gpt3", display_name="GPT-3 175B"),
        Workload(
            name="llama31_405b",
            display_name="Llama 3.1 405B",
            convergence_unit=Unit.SAMPLES,
            progress_key="samples_count",
        ),
        Workload(
            name="llama31_8b",
            display_name="Llama 3.1 8B",
            convergence_unit=Unit.SAMPLES,
            progress_key="samples_count",
        ),
        Workload(
            name="flux1",
            display_name="Flux.1",
            convergence_unit=Unit.SAMPLES,
            progress_key="samples_count",
        ),
        Workload(
            name="gpt_oss_20b",
            display_name="GPT-OSS 20B",
            convergence_unit=Unit.SAMPLES,
            progress_key="samples_count",
        ),
        Workload(
            name="deepseekv3_671b",
            display_name="DeepSeek-V3 671B",
            convergence_unit=Unit.SAMPLES,
            progress_key="samples_count",
        ),
        Workload(
            name="qwen35_397b_grpo",
            display_name="Qwen3.5 397B GRPO",
            convergence_unit=Unit.SAMPLES,
            progress_key="samples_count",
        ),
        Workload(
            name="dlrmv4",
            display_name="DLRMv4",
            convergence_unit=Unit.SAMPLES,
            progress_key="samples_count",
        ),
        Workload(name="resnet", display_name="ResNet-50"),
        Workload(name="unet3d", display_name="3D U-Net"),
        Workload(name="maskrcnn", display_name="Mask R-CNN"),
        Workload(name="rnnt", display_name="RNN-T"),
        Workload(name="minigo", display_name="MiniGo"),
        Workload(name="gnmt", display_name="GNMT"),
        Workload(name="transformer", display_name="Transformer"),
        Workload(name="ncf", display_name="NCF"),
    )
}

# Result folders renamed between rounds: the old name is the same workload.
RENAMED: dict[str, str] = {"ssd": "retinanet", "gnn": "rgat"}
# Folder names the official summarizer reads as another benchmark's name.
FOLDER_ALIASES: dict[str, str] = {"mask": "maskrcnn"}

# The study's four workloads (arXiv 2509.03263).
STUDY_WORKLOADS: tuple[str, ...] = ("bert", "llama2_70b_lora", "retinanet", "stable_diffusion")


def benchmark_of_folder(folder: str) -> str:
    """The benchmark name the official summarizer uses for a results folder name."""
    return FOLDER_ALIASES.get(folder, folder)


def workload_of(benchmark: str) -> str:
    """The cross-round workload name of a benchmark folder (``ssd`` -> ``retinanet``)."""
    name = benchmark_of_folder(benchmark)
    return RENAMED.get(name, name)


def workload_facts(benchmark: str) -> Workload | None:
    """The facts of a benchmark folder's workload, None for one gpuscale does not know."""
    return WORKLOADS.get(workload_of(benchmark))


def counts_samples(benchmark: str) -> bool:
    """Whether the benchmark's convergence is counted in samples (not epochs)."""
    facts = workload_facts(benchmark)
    return facts is not None and facts.convergence_unit is Unit.SAMPLES


def display_name(workload: str) -> str:
    """A readable name for a workload (``llama2_70b_lora`` -> ``Llama2 70B LoRA``)."""
    facts = workload_facts(workload)
    return facts.display_name if facts else workload


def round_key(name: str) -> tuple[int, ...]:
    """Sort key of a round name: ``v4.1`` -> (4, 1), so v10.0 sorts after v9.1."""
    return tuple(int(x) for x in name.lstrip("v").split(".") if x.isdigit())


# --- Analysis outputs ----------------------------------------------------------------

# One row per scored system of a benchmark (``gpuscale.analysis.scaling_table``).
SCALING_COLUMNS: tuple[str, ...] = (
    "round",
    "benchmark",
    "workload",
    "org",
    "submitter",
    "system_id",
    "system_name",
    "division",
    "availability",
    "accelerator_family",
    "nodes",
    "accelerators",
    "time_to_train_min",
    "runs_converged",
    "scaling_factor",
    "global_batch_size",
    "samples_to_converge",
    "reference_rule",
    "reference_org",
    "reference_submitter",
    "reference_system_id",
    "reference_accelerators",
    "reference_time_to_train_min",
    "speedup",
    "efficiency",
    "normalized_efficiency",
    "gpu_hours",
    "samples_per_s_per_accelerator",
)

# Columns ``analyze`` adds to a scaling table.
CLUSTER_COLUMN = "cluster"
PARETO_COLUMN = "pareto"
CI_COLUMNS: tuple[str, ...] = (
    "time_to_train_min_ci_low",
    "time_to_train_min_ci_high",
    "speedup_ci_low",
    "speedup_ci_high",
    "normalized_efficiency_ci_low",
    "normalized_efficiency_ci_high",
)
DECOMPOSITION_COLUMNS: tuple[str, ...] = (
    "throughput_samples_per_s",
    "throughput_factor",
    "convergence_factor",
    "throughput_efficiency",
)
# The K-means features (each standardised), in the order clustering uses them.
CLUSTER_FEATURES: tuple[str, ...] = (
    "log10_accelerators",
    "log10_time_to_train_min",
    "normalized_efficiency",
)


# One row per (workload, accelerator family, round) (``gpuscale.analysis.trends``).
TREND_COLUMNS = (
    "workload",
    "accelerator_family",
    "round",
    "benchmark_folder",
    "systems",
    "common_accelerators",
    "best_time_at_common_min",
    "largest_accelerators",
    "best_time_at_largest_min",
    "normalized_efficiency_at_largest",
    "equilibrium_accelerators",
    "note",
)


class Criterion(Code):
    """An equilibrium criterion (``gpuscale.analysis.equilibrium``)."""

    KNEE = "knee"
    SPEED_X_EFFICIENCY = "speed x efficiency"
    EFFICIENCY_THRESHOLD = "efficiency threshold"

    def label(self, threshold: float) -> str:
        """How people read it: ``E' >= 0.8 x best`` for the threshold criterion."""
        if self is Criterion.EFFICIENCY_THRESHOLD:
            return f"E' >= {threshold:g} x best"
        return self.value


# --- Bench: the user's own hardware --------------------------------------------------


class BenchStatus(Code):
    """The ``status`` of a bench row."""

    OK = "ok"
    OOM = "oom"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    ERROR = "error"


# How a bench run was configured (``gpuscale.bench.config.BenchConfig`` and the launch).
BENCH_CONFIG_COLUMNS: tuple[str, ...] = (
    "model",
    "family",
    "params",
    "accelerators",
    "nnodes",
    "backend",
    "device",
    "device_name",
    "scaling",
    "batch_per_device",
    "global_batch",
    "accum",
    "precision",
    "tf32",
    "strategy",
    "bucket_mb",
    "grad_comm",
    "steps",
    "threads",
)
# Runs that differ only in the device count (one group per model and configuration):
# speedup and DDP's own overhead are read within a group.
BENCH_GROUP_COLUMNS: tuple[str, ...] = (
    "model",
    "backend",
    "device",
    "scaling",
    "accum",
    "precision",
    "tf32",
    "strategy",
    "bucket_mb",
    "grad_comm",
    "steps",
    "threads",
)
# Milliseconds per optimizer step (the slowest rank's), and throughput.
BENCH_TIMING_COLUMNS: tuple[str, ...] = (
    "step_ms_mean",
    "step_ms_p50",
    "step_ms_p95",
    "nosync_step_ms_mean",
    "samples_per_s",
    "forward_ms",
    "backward_ms",
    "optimizer_ms",
    "sync_overhead_ms",  # synchronised minus no-sync step
    "comm_ms",  # communication in flight per step (DDP comm hook), N > 1
    "ddp_overhead_ms",  # the group's N = 1 sync overhead: DDP's own work, no communication
    "exposed_comm_ms",  # sync overhead less DDP's own: communication backward did not hide
    "overlap",  # 1 - exposed / comm
    "comm_fraction",  # exposed / step
)
BENCH_COLUMNS: tuple[str, ...] = (
    "source",
    "key",
    "status",
    *BENCH_CONFIG_COLUMNS,
    *BENCH_TIMING_COLUMNS,
    "buckets",
    "largest_bucket_bytes",
    "flops_per_sample",  # forward + backward, torch.utils.flop_counter
    "achieved_tflops_per_device",
    "peak_tflops",
    "mfu",
    "grad_bytes_per_step",
    "allreduce_bytes_per_step",
    "peak_memory_bytes",
    "gpu_util_pct_mean",
    "power_w_mean",
    "energy_j_per_step",
    "other_load_share",
    "steal_share",
    "hostname",
    "error",
    "flags",  # why a number cannot be trusted ("; "-separated), empty when none
    "flagged",
    "config_group",
    "nosync_step_ms_samples",
    "noise_batch_small",
    "noise_batch_big",
    "noise_local_sq",
    "noise_global_sq",
)
