"""Eight GPUs by numbers, checked against published runs the priors were not fitted to.

    python benchmarks/eight_gpus_by_numbers.py

NVIDIA's DeepLearningExamples publish ResNet-50 v1.5 training throughput on one GPU and on
eight of a DGX (PyTorch, `PyTorch/Classification/ConvNets/resnet50v1.5/README.md`, the
pytorch-21.03 container; per-GPU batches from `ConvNets/configs.yml`). Each case is typed
as a user with one GPU's figure would: `--params 25.6M --flops-per-sample 12.3G` (4.1
GFLOPs forward x 3), `--step-ms` = batch / one GPU's images per second, the per-device
batch kept (the tables keep it), the DGX's NVLink preset. Printed: the published speedup
at 8, the advice's with its 80% interval, with the priors of `gpuscale/advice/model/priors.py`
and without them (DDP's work and the wait at 0, +/-35% as before), and the linear 8x as
the simple baseline; then the mean absolute error and the coverage of each. Nothing in
gpuscale is fitted to these tables.
"""

from __future__ import annotations

from dataclasses import replace

import gpuscale
from gpuscale.advice.model.priors import StepError
from gpuscale.advice.search.decide import search

# (system, precision, per-GPU batch, images/s on 1 GPU, on 8, link preset, device)
CASES = (
    ("DGX A100 80GB", "TF32", 256, 938, 7248, "nvlink3", "A100 SXM4"),
    ("DGX A100 80GB", "AMP", 256, 2470, 16621, "nvlink3", "A100 SXM4"),
    ("DGX-1 16GB", "FP32", 112, 367, 2855, "nvlink2", None),
    ("DGX-1 16GB", "AMP", 256, 1200, 8322, "nvlink2", None),
    ("DGX-1 32GB", "FP32", 112, 356, 2766, "nvlink2", None),
    ("DGX-1 32GB", "AMP", 256, 1156, 8056, "nvlink2", None),
)


def _at_eight(advice) -> tuple[float, float, float]:
    row = advice.table.set_index("accelerators").loc[8]
    return float(row["speedup"]), float(row["speedup_low"]), float(row["speedup_high"])


def main() -> None:
    rows = []
    for system, precision, batch, one, eight, link, device in CASES:
        advice = gpuscale.advise(
            params=25.6e6,
            flops_per_sample=12.3e9,
            step_ms=batch / one * 1e3,
            batch=batch,
            link=link,
            device_name=device,
            max_devices=8,
            scaling="weak",
        )
        inputs = advice.calibration
        bare = replace(inputs.model.compute, ddp_ms_per_mparam=0.0, jitter_ms=(), jitter_ref_ms=0.0)
        before = search(
            inputs.at({"model": {"compute": bare, "prior_range": (), "error": StepError()}})
        )
        rows.append((system, precision, eight / one, _at_eight(advice), _at_eight(before)))
    print(f"{'system':15} {'prec':5} {'published':>9} {'with priors':>22} {'without':>22}")
    for system, precision, truth, (p, lo, hi), (q, qlo, qhi) in rows:
        print(
            f"{system:15} {precision:5} {truth:9.2f} {p:6.2f} [{lo:5.2f}, {hi:5.2f}]  "
            f"{q:6.2f} [{qlo:5.2f}, {qhi:5.2f}]"
        )
    for label, index in (("with priors", 3), ("without", 4)):
        errors = [abs(r[index][0] / r[2] - 1) for r in rows]
        covered = sum(r[index][1] <= r[2] <= r[index][2] for r in rows)
        widths = [r[index][2] - r[index][1] for r in rows]
        print(
            f"{label}: mean |error| {sum(errors) / len(errors):.1%}, covered {covered}/"
            f"{len(rows)}, mean interval width {sum(widths) / len(widths):.2f}x"
        )
    linear = [abs(8 / r[2] - 1) for r in rows]
    print(f"linear 8x: mean |error| {sum(linear) / len(linear):.1%}")


if __name__ == "__main__":
    main()
