"""How far apart published ratios are where the advice's inputs say the same thing: the
floor of any step model on ``advice_heldout.py``'s tables (issue 73, its done-when).

    python benchmarks/heldout_spread.py [--out benchmarks/results/heldout_spread.json]

The advice predicts a row from its hardware (device, link, nodes), its model (parameters,
FLOPs, per-device batch, precision) and the base count's measured throughput. Rows of one
**setup** (the same device, nodes, devices per node, fabric between nodes, model without its
implementation, precision and per-device batch, at the same base count and N) differ only
in the framework that ran them (OneFlow, PaddlePaddle, Horovod, PyTorch, TensorFlow,
DeepSpeed, Megatron-LM) and in that base throughput. Per link class and split:

* **spread**: within each setup of two or more rows, the highest scaling efficiency
  (published ratio / (N / base)) over the lowest;
* **against the step time**: pairs of rows within a setup where the row of the faster base
  step scales *better*. A model of the step (communication and waits on top of the
  compute) gives the faster step the lower efficiency, or the same: such a pair moves
  against every input it has;
* **lookup floor**: the median |error| of a lookup of the class's median efficiency at
  each (base, N), fitted on the very rows it is judged on. It knows the answers at the
  class and count level; a model judged on rows it never saw does not beat it by much
  unless it reads what the lookup cannot (model size, batch, step time).

This reads the published ratios only: no row is advised, nothing is fitted or chosen from
it, and the step model's parameters (``benchmarks/fit_step_terms.py``) are untouched.
Written after the held-out rows had been judged (``results/advice_heldout.json``), to say
why a class's goal is or is not within reach of a model of these inputs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import advice_heldout  # noqa: E402  (the rows, as the held-out check reads them)
from advice_heldout import CLASSES, SPLITS, Row  # noqa: E402

OUT = HERE / "results" / "heldout_spread.json"
COMMAND = "python benchmarks/heldout_spread.py"
DOCS_BEGIN = "<!-- heldout_spread.json: begin -->\n"
DOCS_END = "<!-- heldout_spread.json: end -->"

Setup = tuple[str, int, int, str, str, str, int, int, int]


def setup_of(row: Row) -> Setup:
    """The advice's inputs but the framework and the base throughput; precision by its
    first word (``fp16 (AMP)`` and ``fp16`` are one)."""
    return (
        row.device,
        row.nodes,
        row.gpus_per_node,
        row.inter_node,
        row.base_model,
        row.precision.split()[0].lower(),
        row.batch_per_gpu,
        row.n_base,
        row.n_gpus,
    )


def efficiency(row: Row) -> float:
    """Published ratio over linear (N / base): 1 is perfect scaling."""
    return row.published / row.linear


@dataclass(frozen=True)
class WidestSetup:
    """The setup of the largest spread, with its rows' implementations and efficiencies."""

    setup: str
    efficiencies: dict[str, float]
    spread: float


@dataclass(frozen=True)
class ClassSpread:
    """One link class and split's figures (see the module's docstring)."""

    link_class: str
    split: str
    rows: int
    setups_shared: int  # setups of two or more rows
    rows_in_shared: int
    median_spread: float | None
    widest: WidestSetup | None
    pairs: int  # pairs within a setup whose base throughputs differ
    pairs_against_step_time: int
    lookup_floor_pct: float | None


def _widest(groups: dict[Setup, list[Row]]) -> WidestSetup | None:
    if not groups:
        return None
    setup, rows = max(groups.items(), key=lambda kv: _spread(kv[1]))
    device, nodes, per_node, _, model, precision, batch, base, n = setup
    return WidestSetup(
        setup=(
            f"{model}, {precision}, batch {batch} a device, {base} -> {n} {device} "
            f"({nodes} node(s) of {per_node})"
        ),
        efficiencies={
            f"{r.model} ({r.strategy}, {r.source})": round(efficiency(r), 3) for r in rows
        },
        spread=round(_spread(rows), 3),
    )


def _spread(rows: Sequence[Row]) -> float:
    effs = [efficiency(r) for r in rows]
    return max(effs) / min(effs)


def _against(rows: Sequence[Row]) -> tuple[int, int]:
    """(pairs of differing base throughput, of them those whose faster base scales
    better by more than 1%: against a step model's direction)."""
    pairs = against = 0
    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            if a.throughput_base == b.throughput_base:
                continue
            pairs += 1
            fast, slow = (a, b) if a.throughput_base > b.throughput_base else (b, a)
            against += efficiency(fast) > 1.01 * efficiency(slow)
    return pairs, against


def lookup_floor(rows: Sequence[Row]) -> float | None:
    """Median |error| (%) of each row's efficiency against the median efficiency of its
    rows at the same (base, N), the row itself included."""
    by_count: dict[tuple[int, int], list[float]] = defaultdict(list)
    for r in rows:
        by_count[(r.n_base, r.n_gpus)].append(efficiency(r))
    errors = [
        abs(efficiency(r) / statistics.median(by_count[(r.n_base, r.n_gpus)]) - 1) for r in rows
    ]
    return round(100 * statistics.median(errors), 1) if errors else None


def class_spread(rows: Sequence[Row], link_class: str, split: str) -> ClassSpread:
    """The figures of ``rows`` (unflagged, of one class and split)."""
    groups: dict[Setup, list[Row]] = defaultdict(list)
    for r in rows:
        groups[setup_of(r)].append(r)
    shared = {k: v for k, v in groups.items() if len(v) > 1}
    pairs = against = 0
    for members in shared.values():
        p, a = _against(members)
        pairs, against = pairs + p, against + a
    spreads = [_spread(v) for v in shared.values()]
    return ClassSpread(
        link_class=link_class,
        split=split,
        rows=len(rows),
        setups_shared=len(shared),
        rows_in_shared=sum(len(v) for v in shared.values()),
        median_spread=round(statistics.median(spreads), 3) if spreads else None,
        widest=_widest(shared),
        pairs=pairs,
        pairs_against_step_time=against,
        lookup_floor_pct=lookup_floor(rows),
    )


def spreads(rows: Sequence[Row]) -> list[ClassSpread]:
    """Every class and split's figures over the unflagged rows."""
    kept = [r for r in rows if not r.flagged]
    return [
        class_spread([r for r in kept if r.link_class == cls and r.split == split], cls, split)
        for cls in CLASSES
        for split in SPLITS
    ]


def markdown(results: Sequence[ClassSpread]) -> str:
    lines = [
        "| class | split | rows | setups of 2+ rows (rows) | median spread | widest spread "
        "| pairs against the step time | lookup floor |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in results:
        words = advice_heldout.CLASS_WORDS[s.link_class]
        spread = "-" if s.median_spread is None else f"{s.median_spread:.2f}x"
        widest = "-" if s.widest is None else f"{s.widest.spread:.2f}x"
        floor = "-" if s.lookup_floor_pct is None else f"{s.lookup_floor_pct:.1f}%"
        lines.append(
            f"| {words} | {s.split} | {s.rows} | {s.setups_shared} ({s.rows_in_shared}) "
            f"| {spread} | {widest} | {s.pairs_against_step_time} of {s.pairs} | {floor} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--docs", type=Path, help="rewrite this page's table (docs/heldout-spread.md)"
    )
    args = parser.parse_args(argv)
    results = spreads(advice_heldout.read_rows())
    payload = {
        "command": COMMAND,
        "classes": [
            {**s.__dict__, "widest": None if s.widest is None else s.widest.__dict__}
            for s in results
        ],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=1) + "\n")
    print(markdown(results), end="")
    print(f"written: {args.out}")
    if args.docs is not None:
        advice_heldout.write_between(args.docs, DOCS_BEGIN, DOCS_END, markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
