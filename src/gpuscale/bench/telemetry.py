"""What a bench worker records about its machine: software versions and settings, and
the GPU's utilisation and power sampled through NVML while a model runs."""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

import torch

from gpuscale.bench.background import Background


def machine_environment(device: torch.device) -> dict[str, Any]:
    """Versions, host, threads, NCCL settings and (on GPUs) the device and its links."""
    env: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "cuda": torch.version.cuda,
        "threads": torch.get_num_threads(),
        "nccl_env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")},
    }
    if device.type == "cuda":
        env["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
        env["device_name"] = torch.cuda.get_device_name(device)
        from gpuscale.bench.topology import nvml_topology

        env["topology"] = nvml_topology()
    return env


class NvmlSampler(Background):
    """GPU utilisation (%) and power (W) of one device, sampled every 50 ms in a thread."""

    def __init__(self, index: int) -> None:
        import pynvml

        super().__init__()
        pynvml.nvmlInit()
        self._nvml = pynvml
        self._handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        self._util: list[float] = []
        self._power: list[float] = []

    def run(self) -> None:
        while not self.stopping.is_set():
            self._util.append(self._nvml.nvmlDeviceGetUtilizationRates(self._handle).gpu)
            self._power.append(self._nvml.nvmlDeviceGetPowerUsage(self._handle) / 1000.0)
            self.stopping.wait(0.05)

    def summary(self) -> dict[str, float | int]:
        n = len(self._power)
        return {
            "gpu_util_pct_mean": sum(self._util) / max(n, 1),
            "power_w_mean": sum(self._power) / max(n, 1),
            "samples": n,
        }
