"""Peak dense tensor throughput per device and precision, for MFU.

MFU = achieved FLOP/s per device / peak FLOP/s of that device at the run's precision,
with achieved = training FLOPs per sample (forward + backward, counted by
``torch.utils.flop_counter``: matrix multiplications, convolutions and attention; not
element-wise work) x samples per second per device. Peaks are the vendors' **dense**
figures (half the "with sparsity" numbers the datasheets headline); ``fp32`` means
plain FP32 (CUDA cores) where TF32 is off, the TF32 tensor-core figure where it is on,
and under PyTorch's default (TF32 for cuDNN's convolutions, not for matmuls) the two
mixed by the convolutions' share ``s`` of the FLOPs: the time-weighted peak
``1 / (s / TF32 + (1 - s) / FP32)``.

Sources (TFLOP/s; retrieved 2026):
* H100 SXM5 / H200 SXM: NVIDIA H100 Tensor Core GPU datasheet and H200 datasheet:
  FP32 67, TF32 494.7, BF16/FP16 989.4.
* H100 PCIe: same datasheet: FP32 51, TF32 378, BF16/FP16 756.
* H100 NVL: same datasheet (per GPU): FP32 60, TF32 417.5, BF16/FP16 835.5.
* A100 (SXM4 and PCIe, 40/80 GB): NVIDIA A100 datasheet: FP32 19.5, TF32 156,
  BF16/FP16 312.
* B200: NVIDIA HGX B200 datasheet (eight GPUs, per GPU one eighth): FP32 75,
  TF32 1,100, BF16/FP16 2,250.
* L40S: NVIDIA L40S datasheet: FP32 91.6, TF32 183, BF16/FP16 362.
* RTX 4090: NVIDIA Ada Lovelace architecture whitepaper (FP32 accumulate): FP32 82.6,
  TF32 82.6, BF16/FP16 165.2.
* RTX 4070 Ti SUPER: NVIDIA's GeForce RTX 4070 family specifications (8,448 CUDA cores,
  2.61 GHz boost: FP32 = 8,448 x 2 x 2.61 GHz = 44.1), tensor figures at the RTX 4090's
  ratios in the Ada whitepaper (TF32 = FP32, BF16/FP16 with FP32 accumulate = 2 x FP32):
  FP32 44.1, TF32 44.1, BF16/FP16 88.2. The GPUs of the published single- vs dual-GPU study.
* RTX A5000: NVIDIA RTX A5000 datasheet: FP32 27.8, TF32 55.6, BF16/FP16 111.1.
* MI300X: AMD Instinct MI300X data sheet: FP32 163.4, TF32 653.7, BF16/FP16 1,307.4.
* A10: NVIDIA A10 Tensor Core GPU datasheet: FP32 31.2, TF32 62.5, BF16/FP16 125.
* A30: NVIDIA A30 Tensor Core GPU datasheet: FP32 10.3, TF32 82, BF16/FP16 165.
* A40: NVIDIA A40 datasheet: FP32 37.4, TF32 74.8, BF16/FP16 149.7.
* L4: NVIDIA L4 Tensor Core GPU datasheet, which gives the tensor figures with sparsity
  only (TF32 120, BF16/FP16 242); dense, half of them: FP32 30.3, TF32 60, BF16/FP16 121.
* L40: NVIDIA L40 datasheet: FP32 90.5, TF32 90.5, BF16/FP16 181.05.
* T4: NVIDIA T4 Tensor Core GPU datasheet: FP32 8.1, mixed precision (FP16 tensor cores,
  FP32 accumulate) 65. Turing has no TF32 and no BF16 tensor cores: TF32 = FP32 8.1,
  and the bf16/fp16 column holds the FP16 figure (bf16 runs slower there: a ceiling).
* V100: NVIDIA Tesla V100 datasheet: SXM2 FP32 15.7, tensor (FP16) 125; PCIe FP32 14,
  tensor 112; V100S PCIe (V100S datasheet) FP32 16.4, tensor 130. Volta has no TF32 and
  no BF16 tensor cores: TF32 = FP32, bf16/fp16 the FP16 tensor figure (a ceiling). A
  V100 named without PCIe is read as the SXM2, the higher of the two.

The catalogue's other accelerators (``hardware/accelerators.py``) have no peak here: Rubin,
GB300, B300, H800, H20, A800, A10G, P100, RTX Pro 6000, RTX A6000, RX 7900 XTX, the AMD
Instinct parts but MI300X, Gaudi, the TPUs, the IPUs and Ascend 910. A run on one has no
MFU, and an advice on one says that its rate could not be checked against the device's
peak, and why (``advice.limits.unchecked_note``), never silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuscale.hardware.model_numbers import matcher


@dataclass(frozen=True, slots=True)
class Peak:
    """Dense peak TFLOP/s of one device kind."""

    device: str
    fp32: float
    tf32: float
    bf16: float

    def tflops(self, precision: str, tf32: bool | str = False, conv_share: float = 0.0) -> float:
        """The peak a run's FLOPs meet: ``tf32`` a bool (on / off for every op) or a
        mode (``default``: convolutions, ``conv_share`` of the FLOPs, under TF32)."""
        if precision in ("bf16", "fp16"):
            return self.bf16
        if tf32 in (True, "on"):
            return self.tf32
        if tf32 == "default" and conv_share > 0:
            share = min(conv_share, 1.0)
            return 1 / (share / self.tf32 + (1 - share) / self.fp32)
        return self.fp32


# (pattern on the lower-cased device name, peak). First match wins.
PEAKS: tuple[tuple[str, Peak], ...] = (
    (r"h100.*nvl", Peak("H100 NVL", 60.0, 417.5, 835.5)),
    (r"h100.*pcie", Peak("H100 PCIe", 51.0, 378.0, 756.0)),
    (r"h100|h200|gh200", Peak("H100/H200 SXM", 67.0, 494.7, 989.4)),
    (r"a100", Peak("A100", 19.5, 156.0, 312.0)),
    (r"b200", Peak("B200", 75.0, 1100.0, 2250.0)),
    (r"l40s", Peak("L40S", 91.6, 183.0, 362.0)),
    (r"rtx 4090", Peak("RTX 4090", 82.6, 82.6, 165.2)),
    (r"rtx 4070 ti super", Peak("RTX 4070 Ti SUPER", 44.1, 44.1, 88.2)),
    (r"rtx a5000", Peak("RTX A5000", 27.8, 55.6, 111.1)),
    (r"mi300x", Peak("MI300X", 163.4, 653.7, 1307.4)),
    (r"\ba10\b", Peak("A10", 31.2, 62.5, 125.0)),  # not the A10G (AWS's, no datasheet)
    (r"\ba30\b", Peak("A30", 10.3, 82.0, 165.0)),
    (r"\ba40\b", Peak("A40", 37.4, 74.8, 149.7)),
    (r"\bl4\b", Peak("L4", 30.3, 60.0, 121.0)),
    (r"\bl40\b", Peak("L40", 90.5, 90.5, 181.05)),
    (r"\bt4\b", Peak("T4", 8.1, 8.1, 65.0)),
    (r"v100s", Peak("V100S PCIe", 16.4, 16.4, 130.0)),
    (r"v100.*pcie", Peak("V100 PCIe", 14.0, 14.0, 112.0)),
    (r"v100", Peak("V100 SXM2", 15.7, 15.7, 125.0)),
)

# Each pattern with whole model numbers ("h100" never inside "h1000").
_MATCHERS = tuple((matcher(pattern), peak) for pattern, peak in PEAKS)


def peak_for(device_name: str | None) -> Peak | None:
    """The peak of a device by its name (``torch.cuda.get_device_name``), None when the
    table does not know it (CPUs included: no MFU is claimed there)."""
    if not device_name:
        return None
    lowered = device_name.lower()
    return next((peak for found, peak in _MATCHERS if found(lowered)), None)


def peak_at(
    device_name: str | None, precision: str, tf32: bool | str, conv_share: float = 0.0
) -> float | None:
    """The peak TFLOP/s a run's FLOPs meet on ``device_name`` (``Peak.tflops``), None when
    the table does not know the device."""
    peak = peak_for(device_name)
    return None if peak is None else peak.tflops(precision, tf32, conv_share)


def mfu(
    achieved_tflops: float,
    device_name: str | None,
    precision: str,
    tf32: bool | str,
    conv_share: float = 0.0,
) -> float | None:
    """Model FLOP utilisation (see the module docstring), None without a known peak."""
    peak = peak_for(device_name)
    if peak is None or not achieved_tflops >= 0:
        return None
    return achieved_tflops / peak.tflops(precision, tf32, conv_share)
