"""A synthetic round of every MLPerf Training ruleset: each of its benchmarks run by systems
of the hardware of its time, with logs that pass the ruleset's own rules.

Each benchmark gets three systems of one family at 1, 2 and 4 nodes (8 accelerators a node)
and one of another family, each with the result files the rules require. The global
batch and the samples to converge are an RCP point of the benchmark's ruleset (its own, or
the nearest that has RCPs), so they are plausible; MiniGo logs no global batch, as in the
published rounds.
"""

from __future__ import annotations

from typing import Any

from gpuscale.mlperf.rules import benchmarks_of, result_file_counts

from .logbuilder import RoundBuilder, convergence_point

# Per ruleset: (system id, accelerator_model_name) of the main family and of another,
# as the rounds of that time wrote them (v0.7's TPU v4 is "TPU", its family from the id).
_B200 = "NVIDIA Blackwell GPU (B200-SXM-180GB)"
_GB300 = "NVIDIA Blackwell Ultra GPU (GB300)"
HARDWARE: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "0.7.0": (("dgx1", "NVIDIA V100-SXM2-16GB (300W)"), ("tpu-v4-128-TF", "TPU")),
    "1.0.0": (("dgxa100", "NVIDIA A100-SXM4-40GB"), ("tpu-v4-256-TF", "TPU")),
    "1.1.0": (("dgxa100", "NVIDIA A100-SXM-80GB (400W)"), ("ipu-pod16", "Graphcore IPU GC200")),
    "2.0.0": (("dgxa100", "NVIDIA A100-SXM4-80GB (400W)"), ("cloud-tpu-v4-4096", "TPU-v4")),
    "2.1.0": (("dgxa100", "NVIDIA A100-SXM4-80GB"), ("HLS-Gaudi2", "Habana Gaudi2")),
    "3.0.0": (("dgxh100", "NVIDIA H100-SXM5-80GB"), ("HLS-Gaudi2", "Habana Gaudi2")),
    "3.1.0": (("dgxh100", "NVIDIA H100-SXM5-80GB"), ("tpu-v5e-256", "TPU-v5e")),
    "4.0.0": (("dgxh100", "NVIDIA H100-SXM5-80GB"), ("tpu-v5p-128", "TPU-v5p")),
    "4.1.0": (("dgxb200", _B200), ("mi300x", "AMD Instinct MI300X 192GB HBM3")),
    "5.0.0": (("gb200", "NVIDIA Blackwell GPU (GB200)"), ("mi325x", "AMD Instinct MI325X")),
    "5.1.0": (("gb300", _GB300), ("mi355x", "AMD Instinct MI355X")),
    "6.0.0": (("gb300", _GB300), ("b300", "NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)")),
    "6.1.0": (("gb300", _GB300), ("mi355x", "AMD Instinct MI355X")),
}
NODES = (1, 2, 4)


def round_of(ruleset: str) -> str:
    """``6.1.0`` -> ``v6.1``."""
    return "v" + ruleset.rsplit(".", 1)[0]


def ruleset_round(ruleset: str, benchmarks: list[str] | None = None) -> RoundBuilder:
    """The synthetic round of ``ruleset`` (all its benchmarks, or those given)."""
    rb = RoundBuilder(name=f"training_results_{round_of(ruleset)}")
    main, other = HARDWARE[ruleset]
    counts = result_file_counts()
    systems: list[tuple[str, str, int]] = [(f"{main[0]}_n{n}", main[1], n) for n in NODES]
    systems.append((other[0], other[1], 2))
    for system_id, model, nodes in systems:
        rb.system("Acme", system_id, nodes=str(nodes), per_node="8", model=model)
    for benchmark in benchmarks or list(dict.fromkeys(benchmarks_of(ruleset))):
        gbs, samples = convergence_point(ruleset, benchmark)
        extra: dict[str, Any] = {"samples": samples, "gbs": None if benchmark == "minigo" else gbs}
        for k, (system_id, _, nodes) in enumerate(systems):
            # Faster with more nodes, less than linearly; the other family a bit slower.
            base = 60.0 / nodes**0.8 * (1.2 if k == len(systems) - 1 else 1.0)
            minutes = [base * (1 + 0.01 * i) for i in range(counts.get(benchmark, 5))]
            rb.runs("Acme", system_id, benchmark, minutes, **extra)
    return rb
