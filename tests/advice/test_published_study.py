"""A known answer: the published single- vs dual-GPU study, entered as a user would.

The study (A. H. Javid, "Multi-GPU Training: When Hardware Topology Matters", 2025, and its
technical appendix; the measured study of docs/context.md) trained on two RTX 4070 Ti
SUPER GPUs behind a PCIe host bridge (``nvidia-smi topo -m``: PHB) with TensorFlow's
MirroredStrategy, which splits the global batch over the GPUs: strong scaling. It found
small models slower on two GPUs and large ones faster. This is a test on its published
figures, not a fit to them: nothing in gpuscale was tuned on them.

From the publication:
* the GPU (RTX 4070 Ti SUPER) and the topology (PHB between the two GPUs);
* the 6.9M-parameter MLP's single-GPU step: 18.6 ms at batch 8, 30.5 ms at batch 64 (its
  table "Large Model (6.9M params)", column Time/Step); measured on two GPUs 0.78x at
  batch 8 (0.78-0.90x over its batches);
* the 258K-parameter MLP's single-GPU throughput: 1,234 samples/s at batch 8 and 8,234 at
  batch 64 (its appendix table), i.e. 8 / 1,234 s and 64 / 8,234 s per step; measured
  0.73-0.86x on two GPUs;
* the parameter counts of ResNet-152 (60M) and ViT-Large (307M), measured 1.60x and 1.71x
  on two GPUs.

Not from the publication (it gives training hours, not steps, for the large models):
the large models' FLOPs per sample (torchvision's model docs: ResNet-152 11.51 GFLOPS and
ViT-L/16 61.55 GFLOPS per image forward, counted as multiply-adds: x 2 x 3 for forward and
backward), their per-device batches (64 and 32, what fits a 16 GB card) and their step
times, derived from those FLOPs at a stated share of the GPU's FP32 peak (44.1 TFLOP/s):
40% for the known answer, 20-60% to show the answer does not hang on that share.

Asked of two GPUs, the advice must give at most 1x for the small models given two step
times (the fixed per-step cost decides; from one step time, a gain that is not sure) and
more than 1.3x for the large ones, each with its deciding term
named. (It does not reach the study's 0.73-0.86x for the small models: that loss is
TensorFlow's own per-step cost of two replicas, which nothing entered here measures; the
advice says so as an assumption with the command that measures it.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

from ..golden import Golden

runner = CliRunner()

VIEW = "advice/published_study"
# the sentence that names the step term the decision read (its id, as in -f json)
TERM_NAMED = r"The {} term (decides|is the largest)"
GPU = "RTX 4070 Ti SUPER"  # the study's GPUs
PHB = (  # the study's `nvidia-smi topo -m`: the two GPUs behind the host bridge
    "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tPHB\t0-15\t0\nGPU1\tPHB\t X \t0-15\t0\n"
)
FP32_PEAK = 44.1e12  # RTX 4070 Ti SUPER (the device catalogue)

# (name, parameters, [(batch, step ms), ...]) as published
SMALL = (
    ("6.9M MLP", "6.9M", [(8, 18.6), (64, 30.5)]),
    ("258K MLP", "258K", [(8, 1e3 * 8 / 1234), (64, 1e3 * 64 / 8234)]),
)
# (name, parameters as published, FLOPs per sample (torchvision), per-device batch)
LARGE = (
    ("ResNet-152", 60e6, 3 * 2 * 11.51e9, 64),
    ("ViT-L/16", 307e6, 3 * 2 * 61.55e9, 32),
)


def advise(tmp_path: Path, *args: str) -> dict:
    """``gpuscale advise ... --device-name GPU --topo topo.txt -f json`` as typed."""
    topo = tmp_path / "topo.txt"
    topo.write_text(PHB)
    typed = [*args, "--device-name", GPU, "--topo", str(topo), "-f", "json"]
    result = runner.invoke(app, ["advise", *typed])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def two_devices(doc: dict) -> dict:
    return next(p for p in doc["predictions"] if p["accelerators"] == 2)


@pytest.mark.parametrize(("name", "params", "steps"), SMALL, ids=[s[0] for s in SMALL])
def test_small_models_gain_nothing_from_a_second_gpu(
    tmp_path: Path, name, params, steps, golden: Golden
) -> None:
    typed = ["--params", params]
    for batch, ms in steps:  # the first pair is the configuration asked about
        typed += ["--step-ms", f"{ms:.4g}", "--batch", str(batch)]
    doc = advise(tmp_path, *typed)
    two = two_devices(doc)
    assert two["speedup"] <= 1.0, (name, two["speedup"])
    assert doc["recommendation"]["accelerators"] == 1
    assert doc["decision"]["limit"]["dominant_term"] == "fixed"  # the deciding term, named
    fixed = doc["scaling"]["fixed_cost"]
    assert fixed["source"] == "entered"
    # the intercept of the published steps is most of the step at batch 8
    assert fixed["ms"] > 0.9 * steps[0][1]
    text = "\n".join(doc["explanation"])
    assert re.search(TERM_NAMED.format("fixed"), text)
    (strong,) = [s for s in doc["explanation"] if s.startswith("Strong scaling")]
    assert "global batch 8 " in strong
    golden.check(VIEW, f"{name}: strong scaling", strong)
    # what the numbers leave out is said, with the command that would measure it
    assumed = {a["term"]: a for a in doc["assumptions"]}
    assert assumed["DDP's own work"]["source"] == "prior"  # measured elsewhere, cited
    assert "gpuscale bench" in assumed["DDP's own work"]["measure"]
    assert assumed["Input pipeline"]["source"] == "assumed"


@pytest.mark.parametrize(("name", "params", "steps"), SMALL, ids=[s[0] for s in SMALL])
def test_one_step_time_alone_is_not_a_confident_gain(tmp_path: Path, name, params, steps) -> None:
    """The issue's command, one step time: the fixed cost is assumed (the prior's 1-20 ms,
    no more than the step; its FLOPs not given, 6 x parameters bounds no fixed cost: issue
    60), so two devices' gain is not sure (the 80% interval reaches below 1x), one device
    is advised at every end of the fixed cost's range, and the fixed term is named."""
    batch, ms = steps[0]
    doc = advise(tmp_path, "--params", params, "--step-ms", f"{ms:.4g}", "--batch", str(batch))
    assert doc["recommendation"]["accelerators"] == 1
    assert two_devices(doc)["speedup_low"] <= 1.0
    fixed = doc["scaling"]["fixed_cost"]
    assert fixed["source"] == "assumed" and fixed["high_ms"] <= ms
    ends = [r for r in doc["decision"]["readings"] if r["term"] == "fixed_cost"]
    assert {r["end"] for r in ends} == {"low", "high"} and {r["accelerators"] for r in ends} == {1}
    assert doc["decision"]["limit"]["dominant_term"] == "fixed"


@pytest.mark.parametrize(("name", "params", "flops", "batch"), LARGE, ids=[m[0] for m in LARGE])
@pytest.mark.parametrize("share", [0.2, 0.4, 0.6])
def test_large_models_gain_from_a_second_gpu(
    tmp_path: Path, name, params, flops, batch, share
) -> None:
    step_ms = batch * flops / (share * FP32_PEAK) * 1e3
    doc = advise(
        tmp_path,
        *("--params", f"{params:.0f}", "--flops-per-sample", f"{flops:.0f}"),
        *("--step-ms", f"{step_ms:.4g}", "--batch", str(batch)),
    )
    two = two_devices(doc)
    assert two["speedup"] > 1.3, (name, share, two["speedup"])
    term = doc["decision"]["limit"]["dominant_term"]
    # the slowest device's wait and DDP's own work enter as priors (advice/model/priors.py)
    assert term in ("bandwidth", "latency", "fixed", "compute", "wait", "ddp")
    # named as what decides where the answer's line says so, else as the largest overhead
    # (the id as the words write it: "The DDP term is the largest")
    assert re.search(TERM_NAMED.format(term), "\n".join(doc["explanation"]), re.IGNORECASE)
    if share == 0.4:  # the known answer: two devices, surely faster
        assert doc["recommendation"]["accelerators"] == 2 and two["speedup_low"] > 1
