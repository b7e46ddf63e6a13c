"""One set of defaults for ``gpuscale collectives`` and its torchrun worker."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gpuscale.bench.collectives_config import BUS_FACTOR, OPS, CollectivesConfig
from gpuscale.cli import app


def test_the_worker_and_the_cli_run_the_same_default_operations(monkeypatch) -> None:
    """The worker's argparse defaults build the same config as the CLI's (they once
    disagreed: every collective in the worker, all-reduce in the CLI)."""
    pytest.importorskip("torch")
    import gpuscale.bench.collectives as worker

    seen = {}

    class Stop(Exception):
        pass

    def fake_pick(backend):  # stop right after the flags are read
        raise Stop

    monkeypatch.setattr(worker, "pick_device", fake_pick)
    original = worker.CollectivesConfig

    def record(**kwargs):
        seen["config"] = original(**kwargs)
        return seen["config"]

    monkeypatch.setattr(worker, "CollectivesConfig", record)
    with pytest.raises(Stop):
        worker.main(["--out", "x.jsonl"])
    assert seen["config"] == CollectivesConfig()
    assert seen["config"].ops == ("all_reduce",)


def test_the_worker_reads_sizes_as_the_cli_does(monkeypatch, capsys) -> None:
    """Across nodes the worker runs alone under torchrun (docs/interconnect.md): its
    ``--max-bytes 4G`` is 4 GiB, as the command's (it was refused: invalid int value)."""
    pytest.importorskip("torch")
    import gpuscale.bench.collectives as worker

    seen = {}

    class Stop(Exception):
        pass

    def fake_pick(backend):
        raise Stop

    def record(**kwargs):
        seen["config"] = CollectivesConfig(**kwargs)
        return seen["config"]

    monkeypatch.setattr(worker, "pick_device", fake_pick)
    monkeypatch.setattr(worker, "CollectivesConfig", record)
    with pytest.raises(Stop):
        worker.main(["--out", "x.jsonl", "--min-bytes", "1K", "--max-bytes", "4G"])
    assert (seen["config"].min_bytes, seen["config"].max_bytes) == (1024, 4 << 30)
    with pytest.raises(Stop):
        worker.main(["--out", "x.jsonl", "--max-bytes", "1048576"])  # as the command passes it
    assert seen["config"].max_bytes == 1 << 20
    with pytest.raises(SystemExit) as refused:
        worker.main(["--out", "x.jsonl", "--max-bytes", "4Q"])
    assert refused.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.startswith("python -m gpuscale.bench.collectives: error: argument --max-bytes:")
    assert "4Q" in said and "Traceback" not in said


def test_a_sweep_as_worker_flags() -> None:
    config = CollectivesConfig(ops=("all_reduce", "broadcast"), max_bytes=None, check=False)
    args = config.worker_args("cpu", "s1")
    flags = dict(zip(args[::2], args[1::2], strict=False))
    assert flags["--ops"] == "all_reduce,broadcast"
    assert flags["--max-bytes"] == str(64 << 20)  # CPU default: 64 MiB
    assert "--no-check" in args and "--load" not in args
    assert config.largest("cuda") == 1 << 30  # nccl-tests' -e 1G


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ops": ("all_reduce", "allreduse")}, "unknown collective 'allreduse'"),
        ({"ops": ("all_reduce", "allreduce")}, "all_reduce given twice"),
        ({"min_bytes": 4096, "max_bytes": 1024}, "min_bytes=4096 (4 KiB) is above max_bytes=1024"),
        # the smallest not typed: named as the default, never as a value the user gave
        ({"max_bytes": 3}, "the default min_bytes= (8 B) is above max_bytes=3 (3 B)"),
        ({"iters": 0}, "invalid iters"),
        ({"gap_ms": 1e12}, "invalid gap_ms 1000000000000: must be a number of ms from 0 to 60,000"),
        ({"gap_ms": float("inf")}, "invalid gap_ms inf"),
        ({"backend": "mpi"}, "invalid backend mpi: must be one of auto, nccl, gloo"),
    ],
)
def test_bad_settings_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        CollectivesConfig(**kwargs)


def test_every_collective_has_its_bus_factor() -> None:
    assert tuple(BUS_FACTOR) == OPS


def test_cli_names_a_bad_setting_before_launching(tmp_path) -> None:
    pytest.importorskip("torch")
    result = CliRunner().invoke(
        app,
        [
            "collectives",
            "--out",
            str(tmp_path / "c.jsonl"),
            "--min-bytes",
            "1M",
            "--max-bytes",
            "1K",
        ],
    )
    assert result.exit_code == 2
    # both options named, as typed to the byte, and each way out
    said = "--min-bytes 1048576 (1 MiB) is above --max-bytes 1024 (1 KiB)"
    assert said in result.output, result.output
    assert "a smaller --min-bytes or a larger --max-bytes" in result.output
    assert not (tmp_path / "c.jsonl").exists()


def test_a_largest_below_the_default_smallest_names_that_default(tmp_path) -> None:
    """`collectives --max-bytes 3` said "--min-bytes 8 (8 B) is above --max-bytes 3",
    naming a --min-bytes the user never typed."""
    pytest.importorskip("torch")
    out = tmp_path / "c.jsonl"
    result = CliRunner().invoke(app, ["collectives", "--max-bytes", "3", "--out", str(out)])
    assert result.exit_code == 2
    said = "error: the default --min-bytes (8 B) is above --max-bytes 3 (3 B)"
    assert result.output.startswith(said), result.output
    assert not out.exists()


def test_a_smallest_message_above_the_devices_default_largest_names_both(tmp_path) -> None:
    """`collectives --min-bytes 128M` on CPU (largest 64 MiB by default) said "the smallest
    message (134217728 B) is above the largest (67108864 B)": no option, no way out."""
    pytest.importorskip("torch")
    out = tmp_path / "c.jsonl"
    args = ["collectives", "--backend", "gloo", "--nproc", "2", "--min-bytes", "128M"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 2
    said = f"--min-bytes {128 << 20} (128 MiB) is above the default --max-bytes (64 MiB)"
    assert said in result.output, result.output
    assert not out.exists()
