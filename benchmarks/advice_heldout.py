"""The advice's N-device throughput ratio, judged per link class on published tables split
into development and held-out rows before anything was fitted (issue 73, items 6-7).

    python benchmarks/advice_heldout.py [--out benchmarks/results/advice_heldout.json]
    python benchmarks/advice_heldout.py --split development --out /tmp/dev.json

``--split development`` reads, advises and reports the development rows alone (no
held-out row is advised or printed): what a change to the step model is judged on while
it is developed; the held-out rows are advised once, at the end.

Rows: ``benchmarks/published/heldout/*.csv`` and ``benchmarks/published/*.csv`` (the
tables ``advice_published.py`` reads; their NVIDIA DeepLearningExamples rows other than
ResNet-50 are kept back for independent checks and left out). Each row gives one model's
throughput at a base count and at N devices with the same per-device batch; the split rule
and the columns are in ``benchmarks/published/README.md``.

Each row is advised by numbers as a user who measured the base count would type it: the
step of one device from the base count's throughput per device, the parameters, FLOPs per
sample, the link preset of the gradients' path, and for several nodes the nodes, devices
per node and NIC preset::

    gpuscale.advise(params=P, flops_per_sample=F, step_ms=B / (rate_base / base) * 1e3,
                    batch=B, link=LINK, device_name=DEVICE, max_devices=N, scaling="weak",
                    nodes=..., gpus_per_node=..., inter_node=..., nics_per_node=...,
                    strategy="fsdp", "hybrid" or "ddp")

The predicted ratio is the advice's speedup at N over its speedup at the base count, its
80% interval the speedup interval at N over the same: the advice's own, by the rule
``benchmarks/advice_intervals.py`` chose and fitted on the development rows alone (said in
the results' ``interval_rule``). A row the advice refuses (no count up to N holds the
model) is flagged with the refusal. Baselines on the same rows: linear
(N / base); another row's ratio (the median published ratio of the same source's other
models at the same counts and link class, else of every source's other models there);
Amdahl's law ``N / (1 + s (N - 1))`` with one serial fraction ``s`` per link class fitted
on that class's development rows. A published ratio above 1.05 x N / base cannot be true
at a fixed per-device batch: such a row is flagged with its reason and kept out of every
figure. Nothing in gpuscale is fitted to any row.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from dataclasses import asdict, dataclass, replace
from importlib import resources
from pathlib import Path

import pandas as pd
from scipy.optimize import minimize_scalar

import gpuscale
from gpuscale.advice.api import Advice
from gpuscale.advice.model.network import FITTED, StepTerms, of_stack, using
from gpuscale.advice.search import predict
from gpuscale.hardware.device_names import resolve
from gpuscale.quantities import counted
from gpuscale.tables.refusals import NamedError

HERE = Path(__file__).resolve().parent
TABLES = HERE / "published" / "heldout"
EARLIER = HERE / "published"  # advice_published.py's tables, read as they are
OUT = HERE / "results" / "advice_heldout.json"
DOCS_BEGIN, DOCS_END = "<!-- advice_heldout.json: begin -->\n", "<!-- advice_heldout.json: end -->"
GOALS_BEGIN = "<!-- advice_heldout.json goals: begin -->\n"
GOALS_END = "<!-- advice_heldout.json goals: end -->"
COMMAND = "python benchmarks/advice_heldout.py"
CLASSES = ("nvlink", "pcie_p2p", "pcie_no_p2p", "multinode")
CLASS_WORDS = {
    "nvlink": "Single-node NVLink",
    "pcie_p2p": "PCIe with P2P",
    "pcie_no_p2p": "PCIe without P2P",
    "multinode": "Multi-node",
}
SPLITS = ("development", "held-out")
ADVISED_STRATEGIES = ("fsdp", "hybrid")  # the tables' strategies advised as themselves
IMPOSSIBLE = 1.05  # a published ratio above this x N / base at a fixed per-device batch
# a device of a generation before Volta (Kepler, Maxwell, Pascal): the row's stack is
# "legacy" (benchmarks/fit_step_terms.py's declared stack class), else "modern"
PRE_VOLTA = re.compile(r"\b(K20|K40|K80|M40|M60|P4|P40|P100)\b")
# issue 73's "Done when", per class on the held-out rows
GOALS = {
    "median_abs_error": 0.05,
    "beat_linear_by": 0.01,  # where linear's median |error| is above linear_off
    "linear_off": 0.02,
    "coverage": (0.70, 0.90),
    "min_rows": 15,
}


@dataclass
class Row:
    source: str
    model: str
    device: str
    precision: str
    strategy: str
    link: str
    link_class: str
    inter_node: str
    nics_per_node: int | None
    nodes: int
    gpus_per_node: int
    split: str
    published_on: str
    params: float
    flops_per_sample: float
    batch_per_gpu: int
    units_per_sample: float
    n_base: int
    throughput_base: float
    n_gpus: int
    throughput_n: float
    flagged: str = ""
    refused: str = ""  # the advice's refusal (no count holds the model): kept out, listed
    predicted: float | None = None
    low: float | None = None
    high: float | None = None
    borrowed: float | None = None
    amdahl: float | None = None

    @property
    def published(self) -> float:
        """The published throughput ratio, N over base."""
        return self.throughput_n / self.throughput_base

    @property
    def linear(self) -> float:
        return self.n_gpus / self.n_base

    @property
    def stack(self) -> str:
        """The row's software stack and hardware generation, from its device alone:
        ``legacy`` before Volta, else ``modern`` (``advice.model.network.STACKS``)."""
        return "legacy" if PRE_VOLTA.search(self.device) else "modern"

    @property
    def base_model(self) -> str:
        """The model without its implementation (``ResNet-50 v1.5 (OneFlow)``: ResNet-50
        v1.5): another implementation of one model is no other model."""
        return self.model.split(" (")[0]


def _earlier_class(link: str) -> str:
    if link.startswith("nvlink"):
        return "nvlink"
    return "pcie_no_p2p" if link in ("pcie-phb", "pcie-sys") else "pcie_p2p"


def _earlier_rows(path: Path) -> list[Row]:
    """A table of ``advice_published.py``'s: base 1, one node, DDP (tf_cnn_benchmarks'
    variable update where the page does not say one)."""
    frame = pd.read_csv(path, comment="#")
    if path.stem == "nvidia_dle_pytorch":  # the rest is kept back (README.md, rule 3)
        frame = frame[frame["model"].str.startswith("ResNet-50")]
    published = {"lambda_pytorch_fp16": "2023", "nvidia_dle_pytorch": "2021"}
    return [
        Row(
            source=path.stem,
            model=str(r.model),
            device=str(r.device),
            precision=str(r.precision),
            strategy="tf_cnn" if path.stem.startswith("servergear") else "ddp",
            link=str(r.link),
            link_class=_earlier_class(str(r.link)),
            inter_node="",
            nics_per_node=None,
            nodes=1,
            gpus_per_node=max(8, int(r.n_gpus)),
            split=str(r.split),
            published_on=published.get(path.stem, "2021-2023"),
            params=float(r.params),
            flops_per_sample=float(r.flops_per_sample),
            batch_per_gpu=int(r.batch_per_gpu),
            units_per_sample=1.0,
            n_base=1,
            throughput_base=float(r.throughput_1),
            n_gpus=int(r.n_gpus),
            throughput_n=float(r.throughput_n),
        )
        for r in frame.itertuples(index=False)
    ]


def _heldout_rows(path: Path) -> list[Row]:
    frame = pd.read_csv(path, comment="#", keep_default_na=False)
    return [
        Row(
            source=path.stem,
            model=str(r.model),
            device=str(r.device),
            precision=str(r.precision),
            strategy=str(r.strategy),
            link=str(r.link),
            link_class=str(r.link_class),
            inter_node=str(r.inter_node),
            nics_per_node=int(r.nics_per_node) if str(r.nics_per_node) else None,
            nodes=int(r.nodes),
            gpus_per_node=int(r.gpus_per_node),
            split=str(r.split),
            published_on=str(r.published),
            params=float(r.params),
            flops_per_sample=float(r.flops_per_sample),
            batch_per_gpu=int(r.batch_per_gpu),
            units_per_sample=float(r.units_per_sample),
            n_base=int(r.n_base),
            throughput_base=float(r.throughput_base),
            n_gpus=int(r.n_gpus),
            throughput_n=float(r.throughput_n),
        )
        for r in frame.itertuples(index=False)
    ]


def check(row: Row) -> Row:
    """``row`` with its flag set where it cannot be a fixed-batch measurement, or where
    its fields contradict each other; raises ``ValueError`` on a class or split that is
    none of the known ones (a typing mistake in a table, said with the row)."""
    if row.link_class not in CLASSES:
        raise ValueError(
            f"{row.source}: {row.model}: link class {row.link_class!r} is none of {CLASSES}"
        )
    if row.split not in SPLITS:
        raise ValueError(f"{row.source}: {row.model}: split {row.split!r} is none of {SPLITS}")
    if (row.link_class == "multinode") != (row.nodes > 1):
        raise ValueError(
            f"{row.source}: {row.model}: {row.nodes} node(s) in class {row.link_class!r}: "
            "a row of several nodes is multinode, and only it"
        )
    limit = IMPOSSIBLE * row.linear
    if row.published > limit:
        row.flagged = (
            f"published {row.published:.2f}x from {row.n_base} to {row.n_gpus} devices is "
            f"above {IMPOSSIBLE} x {row.linear:g}: not possible at a fixed per-device batch"
        )
    return row


def read_rows(tables: Path = TABLES, earlier: Path | None = EARLIER) -> list[Row]:
    rows = [r for path in sorted(tables.glob("*.csv")) for r in _heldout_rows(path)]
    if earlier is not None:
        rows += [r for path in sorted(earlier.glob("*.csv")) for r in _earlier_rows(path)]
    return [check(r) for r in rows]


def _device_name(device: str) -> str | None:
    """The catalogue's name of ``device``, or None where the catalogue has none (P100,
    K80): the advice then runs on the measured step alone."""
    try:
        return str(resolve(device).device.name)
    except ValueError:
        return None


def advice_fields(row: Row) -> dict[str, object]:
    """``gpuscale.advise``'s keywords for ``row``, as a user who measured the base count
    would type them (the module's docstring)."""
    per_device = row.throughput_base / row.n_base / row.units_per_sample  # samples/s
    fields: dict[str, object] = {
        "params": row.params,
        "flops_per_sample": row.flops_per_sample,
        "step_ms": row.batch_per_gpu / per_device * 1e3,
        "batch": row.batch_per_gpu,
        "link": row.link,
        "device_name": _device_name(row.device),
        "max_devices": row.n_gpus,
        "scaling": "weak",
        # the table's strategy where it is one the advice models (FSDP's HYBRID_SHARD is
        # its "hybrid"), else DDP (a framework's own all-reduce, a parameter server)
        "strategy": row.strategy if row.strategy in ADVISED_STRATEGIES else "ddp",
        "gpus_per_node": row.gpus_per_node,
    }
    if row.nodes > 1:
        fields |= {"nodes": row.nodes, "inter_node": row.inter_node}
        if row.nics_per_node is not None:
            fields["nics_per_node"] = row.nics_per_node
    return fields


def advise(row: Row, terms: StepTerms | None = None) -> Advice:
    """The advice for ``row`` with the step terms ``terms``, by default the fitted terms
    of the row's stack (``Row.stack``)."""
    with using(terms or of_stack(row.stack)):
        return gpuscale.advise(**advice_fields(row))


def predictions(row: Row, terms: StepTerms | None = None) -> pd.DataFrame:
    """The advice's predictions table for ``row``, indexed by the device count."""
    return advise(row, terms).predictions.set_index("accelerators")


def advise_row(row: Row, terms: StepTerms | None = None) -> None:
    """The advice's ratio at the row's N over its base count, with the 80% interval."""
    table = predictions(row, terms)
    for n in (row.n_base, row.n_gpus):
        if n not in table.index:
            raise ValueError(f"{row.source}: {row.model}: the advice has no prediction at {n}")
    base = float(table.loc[row.n_base, "speedup"])
    at = table.loc[row.n_gpus]
    row.predicted = float(at["speedup"]) / base
    row.low, row.high = float(at["speedup_low"]) / base, float(at["speedup_high"]) / base


def _amdahl(n: int, s: float) -> float:
    return n / (1 + s * (n - 1))


def _amdahl_ratio(row: Row, s: float) -> float:
    return _amdahl(row.n_gpus, s) / _amdahl(row.n_base, s)


def fit_amdahl(rows: list[Row]) -> dict[str, float | None]:
    """One serial fraction per link class, fitted on the class's unflagged development
    rows (least squares of log ratios); None for a class without development rows."""
    fitted: dict[str, float | None] = {}
    for cls in CLASSES:
        dev = [
            r for r in rows if r.link_class == cls and r.split == "development" and not r.flagged
        ]
        if not dev:
            fitted[cls] = None
            continue
        fit = minimize_scalar(
            lambda s, d=dev: sum(math.log(_amdahl_ratio(x, s) / x.published) ** 2 for x in d),
            bounds=(0.0, 1.0),
            method="bounded",
        )
        fitted[cls] = float(fit.x)
    return fitted


def baselines(rows: list[Row], serial: dict[str, float | None]) -> None:
    """Per unflagged row: another row's ratio (the same source's other models at the same
    counts and class, else every source's other models there; never the row's own model)
    and Amdahl's law with its class's development fit."""
    usable = [r for r in rows if not r.flagged and not r.refused]
    for row in usable:
        alike = [
            o
            for o in usable
            if o.link_class == row.link_class
            and (o.n_base, o.n_gpus) == (row.n_base, row.n_gpus)
            and o.base_model != row.base_model
        ]
        same_source = [o.published for o in alike if o.source == row.source]
        pool = same_source or [o.published for o in alike]
        row.borrowed = statistics.median(pool) if pool else None
        s = serial[row.link_class]
        row.amdahl = None if s is None else _amdahl_ratio(row, s)


def _error(predicted: float | None, truth: float) -> float | None:
    return None if predicted is None else predicted / truth - 1


def _median_abs(values: list[float | None]) -> float | None:
    kept = [abs(v) for v in values if v is not None]
    return statistics.median(kept) if kept else None


def summary(rows: list[Row]) -> dict[str, object]:
    """Median |error| of the advice and each baseline (with how many rows each could
    answer), the 80% interval's coverage and median width (high / low), over ``rows``."""
    if not rows:
        return {"rows": 0}
    covered = [r.low <= r.published <= r.high for r in rows if r.low is not None]
    return {
        "rows": len(rows),
        "median_abs_error": _median_abs([_error(r.predicted, r.published) for r in rows]),
        "coverage": sum(covered) / len(covered) if covered else None,
        # the rows inside the 80% interval, below its low end and above its high end
        "covered": sum(covered),
        "below": sum(r.published < r.low for r in rows if r.low is not None),
        "above": sum(r.published > r.high for r in rows if r.high is not None),
        "median_width": statistics.median(r.high / r.low for r in rows if r.low and r.high),
        "baselines": {
            "linear": _median_abs([_error(r.linear, r.published) for r in rows]),
            "another_rows_ratio": _median_abs([_error(r.borrowed, r.published) for r in rows]),
            "amdahl_dev_fit": _median_abs([_error(r.amdahl, r.published) for r in rows]),
        },
        "baseline_rows": {
            "another_rows_ratio": sum(r.borrowed is not None for r in rows),
            "amdahl_dev_fit": sum(r.amdahl is not None for r in rows),
        },
    }


def _met(s: dict[str, object]) -> dict[str, bool | None]:
    """Issue 73's goals for one class's held-out summary (None: too few rows to judge)."""
    if s["rows"] == 0:
        return {
            "enough_rows": False,
            "median_abs_error": None,
            "beats_linear": None,
            "coverage": None,
        }
    error, coverage = s["median_abs_error"], s["coverage"]
    linear = s["baselines"]["linear"]  # type: ignore[index]
    low, high = GOALS["coverage"]
    return {
        "enough_rows": s["rows"] >= GOALS["min_rows"],  # type: ignore[operator]
        "median_abs_error": error <= GOALS["median_abs_error"],  # type: ignore[operator]
        # where linear is off by more than 2%, the advice beats it by at least 1 point
        "beats_linear": (
            True if linear <= GOALS["linear_off"] else error <= linear - GOALS["beat_linear_by"]  # type: ignore[operator]
        ),
        "coverage": low <= coverage <= high,  # type: ignore[operator]
    }


def evaluate(rows: list[Row], terms: StepTerms | None = None) -> dict[str, float | None]:
    """Advise every unflagged row (with ``terms``, by default its stack's fitted terms),
    fit Amdahl per class on development rows, and set the baselines: the core of the
    check, on any list of rows. Returns the fitted fractions."""
    for row in rows:
        if not row.flagged:
            try:
                advise_row(row, terms)
            except NamedError as refusal:
                row.refused = str(refusal)
    serial = fit_amdahl(rows)
    baselines(rows, serial)
    return serial


def report(
    rows: list[Row], serial: dict[str, float | None], command: str = COMMAND
) -> dict[str, object]:
    kept = [r for r in rows if not r.flagged and not r.refused]
    classes = {}
    for cls in CLASSES:
        mine = [r for r in kept if r.link_class == cls]
        held = summary([r for r in mine if r.split == "held-out"])
        classes[cls] = {
            "development": summary([r for r in mine if r.split == "development"]),
            "held_out": held,
            "amdahl_serial_fraction": serial[cls],
            "goals_met": _met(held),
        }
    rule = json.loads((resources.files("gpuscale") / "data" / predict.INTERVALS_FILE).read_text())
    return {
        "command": command,  # the run's, --split and --terms with it
        # the interval rule the advice applied (benchmarks/advice_intervals.py fitted it)
        "interval_rule": {k: rule[k] for k in ("name", "kind", "fitted_by", "fitted_on")},
        "split_rule": "benchmarks/published/README.md: development if published before "
        "2019-01-01, held-out from 2019; rows split earlier keep their split; sources added "
        "on 2026-11-27 by the parity of sha1(source|device|model) (rule 4)",
        "goals": {**GOALS, "coverage": list(GOALS["coverage"])},
        "classes": classes,
        "held_out": summary([r for r in kept if r.split == "held-out"]),
        "development": summary([r for r in kept if r.split == "development"]),
        "sources": {
            s: {
                "development": sum(r.source == s and r.split == "development" for r in kept),
                "held_out": sum(r.source == s and r.split == "held-out" for r in kept),
            }
            for s in sorted({r.source for r in rows})
        },
        "flagged": [
            {"source": r.source, "model": r.model, "device": r.device, "why": r.flagged}
            for r in rows
            if r.flagged
        ],
        # rows the advice refuses (no count up to the row's N holds the model in memory):
        # kept out of every figure, each with the refusal
        "refused": [
            {
                "source": r.source,
                "model": r.model,
                "device": r.device,
                "n_base": r.n_base,
                "n_gpus": r.n_gpus,
                "split": r.split,
                "why": r.refused,
            }
            for r in rows
            if r.refused
        ],
        "rows": [
            {
                **asdict(r),
                "stack": r.stack,
                "published": r.published,
                "error": _error(r.predicted, r.published),
            }
            for r in rows
        ],
    }


def _pct(value: object) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}%"  # type: ignore[arg-type]


def markdown(results: dict[str, object]) -> str:
    """The per-class table docs/heldout.md quotes: held-out and development rows, the
    advice's median |error| beside each baseline's, and the 80% interval's coverage."""
    lines = [
        "| class | split | rows | advice | linear | another row's ratio | Amdahl (dev fit) "
        "| 80% coverage |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    classes = results["classes"]
    assert isinstance(classes, dict)
    for cls in CLASSES:
        for split, key in (("held-out", "held_out"), ("development", "development")):
            s = classes[cls][key]
            if s["rows"] == 0:
                lines.append(f"| {CLASS_WORDS[cls]} | {split} | 0 | - | - | - | - | - |")
                continue
            b = s["baselines"]
            lines.append(
                f"| {CLASS_WORDS[cls]} | {split} | {s['rows']} | {_pct(s['median_abs_error'])} "
                f"| {_pct(b['linear'])} | {_pct(b['another_rows_ratio'])} "
                f"| {_pct(b['amdahl_dev_fit'])} | {_pct(s['coverage'])} |"
            )
    return "\n".join(lines) + "\n"


def _yes(ok: bool | None) -> str:
    return "-" if ok is None else ("met" if ok else "**not met**")


def goals_markdown(results: dict[str, object]) -> str:
    """Issue 73's goals per class on the held-out rows, each said met or not met."""
    lines = [
        "| class | held-out rows (>= 15) | median error <= 5% | beats linear by 1 point "
        "| 80% coverage in 70-90% | inside / below / above | median interval width (high / low) |",
        "| --- | --- | --- | --- | --- | ---: | ---: |",
    ]
    classes = results["classes"]
    assert isinstance(classes, dict)
    for cls in CLASSES:
        s, met = classes[cls]["held_out"], classes[cls]["goals_met"]
        if s["rows"] == 0:
            lines.append(f"| {CLASS_WORDS[cls]} | 0 | - | - | - | - | - |")
            continue
        linear = s["baselines"]["linear"]
        lines.append(
            f"| {CLASS_WORDS[cls]} | {s['rows']} ({_yes(met['enough_rows'])}) "
            f"| {_pct(s['median_abs_error'])} ({_yes(met['median_abs_error'])}) "
            f"| {_pct(s['median_abs_error'])} vs {_pct(linear)} ({_yes(met['beats_linear'])}) "
            f"| {_pct(s['coverage'])} ({_yes(met['coverage'])}) "
            f"| {s['covered']} / {s['below']} / {s['above']} | {s['median_width']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def _between(text: str, begin: str, end: str, body: str) -> str:
    head, rest = text.split(begin)
    return head + begin + body + end + rest.split(end, 1)[1]


def write_between(path: Path, begin: str, end: str, body: str) -> None:
    """``path``'s text between the markers ``begin`` and ``end`` replaced by ``body``."""
    path.write_text(_between(path.read_text(), begin, end, body))


def write_docs(path: Path, results: dict[str, object]) -> None:
    """``path``'s (``docs/heldout.md``'s) two tables of this file's rewritten."""
    text = _between(path.read_text(), DOCS_BEGIN, DOCS_END, markdown(results))
    path.write_text(_between(text, GOALS_BEGIN, GOALS_END, goals_markdown(results)))


def _terms(text: str) -> StepTerms:
    """``--terms nccl_latency=1,rank_spread=0``: the fitted terms with these replaced; a
    per-class term as ``rank_spread=multinode:0.07+pcie_p2p:0`` (the classes not named
    keep their fitted values)."""
    values: dict[str, object] = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        if name not in StepTerms.__dataclass_fields__:
            raise SystemExit(f"--terms: {name!r} is none of {list(StepTerms.__dataclass_fields__)}")
        if name == "nccl_latency":
            values[name] = bool(int(value))
        elif ":" in value:
            fitted = getattr(FITTED, name)
            per_class = (
                dict(fitted) if isinstance(fitted, tuple) else dict.fromkeys(CLASSES, fitted)
            )
            for part in value.split("+"):
                cls, _, number = part.partition(":")
                if cls not in CLASSES:
                    raise SystemExit(f"--terms: link class {cls!r} is none of {CLASSES}")
                per_class[cls] = float(number)
            values[name] = tuple((cls, per_class[cls]) for cls in CLASSES)
        else:
            values[name] = float(value)
    return replace(FITTED, **values)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "--out", type=Path, help=f"where the results go (default {OUT}; with --split: none)"
    )
    parser.add_argument("--docs", type=Path, help="rewrite this page's tables (docs/heldout.md)")
    parser.add_argument(
        "--split",
        choices=SPLITS,
        help="read and advise only this split's rows (development: while developing, "
        "no held-out row is advised); not with --docs",
    )
    parser.add_argument(
        "--terms",
        default="",
        help="the step model's fitted terms replaced, for an ablation written to --out "
        "(nccl_latency=1,contention_share=0.1,rank_spread=0 for every class, or "
        "rank_spread=multinode:0.07+pcie_p2p:0 per class)",
    )
    args = parser.parse_args(argv)
    if args.split is not None and args.docs is not None:
        parser.error("--docs quotes both splits: not with --split")
    out = args.out if args.out is not None or args.split is not None else OUT
    rows = [r for r in read_rows() if args.split in (None, r.split)]
    # an ablation's terms stand for every row; else each row's stack's fitted terms
    serial = evaluate(rows, _terms(args.terms) if args.terms else None)
    command = COMMAND + (f" --split {args.split}" if args.split else "")
    command += f" --terms {args.terms}" if args.terms else ""
    result = report(rows, serial, command)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1) + "\n")
    print(markdown(result), end="")
    if args.split != "development":
        print(goals_markdown(result), end="")
    print(
        f"flagged (kept out): {counted(len(result['flagged']), 'row')}; "  # type: ignore[arg-type]
        f"refused by the advice (kept out): {counted(len(result['refused']), 'row')}; "  # type: ignore[arg-type]
        f"written: {out or 'nothing (no --out)'}"
    )
    if args.docs is not None:
        write_docs(args.docs, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
