"""What one run is in the results file: its row's ``config`` (every field the value the
run used) and its key, both computed from the sweep's :class:`BenchConfig` and the run's
own fields, in one place: the key is what ``--resume`` compares, so the worker that
writes a row, the runner that records a failure and the resume plan that skips a run
agree. Nothing here imports torch."""

from __future__ import annotations

from dataclasses import asdict

from gpuscale.bench.config import BenchConfig

# What identifies a run besides the model: fields that change what is measured.
_KEY_FIELDS = (
    "scaling",
    "precision",
    "tf32",
    "strategy",
    "accum",
    "bucket_mb",
    "grad_comm",
    "steps",
)


def resolved_config(
    config: BenchConfig,
    *,
    model: str,
    family: str,
    params: int | None,
    accelerators: int,
    nnodes: int,
    device: str,
    threads: int,
    backend: str | None = None,
) -> dict[str, object]:
    """The ``config`` of a results row: every field the value the run used (threads,
    per-device and global batch, backend resolved), never an option's placeholder."""
    sized = _batch_and_threads(config, accelerators, device, threads)
    return {
        **asdict(config),
        "bucket_mb": config.ddp_bucket_mb,  # DDP's default where none was typed
        "model": model,
        "family": family,
        "params": params,
        "accelerators": accelerators,
        "nnodes": nnodes,
        "backend": backend or config.resolved_backend(device),
        "device": device,
        "tf32": config.tf32 if device == "cuda" else "default",  # what ran: no TF32 on CPUs
        "batch": sized["batch_per_device"],
        **sized,
    }


def _batch_and_threads(
    config: BenchConfig, accelerators: int, device: str, threads: int
) -> dict[str, int]:
    """The per-device and global batch of a run, and its threads (0 on GPUs: none set)."""
    batch = config.per_device_batch(accelerators, device)
    return {
        "batch_per_device": batch,
        "global_batch": batch * accelerators * config.accum,
        "threads": threads if device == "cpu" else 0,
    }


def run_key(
    config: BenchConfig,
    *,
    model: str,
    accelerators: int,
    nnodes: int,
    device: str,
    threads: int,
    params: int | None = None,
) -> str:
    """The key of one run in the results file (``--resume`` skips keys it finds). A model
    of the user's (``FILE.py:FACTORY``, ``PKG.MODULE:FACTORY``) is keyed with its parameter
    count too: one spec names another model in another folder, or once its file is
    edited, and --resume would have skipped it as measured. One of the same count there
    is still the same key: the spec is keyed as given, not by its file's path."""
    parts: dict[str, object] = {
        "model": model,
        **({"params": params} if ":" in model and params else {}),
        "accelerators": accelerators,
        "nnodes": nnodes,
        "backend": config.resolved_backend(device),
        "device": device,
        **_batch_and_threads(config, accelerators, device, threads),
        **{name: getattr(config, name) for name in _KEY_FIELDS},
        "bucket_mb": config.ddp_bucket_mb,  # keyed as the row records it
    }
    if config.repeat > 1:  # a median of several runs is another measurement
        parts["repeat"] = config.repeat
    return "|".join(f"{k}={v}" for k, v in parts.items())


def model_of_key(key: str) -> str:
    """The model a key names (its first field)."""
    return key.split("|", 1)[0].split("=", 1)[1]


def fields_of_key(key: str) -> dict[str, str]:
    """The fields a key names, as text (``model`` may itself hold ``=`` or ``:``)."""
    out = {}
    for part in key.split("|"):
        name, _, value = part.partition("=")
        out[name] = value
    return out
