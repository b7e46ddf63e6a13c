"""One bench configuration: validated once, sent as JSON, keyed once."""

from __future__ import annotations

import math

import pytest

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.row_keys import model_of_key, run_key
from gpuscale.quantities import parse_bytes, parse_size
from gpuscale.tables.requests import FieldError

from ..golden import Golden

VIEW = "bench/config_refusals"


def test_json_roundtrip_and_unknown_fields(golden: Golden) -> None:
    cfg = BenchConfig(steps=7, accum=2, strategy="fsdp", precision="bf16")
    assert BenchConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(ValueError, match="stpes") as refused:  # the field named
        BenchConfig.from_json('{"stpes": 3}')
    golden.check(VIEW, "an unknown field", str(refused.value))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"steps": 0},
        {"accum": 0},
        {"strategy": "zero3"},
        {"precision": "fp8"},
        {"strategy": "fsdp", "grad_comm": "bf16"},
        {"strategy": "fsdp", "bucket_mb": 50.0},
        {"bucket_mb": 0},
    ],
)
def test_invalid_configs_are_refused(kwargs) -> None:
    with pytest.raises(ValueError):
        BenchConfig(**kwargs)


def test_batches_and_keys() -> None:
    weak, strong = BenchConfig(), BenchConfig(scaling="strong", global_batch=64, accum=2)
    assert weak.per_device_batch(4, "cpu") == 8 and weak.per_device_batch(4, "cuda") == 32
    assert strong.per_device_batch(4, "cpu") == 8
    with pytest.raises(ValueError, match="does not split"):
        strong.per_device_batch(3, "cpu")
    key = run_key(weak, model="mlp-1m", accelerators=2, nnodes=1, device="cpu", threads=1)
    assert model_of_key(key) == "mlp-1m"
    assert key != run_key(weak, model="mlp-1m", accelerators=2, nnodes=1, device="cpu", threads=2)
    assert "threads=0" in run_key(
        weak, model="m", accelerators=2, nnodes=1, device="cuda", threads=5
    )
    assert weak.resolved_threads(2) == max(1, __import__("os").cpu_count() // 2)


@pytest.mark.parametrize(
    "text, value",
    [("2M", 2_000_000), ("250k", 250_000), ("1.5B", 1_500_000_000), ("7mparams", 7_000_000)],
)
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "lots", "-3M", "0"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


@pytest.mark.parametrize(
    "text, value",
    [
        ("8", 8),
        ("64K", 65536),
        ("64M", 64 << 20),
        ("1G", 1 << 30),
        ("1GiB", 1 << 30),
        ("64MiB", 64 << 20),
        ("1GB", 10**9),
        ("64MB", 64 * 10**6),
    ],
)
def test_parse_bytes_reads_binary_units_as_nccl_tests(text: str, value: int) -> None:
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["", "1X", "0", "-1M", "big"])
def test_parse_bytes_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_bytes(text)


def test_a_bad_value_says_what_it_must_be(golden: Golden) -> None:
    with pytest.raises(FieldError) as refused:
        BenchConfig(steps=0)
    assert [(f, v) for f, v, _ in refused.value.problems] == [("steps", 0)]
    assert "10,000,000" in refused.value.rule  # the bound, as a user types it
    golden.check(VIEW, "steps 0", str(refused.value))
    with pytest.raises(FieldError) as refused:
        BenchConfig(batch=-3, repeat=0)
    assert [(f, v) for f, v, _ in refused.value.problems] == [("batch", -3), ("repeat", 0)]
    golden.check(VIEW, "batch -3 and repeat 0: both said", str(refused.value))


@pytest.mark.parametrize(
    "field, value",
    [
        ("timeout_s", math.inf),  # used to pass, then overflow in the ranks' timedelta
        ("timeout_s", math.nan),
        ("bucket_mb", 1e-310),
        ("bucket_mb", math.inf),
        ("batch", 99999999999999999999999),
        ("steps", 10**12),
        ("memory_limit_bytes", 1000),
    ],
)
def test_a_number_out_of_range_is_refused_where_it_is_parsed(field: str, value: float) -> None:
    with pytest.raises(FieldError) as refused:
        BenchConfig(**{field: value})
    assert refused.value.field == field and f" {value!r}: " in str(refused.value)


def test_nccl_without_a_cuda_device_is_refused_before_anything_runs(
    tmp_path, monkeypatch: pytest.MonkeyPatch, golden: Golden
) -> None:
    """``--backend nccl`` on a host where torch sees no CUDA device: a clear error and
    exit 2, no file written (it used to run gloo and record backend=gloo); ``auto`` still
    picks gloo there."""
    torch = pytest.importorskip("torch")
    from typer.testing import CliRunner

    from gpuscale.bench.runner import SweepConfig
    from gpuscale.cli import app

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    out = tmp_path / "r.jsonl"
    args = ["bench", "--backend", "nccl", "--nproc", "1", "--models", "mlp-0.2m"]
    result = CliRunner().invoke(app, [*args, "--steps", "2", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "--backend gloo" in result.output  # the way out
    golden.check(VIEW, "nccl without CUDA", result.output)
    assert "Traceback" not in result.output and not out.exists()
    auto = SweepConfig(models=("mlp-0.2m",), nproc=(1,), out=out, bench=BenchConfig())
    assert auto.bench.resolved_backend("cpu") == "gloo"


def test_fp32_is_pytorchs_default_unless_told() -> None:
    """fp32 as PyTorch runs it (cuDNN's convolutions in TF32, matmuls not),
    --tf32 and --no-tf32 both explicit, and rows written before read as they ran."""
    from gpuscale.bench.config import tf32_flags, tf32_mode

    assert BenchConfig().tf32 == "default"
    assert tf32_flags(BenchConfig().tf32) == (False, True)
    assert tf32_flags(BenchConfig(tf32="on").tf32) == (True, True)
    assert tf32_flags(BenchConfig(tf32="off").tf32) == (False, False)
    assert (tf32_mode(True), tf32_mode(False), tf32_mode(None)) == ("on", "off", "default")
    assert BenchConfig.from_json(BenchConfig(tf32=False).to_json()).tf32 == "off"
    with pytest.raises(ValueError, match="tf32"):
        BenchConfig(tf32="sometimes")


@pytest.mark.slow  # a parameter count in a child (torch import) before the refusal
def test_more_cpu_processes_than_cores_are_refused_unless_asked(
    tmp_path, monkeypatch: pytest.MonkeyPatch, golden: Golden
) -> None:
    """More ranks than cores (``bench --nproc 16`` on 2 cores: 16 ranks, past 4 GB) are
    refused before anything runs, unless ``--oversubscribe``."""
    torch = pytest.importorskip("torch")
    from typer.testing import CliRunner

    from gpuscale.bench.runner import SweepConfig
    from gpuscale.cli import app

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    out = tmp_path / "r.jsonl"
    with pytest.raises(ValueError, match="4 processes") as refused:
        SweepConfig(models=("mlp-0.2m",), nproc=(1, 4), out=out)
    assert "2 core" in str(refused.value)
    SweepConfig(models=("mlp-0.2m",), nproc=(1, 2), out=out)  # as many as the cores
    SweepConfig(models=("mlp-0.2m",), nproc=(1, 4), out=out, oversubscribe=True)
    args = ["bench", "--nproc", "1,16", "--models", "mlp-0.2m", "--steps", "2", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "--oversubscribe" in result.output and "16 processes" in result.output
    golden.check(VIEW, "16 processes on 2 cores", result.output)
    assert "Traceback" not in result.output and not out.exists()


def test_grad_comm_under_fsdp_is_refused_as_its_option() -> None:
    """``--grad-comm bf16`` is DDP's compression hook: with FSDP it is refused as that
    field (the CLI names ``--grad-comm``, not the Python name), never a bare ValueError."""
    with pytest.raises(FieldError) as refused:
        BenchConfig(strategy="fsdp", grad_comm="bf16")
    assert [(f, v) for f, v, _ in refused.value.problems] == [("grad_comm", "bf16")]


def test_bucket_size_under_fsdp_is_refused_as_its_option(tmp_path) -> None:
    """``--bucket-mb`` sizes DDP's gradient buckets: with FSDP, which has none, it was taken
    and ignored (the rows said bucket_mb 50, FSDP ran as at 25); now refused as
    ``--grad-comm`` is, in one line, before anything runs. DDP takes it; FSDP its default."""
    from typer.testing import CliRunner

    from gpuscale.cli import app

    with pytest.raises(FieldError) as refused:
        BenchConfig(strategy="fsdp", bucket_mb=50.0)
    assert [(f, v) for f, v, _ in refused.value.problems] == [("bucket_mb", 50.0)]
    assert BenchConfig(strategy="ddp", bucket_mb=50.0).ddp_bucket_mb == 50.0
    assert BenchConfig(strategy="fsdp").ddp_bucket_mb == 25.0
    # DDP's default typed is a bucket typed all the same: refused with FSDP
    with pytest.raises(FieldError) as typed:
        BenchConfig(strategy="fsdp", bucket_mb=25.0)
    assert [(f, v) for f, v, _ in typed.value.problems] == [("bucket_mb", 25.0)]
    out = tmp_path / "rows.jsonl"
    args = ["bench", "--backend", "gloo", "--strategy", "fsdp", "--bucket-mb", "50"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        "error: --bucket-mb 50: applies to DDP's gradient buckets; with --strategy fsdp FSDP "
        "communicates per sharded module (an all-gather and a reduce-scatter each), in no "
        "buckets"
    ]
    assert not out.exists()


def test_an_untyped_bucket_keys_and_records_runs_as_ddps_default() -> None:
    """Not typed, the bucket is None on the config and DDP's 25 MiB in a row and its key,
    under either strategy, as before a typed bucket was told apart (--resume still matches
    the rows of earlier sweeps)."""
    from gpuscale.bench.row_keys import fields_of_key, resolved_config, run_key

    run = dict(model="mlp-0.2m", accelerators=2, nnodes=1, device="cpu", threads=1)
    for strategy in ("ddp", "fsdp"):
        config = BenchConfig(strategy=strategy)
        assert config.bucket_mb is None
        assert resolved_config(config, family="mlp", params=1, **run)["bucket_mb"] == 25.0
        assert fields_of_key(run_key(config, **run))["bucket_mb"] == "25.0"
    typed = BenchConfig(bucket_mb=50.0)
    assert fields_of_key(run_key(typed, **run))["bucket_mb"] == "50.0"
