"""Energy and power a bench run records: NVML on the GPU it uses (a fake NVML here),
RAPL package energy on a CPU (a fake powercap tree)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuscale.bench.telemetry import GpuMeter, nvml_handle, open_cpu_meter

from ..fake_nvml import FakeNvml, hgx_h100


def test_gpu_meter_reads_the_energy_counter_of_the_right_device() -> None:
    system = hgx_h100()
    nvml = FakeNvml(system)
    nvml.nvmlInit()
    target = system.gpus[3]
    handle = nvml_handle(nvml, target.uuid, None)
    with GpuMeter(nvml, handle) as meter:
        time.sleep(0.12)
    summary = meter.summary()
    # the fake counter advances 350 J per read: start and end reads differ by 350 J
    assert summary["energy_j"] == pytest.approx(350.0)
    assert summary["power_source"] == "energy counter"
    assert summary["gpu_util_pct_mean"] == 97
    assert target.joules == 700.0 and system.gpus[0].joules == 0.0  # only GPU 3 was read


def test_gpu_meter_samples_power_without_a_counter() -> None:
    system = hgx_h100()
    for gpu in system.gpus:
        gpu.energy = False
    nvml = FakeNvml(system)
    nvml.nvmlInit()
    with GpuMeter(nvml, nvml_handle(nvml, None, system.gpus[0].bus_id)) as meter:
        time.sleep(0.12)
    summary = meter.summary()
    assert summary["power_w_mean"] == pytest.approx(300.0)
    assert summary["power_source"] == "sampled power"


def rapl_tree(root: Path, packages: dict[str, tuple[int, int]]) -> None:
    """``intel-rapl:N`` package domains with (energy_uj, max_energy_range_uj), and a
    core sub-domain that must not be counted twice."""
    for name, (energy, wrap) in packages.items():
        folder = root / f"intel-rapl:{name}"
        folder.mkdir(parents=True)
        (folder / "name").write_text(f"package-{name}\n")
        (folder / "energy_uj").write_text(f"{energy}\n")
        (folder / "max_energy_range_uj").write_text(f"{wrap}\n")
        core = root / f"intel-rapl:{name}:0"
        core.mkdir()
        (core / "name").write_text("core\n")
        (core / "energy_uj").write_text("5\n")


def test_rapl_package_energy_with_wraparound(tmp_path: Path, monkeypatch) -> None:
    rapl_tree(tmp_path, {"0": (1_000_000, 10_000_000), "1": (9_900_000, 10_000_000)})
    clock = iter([100.0, 102.0])  # the phase lasts 2 s
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    meter = open_cpu_meter(ranks_on_host=2, root=tmp_path)
    assert meter is not None and len(meter.domains) == 2  # packages only, not "core"
    with meter:
        # package 0 draws 3 J; package 1 draws 1.1 J and wraps past its range
        (tmp_path / "intel-rapl:0" / "energy_uj").write_text("4000000\n")
        (tmp_path / "intel-rapl:1" / "energy_uj").write_text("1000000\n")
    summary = meter.summary()
    assert summary["energy_j"] == pytest.approx(4.1)
    # 4.1 J over 2 s is 2.05 W for the host, shared by its 2 ranks: 1.025 W each
    assert summary["power_w_mean"] == pytest.approx(1.025)
    assert summary["power_source"] == "RAPL package energy"


def test_no_readable_rapl_claims_nothing(tmp_path: Path) -> None:
    assert open_cpu_meter(1, root=tmp_path / "missing") is None
    rapl_tree(tmp_path, {"0": (1, 10)})
    (tmp_path / "intel-rapl:0" / "energy_uj").unlink()  # root-only on patched kernels
    assert open_cpu_meter(1, root=tmp_path) is None


def test_no_nvml_means_no_torch_for_the_topology(monkeypatch) -> None:
    """Where NVML does not start (no driver: this machine), ``topology_here`` gives no
    topology without asking torch for the visible GPUs (seconds to import); a saved
    topology file never asks it either."""
    from gpuscale.bench import telemetry

    def asked() -> None:
        raise AssertionError("visible_uuids called")

    monkeypatch.setattr(telemetry, "visible_uuids", asked)
    monkeypatch.setattr(telemetry, "nvml_starts", lambda: False)
    assert telemetry.topology_here(None, None) is None
    monkeypatch.setattr(telemetry, "nvml_starts", lambda: True)
    with pytest.raises(AssertionError, match="visible_uuids called"):
        telemetry.topology_here(None, None)  # NVML starts: the visible GPUs are asked
