"""The advice's N-device speedup against published 1 vs N GPU throughput tables.

    python benchmarks/advice_published.py [--out benchmarks/results/advice_published.json]

Every row of ``benchmarks/published/*.csv`` is a table of another lab or vendor (Lambda's
PyTorch benchmark, server-gear's tf_cnn_benchmarks on GeForce cards, NVIDIA's
DeepLearningExamples) giving one model's throughput on 1 and on N GPUs at the same per-GPU
batch, on PCIe workstation cards and NVLink servers; each file's header says its source,
and each row its device, link (and why), FLOPs per sample and split. Each row is advised by
numbers as a user who measured one GPU would type it::

    gpuscale.advise(params=P, flops_per_sample=F, step_ms=B / rate_1 * 1e3, batch=B,
                    link=LINK, device_name=DEVICE, max_devices=N, scaling="weak")

and the predicted speedup at N (with its 80% interval) is compared with the published
``rate_N / rate_1``. Baselines, run here on the same rows: linear (N), the median published
speedup of the other rows of the same link class and N (rows of the same model and device
left out), and Amdahl's law ``S = N / (1 + s (N - 1))`` with ``s`` fitted on those other
rows. A published speedup above 1.05 N cannot be true at a fixed per-GPU batch (a larger
batch on N GPUs than on one, or another setup): such a row is flagged, with its reason, and
kept out of every figure. The development rows (NVIDIA's ResNet-50 tables, read before this
check) are reported apart; nothing in gpuscale is fitted to any row.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
from scipy.optimize import minimize_scalar

import gpuscale
from gpuscale.hardware.device_names import resolve
from gpuscale.quantities import counted

HERE = Path(__file__).resolve().parent
TABLES = HERE / "published"
OUT = HERE / "results" / "advice_published.json"
IMPOSSIBLE = 1.05  # a published speedup above this x N at a fixed per-GPU batch
GOALS = {"median_abs_error": 0.05, "coverage": (0.70, 0.95), "median_width": 1.35}


def link_class(link: str) -> str:
    """NVLink, PCIe with P2P, or through the host (no P2P, or across sockets)."""
    if link.startswith("nvlink"):
        return "nvlink"
    return "host" if link in ("pcie-phb", "pcie-sys") else "pcie-p2p"


@dataclass
class Row:
    table: str
    model: str
    device: str
    part: str
    precision: str
    link: str
    link_class: str
    split: str
    n_gpus: int
    batch_per_gpu: int
    published: float
    flagged: str = ""
    predicted: float | None = None
    low: float | None = None
    high: float | None = None
    borrowed: float | None = None
    amdahl: float | None = None

    @property
    def group(self) -> tuple[str, str, str]:
        return (self.table, self.model, self.part)


def read_rows() -> tuple[list[Row], pd.DataFrame]:
    frames = []
    for path in sorted(TABLES.glob("*.csv")):
        frame = pd.read_csv(path, comment="#")
        frames.append(frame.assign(table=path.stem))
    data = pd.concat(frames, ignore_index=True)
    rows = []
    for r in data.itertuples(index=False):
        n, truth = int(r.n_gpus), float(r.throughput_n) / float(r.throughput_1)
        flagged = (
            f"published {truth:.2f}x on {n} GPUs is above {IMPOSSIBLE} x {n}: not possible "
            "at a fixed per-GPU batch (the N-GPU run cannot have been the 1-GPU run's setup)"
            if truth > IMPOSSIBLE * n
            else ""
        )
        rows.append(
            Row(
                table=r.table,
                model=r.model,
                device=r.device,
                part=resolve(r.device).device.name,
                precision=r.precision,
                link=r.link,
                link_class=link_class(r.link),
                split=r.split,
                n_gpus=n,
                batch_per_gpu=int(r.batch_per_gpu),
                published=truth,
                flagged=flagged,
            )
        )
    return rows, data


def advise_row(row: Row, source: pd.Series) -> None:
    """The advice's speedup at the row's N, with its 80% interval."""
    batch = int(source["batch_per_gpu"])
    advice = gpuscale.advise(
        params=float(source["params"]),
        flops_per_sample=float(source["flops_per_sample"]),
        step_ms=batch / float(source["throughput_1"]) * 1e3,
        batch=batch,
        link=str(source["link"]),
        device_name=str(source["device"]),
        max_devices=row.n_gpus,
        scaling="weak",
    )
    at = advice.predictions.set_index("accelerators").loc[row.n_gpus]
    row.predicted = float(at["speedup"])
    row.low, row.high = float(at["speedup_low"]), float(at["speedup_high"])


def _amdahl(n: int, s: float) -> float:
    return n / (1 + s * (n - 1))


def baselines(rows: list[Row]) -> None:
    """Per row, from the other rows of its link class (its own model and device left out):
    the median published speedup at its N, and Amdahl's law fitted to them."""
    usable = [r for r in rows if not r.flagged]
    for row in usable:
        others = [o for o in usable if o.link_class == row.link_class and o.group != row.group]
        same_n = [o.published for o in others if o.n_gpus == row.n_gpus]
        row.borrowed = statistics.median(same_n) if same_n else None
        if others:
            fit = minimize_scalar(
                lambda s, o=others: sum(
                    math.log(_amdahl(x.n_gpus, s) / x.published) ** 2 for x in o
                ),
                bounds=(0.0, 1.0),
                method="bounded",
            )
            row.amdahl = _amdahl(row.n_gpus, float(fit.x))


def _error(predicted: float | None, truth: float) -> float | None:
    return None if predicted is None else predicted / truth - 1


def summary(rows: list[Row]) -> dict[str, object]:
    """Median |error| of the advice and of each baseline, the 80% interval's coverage and
    median width (high / low), over ``rows``."""
    if not rows:
        return {"rows": 0}

    def median_abs(values: list[float | None]) -> float | None:
        kept = [abs(v) for v in values if v is not None]
        return statistics.median(kept) if kept else None

    covered = [r.low <= r.published <= r.high for r in rows if r.low is not None]
    return {
        "rows": len(rows),
        "median_abs_error": median_abs([_error(r.predicted, r.published) for r in rows]),
        "coverage": sum(covered) / len(covered) if covered else None,
        "median_width": statistics.median(r.high / r.low for r in rows if r.low),
        "baselines": {
            "linear": median_abs([_error(r.n_gpus, r.published) for r in rows]),
            "borrowed_ratio": median_abs([_error(r.borrowed, r.published) for r in rows]),
            "amdahl_fit": median_abs([_error(r.amdahl, r.published) for r in rows]),
        },
    }


def report(rows: list[Row]) -> dict[str, object]:
    kept = [r for r in rows if not r.flagged]
    held = [r for r in kept if r.split == "held-out"]
    out: dict[str, object] = {
        "command": "python benchmarks/advice_published.py",
        "goals": {"median_abs_error": 0.05, "coverage": [0.70, 0.95], "median_width": 1.35},
        "held_out": summary(held),
        "development": summary([r for r in kept if r.split == "development"]),
        "held_out_by_link_class": {
            c: summary([r for r in held if r.link_class == c])
            for c in ("nvlink", "pcie-p2p", "host")
        },
        "held_out_by_table": {
            t: summary([r for r in held if r.table == t]) for t in sorted({r.table for r in held})
        },
        "flagged": [{"row": i, "why": r.flagged} for i, r in enumerate(rows) if r.flagged],
        "rows": [{**asdict(r), "error": _error(r.predicted, r.published)} for r in rows],
    }
    return out


def _pct(value: object) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}%"  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows, data = read_rows()
    for row, (_, source) in zip(rows, data.iterrows(), strict=True):
        if not row.flagged:
            advise_row(row, source)
    baselines(rows)
    result = report(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for name in ("held_out", "development"):
        s = result[name]
        assert isinstance(s, dict)
        base = s.get("baselines", {})
        print(
            f"{name}: {counted(s['rows'], 'row')}, "
            f"median |error| {_pct(s.get('median_abs_error'))} "
            f"(linear {_pct(base.get('linear'))}, borrowed ratio "
            f"{_pct(base.get('borrowed_ratio'))}, Amdahl fit {_pct(base.get('amdahl_fit'))}); "
            f"80% coverage {_pct(s.get('coverage'))}, median width "
            f"{s.get('median_width', 0):.3f}"
        )
    by_class = result["held_out_by_link_class"]
    assert isinstance(by_class, dict)
    for name, s in by_class.items():
        print(
            f"  {name}: {counted(s['rows'], 'row')}, "
            f"median |error| {_pct(s.get('median_abs_error'))}, "
            f"coverage {_pct(s.get('coverage'))}"
        )
    print(f"flagged (kept out): {counted(len(result['flagged']), 'row')}; written: {args.out}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
