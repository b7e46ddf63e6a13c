"""Checks of the bench's GPU paths on a real GPU (one is enough), a verdict per check.

    python benchmarks/gpu_validate.py [--quick] [--max-params 30M]

1. ``flops``: the counter's training FLOPs of a GPT-2-class model (nanoGPT's layout:
   pre-norm blocks, causal SDPA, tied embedding and head) against the PaLM formula
   (Chowdhery et al. 2022, "PaLM", appendix B; nanoGPT's ``estimate_mfu``): per token
   ``6 N + 12 L H Q T`` with N the parameters less the position embedding, L layers,
   H heads of size Q, T the context. PASS within 1% (the counter leaves out biases and
   norms, which 6N counts). Runs on CPU too (a small GPT there, GPT-2 124M on a GPU).
2. ``mfu`` (GPU): achieved FLOP/s of GPT-2 124M training steps (bf16 autocast) over the
   device's dense peak (``gpuscale.hardware.peaks``); PASS when 0 < MFU < 1 (above 1 the
   FLOPs or the peak are wrong). For scale: nanoGPT reports about 0.3-0.4 on an A100
   for this model with ``torch.compile``; eager is lower.
3. ``timing`` (GPU): the ladder models at N = 1, each training step timed by the bench's
   clock (CUDA events, ``gpuscale.bench.steps``) and by ``perf_counter`` around
   ``torch.cuda.synchronize()``; PASS when the mean event time is within 5% of the wall
   clock. Then ``gpuscale bench --nproc 1`` runs the same ladder and its rows are shown.
4. ``energy`` (GPU, NVML): the board's energy counter over ~10 s of matmuls against
   power sampled every 50 ms and integrated; PASS within 10%.
5. ``topo`` (GPU): ``gpuscale topo`` on this machine; PASS when it exits 0.

Without a GPU it says so, runs check 1 on the CPU and exits 0. Exit status 1 when a
check that ran failed. The same checks run as tests marked ``gpu``
(``tests/bench/test_gpu_validate.py``, which imports this file), and the thresholds and
arithmetic below run there on every machine.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.flop_counter import FlopCounterMode

from gpuscale.bench.clock import clock
from gpuscale.bench.flops import count
from gpuscale.bench.models import load_model, select_models
from gpuscale.bench.steps import Job, one_step
from gpuscale.hardware.peaks import peak_for

# The CLI of this interpreter, whether or not its `gpuscale` script is on PATH.
GPUSCALE = (sys.executable, "-m", "gpuscale")

# PASS within: the counted FLOPs of the formula's; CUDA-event step times of the wall clock;
# NVML's energy counter of the sampled power, integrated
FLOPS_TOLERANCE = 0.01
TIMING_TOLERANCE = 0.05
ENERGY_TOLERANCE = 0.10


@dataclass(frozen=True, slots=True)
class Verdict:
    """One check's result: ``ok`` None when it could not run here (SKIP)."""

    check: str
    ok: bool | None
    detail: str

    @property
    def word(self) -> str:
        return "SKIP" if self.ok is None else "PASS" if self.ok else "FAIL"


def within(ratio: float, tolerance: float) -> bool:
    """Whether a measured/expected ratio is within ``tolerance`` of 1 (NaN is not)."""
    return abs(ratio - 1) < tolerance


def plausible_mfu(mfu: float) -> bool:
    """0 < MFU < 1: above 1 the FLOPs or the peak are wrong."""
    return 0 < mfu < 1


def integrated_j(samples: list[tuple[float, float]]) -> float:
    """Energy (J) of power samples ``(time s, power W)`` by the trapezoid rule."""
    return sum((t1 - t0) * (p0 + p1) / 2 for (t0, p0), (t1, p1) in itertools.pairwise(samples))


def ladder_ok(returncode: int, rows: list[dict], names: list[str]) -> bool:
    """``gpuscale bench`` exited 0 with one ``ok`` row per model."""
    return returncode == 0 and len(rows) == len(names) and all(r["status"] == "ok" for r in rows)


def exit_status(verdicts: list[Verdict]) -> int:
    """1 when a check that ran failed, else 0 (skipped checks do not fail)."""
    return 1 if any(v.ok is False for v in verdicts) else 0


class Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    """nanoGPT's GPT: token + position embeddings, L blocks, final norm, tied head."""

    def __init__(self, layers: int, heads: int, d: int, context: int, vocab: int) -> None:
        super().__init__()
        self.layers, self.heads, self.d, self.context = layers, heads, d, context
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))

    def palm_flops_per_token(self) -> float:
        """6 N + 12 L H Q T (PaLM appendix B), N without the position embedding."""
        n = sum(p.numel() for p in self.parameters()) - self.wpe.weight.numel()
        return 6 * n + 12 * self.layers * self.d * self.context


def gpt_step(model: GPT, batch: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    vocab = model.wte.weight.shape[0]
    x = torch.randint(0, vocab, (batch, model.context), device=device)
    return x, torch.randint(0, vocab, (batch, model.context), device=device)


def loss_of(model: GPT, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(x).flatten(0, 1).float(), y.flatten())


def check_flops(device: torch.device) -> tuple[Verdict, GPT]:
    cuda = device.type == "cuda"
    model = (GPT(12, 12, 768, 1024, 50304) if cuda else GPT(4, 4, 256, 256, 4096)).to(device)
    x, y = gpt_step(model, 1, device)
    counted = count(lambda: loss_of(model, x, y).backward())
    with FlopCounterMode(display=False) as stock:  # torch's counter alone, for comparison
        loss_of(model, x, y).backward()
    model.zero_grad(set_to_none=True)
    per_token = counted.total / x.numel()
    formula = model.palm_flops_per_token()
    ratio = per_token / formula
    name = "GPT-2 124M" if cuda else "GPT (4 layers, d=256, T=256)"
    return Verdict(
        "flops",
        within(ratio, FLOPS_TOLERANCE) and not counted.uncounted_ops,
        f"{name}: counter {per_token / 1e6:.2f} MFLOP/token vs 6N+12LHQT "
        f"{formula / 1e6:.2f} (ratio {ratio:.4f}; torch's counter alone "
        f"{stock.get_total_flops() / x.numel() / formula:.4f}); uncounted ops: "
        f"{', '.join(counted.uncounted_ops) or 'none'}",
    ), model


def check_mfu(model: GPT, device: torch.device, steps: int) -> Verdict:
    batch = 8
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x, y = gpt_step(model, batch, device)
    per_token = count(lambda: loss_of(model, x[:1], y[:1]).backward()).total / model.context
    model.zero_grad(set_to_none=True)

    def step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_of(model, x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / steps
    achieved = per_token * batch * model.context / seconds / 1e12
    name = torch.cuda.get_device_name(device)
    peak = peak_for(name)
    if peak is None:
        return Verdict("mfu", None, f"{achieved:.1f} TFLOP/s achieved; no peak known for {name}")
    mfu = achieved / peak.tflops("bf16")
    return Verdict(
        "mfu",
        plausible_mfu(mfu),
        f"GPT-2 124M, bf16, batch {batch}x{model.context}: {seconds * 1e3:.1f} ms/step, "
        f"{achieved:.1f} TFLOP/s of {peak.bf16:g} ({peak.device}): MFU {mfu:.3f}",
    )


def check_timing(device: torch.device, max_params: str, steps: int) -> tuple[Verdict, list[str]]:
    names = [n for n, _ in select_models(None, max_params=max_params)] if max_params else []
    worst = 0.0
    lines = []
    for name in names:
        bench = load_model(name)
        bench.module.to(device)
        job = Job(
            bench=bench,
            wrapped=bench.module,
            optimizer=torch.optim.AdamW(bench.module.parameters(), lr=1e-4),
            batch=bench.make_batch(32, device),
            device=device,
        )
        mark, elapsed = clock(device)
        for _ in range(3):
            one_step(job, True, mark)
        events, walls = [], []
        for _ in range(steps):
            torch.cuda.synchronize()
            start = time.perf_counter()
            _, begin, end = one_step(job, True, mark)  # synchronises at its end
            walls.append((time.perf_counter() - start) * 1e3)
            events.append(elapsed(begin, end))
        event_ms, wall_ms = sum(events) / steps, sum(walls) / steps
        gap = abs(event_ms / wall_ms - 1)
        worst = max(worst, gap)
        lines.append(f"{name}: events {event_ms:.3f} ms, wall {wall_ms:.3f} ms ({gap:.1%})")
    ok = worst < TIMING_TOLERANCE if names else None
    return Verdict("timing", ok, "; ".join(lines) or "no models"), names


def run_ladder(names: list[str], steps: int) -> Verdict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.jsonl"
        command = [*GPUSCALE, "bench", "--nproc", "1", "--models", ",".join(names)]
        command += ["--steps", str(steps), "--out", str(out)]
        done = subprocess.run(command, capture_output=True, text=True)
        print(done.stdout[-4000:], done.stderr[-2000:], sep="\n")
        rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        for r in rows:
            flops, timing = r.get("flops") or {}, r.get("timing") or {}
            print(
                f"  {r['config']['model']}: {r['status']}, "
                f"step {timing.get('step_ms_mean')} ms, MFU {flops.get('mfu')}, "
                f"uncounted {flops.get('uncounted_ops')}, flags {r.get('flags')}"
            )
        ok = ladder_ok(done.returncode, rows, names)
        detail = f"gpuscale bench --nproc 1: {len(rows)} rows for {len(names)} models"
        return Verdict("ladder", ok, detail)


def check_energy(device: torch.device, seconds: float) -> Verdict:
    try:
        import pynvml as nvml
    except ImportError:
        return Verdict("energy", None, "nvidia-ml-py not installed")
    from gpuscale.bench.telemetry import device_identity, nvml_handle

    nvml.nvmlInit()
    handle = nvml_handle(nvml, *device_identity(device))
    samples: list[tuple[float, float]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append((time.perf_counter(), nvml.nvmlDeviceGetPowerUsage(handle) / 1e3))
            time.sleep(0.05)

    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    sampler = threading.Thread(target=sample)
    start_mj = nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    sampler.start()
    end_at = time.perf_counter() + seconds
    while time.perf_counter() < end_at:
        for _ in range(20):
            a = (a @ a).clamp_(-1, 1)
        torch.cuda.synchronize()
    stop.set()
    sampler.join()
    counter_j = (nvml.nvmlDeviceGetTotalEnergyConsumption(handle) - start_mj) / 1e3
    sampled_j = integrated_j(samples)
    ratio = counter_j / sampled_j if sampled_j > 0 else math.nan
    return Verdict(
        "energy",
        within(ratio, ENERGY_TOLERANCE),
        f"{seconds:g} s of bf16 matmuls: counter {counter_j:.0f} J, sampled power "
        f"{sampled_j:.0f} J ({len(samples)} samples, mean {sampled_j / seconds:.0f} W), "
        f"ratio {ratio:.3f}",
    )


def check_topo() -> Verdict:
    done = subprocess.run([*GPUSCALE, "topo"], capture_output=True, text=True)
    print(done.stdout[-4000:], done.stderr[-2000:], sep="\n")
    return Verdict("topo", done.returncode == 0, f"gpuscale topo exited {done.returncode}")


def said(verdict: Verdict, verdicts: list[Verdict]) -> Verdict:
    """``verdict`` printed and kept."""
    verdicts.append(verdict)
    print(f"[{verdict.word}] {verdict.check}: {verdict.detail}", flush=True)
    return verdict


# A GPU run's verdicts, the only source the README and docs quote GPU checks from.
RESULTS = Path(__file__).resolve().parent / "results" / "gpu_validate.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-params", default="30M", help="largest ladder model timed")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--energy-s", type=float, default=10.0)
    args = parser.parse_args()
    verdicts: list[Verdict] = []
    if not torch.cuda.is_available():
        print("no CUDA GPU here: only the FLOP-formula check runs (on the CPU)")
        said(check_flops(torch.device("cpu"))[0], verdicts)
        return 0
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    print(f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}")
    flops, model = check_flops(device)
    said(flops, verdicts)
    said(check_mfu(model, device, args.steps), verdicts)
    del model
    timing, names = check_timing(device, args.max_params, args.steps)
    said(timing, verdicts)
    if names:
        said(run_ladder(names, args.steps), verdicts)
    said(check_energy(device, args.energy_s), verdicts)
    said(check_topo(), verdicts)
    print("\n".join(f"{v.word:4} {v.check}" for v in verdicts))
    record = {
        "device": torch.cuda.get_device_name(device),
        "torch": torch.__version__,
        "verdicts": [{"check": v.check, "result": v.word, "detail": v.detail} for v in verdicts],
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=1) + "\n")  # what the README may quote
    print(f"wrote {RESULTS}")
    return exit_status(verdicts)


if __name__ == "__main__":
    sys.exit(main())
