"""Fit the step model's terms nothing measured (``data/step_terms.json``) on the
development rows of the published tables, and choose which terms are in by their
leave-one-source-out error on those rows (issue 73, items 2-3).

    python benchmarks/fit_step_terms.py [--out benchmarks/results/step_terms_fit.json]

Declared before any figure was read, and kept whatever it gives:

* **Rows**: the unflagged development rows of ``advice_heldout.py`` (``split ==
  "development"``, ``benchmarks/published/README.md``); no held-out row is read, advised or
  fitted here.
* **Terms** (``gpuscale.advice.model.network``): ``nccl_latency`` (NCCL's tuning
  model for a preset link's collectives: no free parameter), ``contention_share`` (kappa:
  share of the hidden communication added to the step) and ``rank_spread`` (sigma: the
  slowest of N ranks waits ``sigma E[max of N] compute``). The variants are every subset
  of the three (8).
* **Fit**: one value of each free parameter for every link class (two classes have
  development rows of one source only), least squares of ``log(predicted / published)``
  over the rows fitted on, on a grid (kappa 0 to 1 by 0.01, sigma 0 to 0.2 by 0.002).
* **Sources** left out one at a time: a row's (table, device) as the table names the
  device: the TensorFlow page's DGX-1 P100, K80 on Google's and on Amazon's cloud, and
  NVIDIA's A100 80GB, V100 16GB and V100 32GB ResNet-50 rows: six groups; since the rows
  added on 2026-11-27 (``benchmarks/published/README.md``, rule 4), also each device of
  Lambda's FP32 table with development rows and KempnerForge's H200: 13; with the
  distributed-tensorflow-benchmarks report's K80 and P100 and DLPerf's two V100 tables of
  development rows (DeepSpeed's, OneFlow's), added the same day: 17.
* **Choice**: the variant of least leave-one-source-out error, the mean over classes of the
  class's median |error| of each row predicted by the fit without the row's source; on a
  tie (within 0.1 point) the variant with fewer terms. Its parameters are then fitted on
  every development row and written to ``data/step_terms.json`` by hand, with this file's
  result as their source (a test checks the two agree).

Extended on 2026-11-27 (issue 73: the gate of ``rank_spread`` to NVLink and PCIe without
P2P had been read off held-out rows), declared before any per-class variant was run:

* **Per-class variants**: each free parameter (kappa, sigma) is off, pooled (one value for
  every class, as above) or **per link class**; with ``nccl_latency`` off or on: 18
  variants, the 8 above among them.
* **Per-class fit**: the variant's pooled parameters, and the pooled value, are those of
  the same variant with every parameter pooled, fitted on every row fitted on; then each
  link class whose rows fitted on come from at least 3 sources (the groups above) takes
  the per-class parameters of least squared log error over that class's rows (both jointly
  where both are per class, the pooled ones held); a class of fewer sources takes the
  pooled value. Sources are counted among the rows fitted on, so a left-out source can
  drop its class below 3.
* **Size** (for the tie): ``nccl_latency`` and a pooled parameter count one each, a
  per-class parameter one per link class (4).
* **Choice**: as above (least leave-one-source-out error, ties within 0.1 point to the
  smaller size, then the lesser error).
* **The gate follows from the fit**: a class whose fitted value of a parameter is 0 has no
  such term. The chosen variant's values, per class (a pooled parameter: the same value in
  every class), are written by this script into ``data/step_terms.json``'s ``value``
  fields (``contention_share`` and ``rank_spread`` per class; the by-hand gate
  ``rank_spread_classes`` is gone); a test checks the data against this file's result. A
  link of no class (custom or measured) takes a parameter's value only where it is the
  same in every class, else none.

Extended on 2026-11-27 again (issue 73: "like with like includes hardware generation and
software stack"), declared after reading the development rows' residuals only (by source,
year, device generation, framework and strategy) and before this extension was fitted or
any held-out row advised with it:

* **Stack class of a row** (``advice_heldout.Row.stack``, from the ``device`` column alone,
  never a throughput): ``legacy`` where the device is of a generation before Volta
  (Kepler's K80, Pascal's P100: ``advice_heldout.PRE_VOLTA``), ``modern`` otherwise. On the
  development rows it is the 2017 TensorFlow 1.x tables (``tensorflow_benchmarks_2017``,
  ``cscs_distributed_tf_2017``: parameter servers and TensorFlow's own replicated
  all-reduce before NCCL 2; 5 of the 17 source groups, 174 of the 226 rows) against the
  rest (PyTorch DDP and FSDP of NGC 21-22 and 2026, DeepSpeed and OneFlow on V100: 12
  groups, 52 rows); every held-out row is ``modern`` (V100 and later, 2019 and later). Rows
  of other stacks split the same way on the development rows (published before 2019,
  TensorFlow 1.x, a parameter server or TensorFlow's replicated update), so one class
  stands for generation and stack together.
* **A user's request** is ``modern`` (``network.DEFAULT_STACK``), an assumption: the
  device catalogue has no device before Volta, and a device not in it is taken to run
  today's stack (NCCL 2 or later all-reduce).
* **Per-stack variants**: each free parameter (kappa, sigma) is off, pooled, per link
  class (as above), **per stack** or **per stack and link class**; with ``nccl_latency``
  off or on: 50 variants, the 18 above among them. Sizes for the tie: per stack 2, per
  stack and link class 8.
* **Per-stack fit**: as the per-class fit, with a parameter's cells the stacks (per
  stack) or the (stack, link class) pairs (per stack and link class): both parameters
  of the same mode fitted jointly in each cell, a parameter of another mode than the
  other's fitted in its cells with the other held at its pooled value. A cell whose rows
  fitted on come from fewer than 3 sources takes the next coarser value: a (stack, class)
  pair its stack's value (where the stack's rows come from at least 3 sources), else the
  pooled value.
* **Choice**: as above, unchanged (least leave-one-source-out error over the same 17
  groups, the mean over link classes of each class's median |error|; within 0.1 point the
  smaller size, then the lesser error). The chosen values go to ``data/step_terms.json``
  per stack and link class; ``advice_heldout.py`` and ``advice_intervals.py`` advise each
  row with its stack's values, the advice every request with ``modern``'s.
* Read on the development rows before this was written, not fitted to choose it: with
  sigma alone (kappa off), the 2017 groups' own least-squares sigma is 0.058-0.072 on
  one node (0.13-0.18 for the 2017 report's multi-node rows) and the other groups'
  0-0.2 (DeepSpeed's BERT rows 0, Lambda's A100 SXM4 rows 0.2): the development rows do
  not say that the older stacks want the larger wait. Other splits read the same way
  (three generations, PyTorch against other frameworks, parameter server against
  all-reduce) did no better than one pooled sigma by leave-one-source-out; the
  generation/stack split above is the one declared because it is the one the model can
  know of a request (from the device).

Extended on 2026-11-27 a third time (issue 73: the step model where people train),
written after trying both changes on the development rows alone (no held-out row advised
with either before the final check):

* **Loss: least absolute log error** (``LOSS``), not least squares: the choice judges a
  variant by the median |error|, and least absolute deviations fits the median of the log
  ratios; squares let the rows no term models (the K80 parameter servers of 64 and 128
  GPUs, published 0.5 and 0.28 of linear; Lambda's A100 BERT-large at 8, 0.42 of linear)
  pull sigma up for every other row (0.074 where the absolute loss gives 0.050, with the
  overlap below unchanged).
* **The overlap assumed where nothing measured it** (``data/advice_priors.json``'s
  ``overlap``) is PyTorch DDP's pipeline: each bucket's all-reduce starts when its
  gradients are ready (Li et al., "PyTorch Distributed", VLDB 2020, section 3.2.3), so
  everything but the last bucket hides behind the backward as far as it lasts (overlap
  1), where it was half. On the development rows, the chosen variant's
  leave-one-source-out error (mean over classes of the median |error|) was: half and
  squares 4.90% (sigma 0.074), all and squares 5.44% (0.090), half and absolute 4.37%
  (0.050), all and absolute 3.96% (0.060): the last is kept. The script fits under the
  overlap the data file holds; the other figures are this script run with the file's
  point set to 0.5 and ``LOSS`` to squares.
* Nothing else is changed: the variants, sources, tie and choice are as above.

Extended on 2026-11-27 a fourth time (issue 73: the overlap per link class), declared
before its figures were read; the candidates (``OVERLAP_CANDIDATES``) are the assumed
overlap (``data/advice_priors.json``'s ``overlap``: its ``point``, or its
``by_link_class`` where a class is named):

* **half**: 0.5 in every class (main's assumption);
* **pooled**: 1.0 in every class, DDP's pipeline (the assumption above);
* **per link class** (the candidate): 1.0 where the gradients go device to device (NVLink,
  PCIe with P2P, and over NICs within and between nodes: ``multinode``), 0.5 where they go
  through host memory (``pcie_no_p2p``): without P2P NCCL's SHM transport stages each
  chunk in a host-memory buffer (NCCL's user guide, ``NCCL_SHM_DISABLE``: "SHM is used
  between devices when peer-to-peer cannot happen, therefore, host memory is used";
  NVIDIA/nccl ``src/transport/shm.cc``), over the same PCIe lanes and host memory the
  backward's own transfers use, so the copies hide less.
* Each candidate is the data file set to it and this script run (``--data`` a copy for
  the two not kept), the step terms refitted under it by the rule above (variants, loss,
  sources, tie and choice unchanged), on the development rows as they are now (the rows
  added on 2026-11-27 included). **Choice** (the lead's rule, stated after the figures
  below were read and applied as written): **admissible**: a candidate under which the
  published single- vs dual-GPU study's measured answer holds (the 6.9M MLP on two GPUs
  behind a PCIe host bridge, given two step times: measured 0.78-0.90x;
  ``tests/advice/test_published_study.py``); **chosen**: the lowest development
  leave-one-source-out error of its chosen variant (the mean over classes of the median
  |error|) among the admissible.
* Result (``results/overlap_candidates.json``; 260 development rows): the chosen variant's
  leave-one-source-out error is 4.53% under half (sigma pooled 0.054; NVLink 6.1, P2P 2.2,
  without P2P 3.1, multi-node 6.6), 3.95% under pooled (sigma per stack and class; 6.5,
  2.1, 2.9, 4.3) and 4.09% per link class (the same variant; 6.5, 2.1, 3.4, 4.3). Per link
  class the class without P2P gains on today's cards (RTX 4090 7.0% -> 3.9%, RTX 2080 Ti
  22.7% -> 15.8%) and loses on the 2017 DGX-1 P100 rows through a parameter server (3.9% ->
  6.0%), which with the K80 rows are 90 of the class's 108. The study's two-GPU speedup
  (``gpuscale advise --params 6.9M --step-ms 18.6 --batch 8 --step-ms 30.5 --batch 64
  --device-name "RTX 4090" --interconnect pcie-phb --max-devices 2``; measured
  0.78-0.90x): 0.887x under half and per link class, 0.949x pooled. Pooled is not
  admissible; of half and per link class the lower error is per link class's: **kept**,
  in ``data/advice_priors.json`` (``overlap.by_link_class``; its ``point``, 1, for a link
  of no class), and the step terms are this script's fit under it.

Extended on 2026-11-29 (a physical restriction, not a choice by error), added after a
walk through the advice saw a faster link predict a slower run (``gpuscale advise --params
25.6M --flops-per-sample 12.3G --step-ms 98 --batch 256 --device-name "A100 SXM" --scaling
weak --max-devices 8``: 7.37x on ``nvlink4``, 7.39x on ``pcie4-x16``, 7.46x on
``pcie5-x16``), and an unused second node (``--nodes 2``) move every count within a node:
sigma had been fitted per link class, so the same compute waited a different share for its
slowest rank on each link:

* **sigma takes no value per link class** (``SIGMA_MODES``): ``rank_spread`` is off, pooled
  or per stack; its per-class and per-stack-and-class variants are not fitted or chosen.
  The wait for the slowest of N ranks is the spread of the ranks' compute (``sigma E[max
  of N] compute``): a property of the device, model and stack, not of the link that
  carries the gradients, which starts only when the slowest rank's gradients are ready.
  kappa keeps every mode: the communication hidden behind backward contends for the SMs,
  memory and (without P2P) the host's PCIe switch and memory, which are the link's.
* Nothing else is changed (rows, sources, loss, overlap, tie and choice as above): the
  variants are the 50 above less the 20 with sigma per class or per stack and class, 30.
  The variant chosen before this (kappa pooled, sigma per stack and class: 4.04%) is among
  those removed; ``results/step_terms_fit.json`` lists the 30 fitted.

Each row is advised once per value of ``nccl_latency`` with the other terms off; the
terms' effect on its step is then computed by the model's own functions
(``network.Collectives``) from the parts the advice
reports (compute, wait, communication and what backward hid), as ``step.step_at`` adds
them: the wait no less than the straggler's, the hidden communication's share added.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpuscale.advice.model.network import (
    CLASSES,
    STACKS,
    StepTerms,
    expected_max_normal,
)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import advice_heldout as heldout  # noqa: E402  (the rows and how each is advised)

OUT = HERE / "results" / "step_terms_fit.json"
DATA = HERE.parent / "src" / "gpuscale" / "data" / "step_terms.json"
COMMAND = "python benchmarks/fit_step_terms.py"
KAPPA_GRID = np.round(np.arange(0.0, 1.0001, 0.01), 4)
SIGMA_GRID = np.round(np.arange(0.0, 0.2001, 0.002), 4)
LOSS = "absolute"  # of the log ratio: "absolute" (the median's), or "squares"
OVERLAP_CANDIDATES = {  # link class: the overlap assumed (data/advice_priors.json)
    "half": dict.fromkeys(CLASSES, 0.5),
    "pooled": dict.fromkeys(CLASSES, 1.0),
    "per link class": {"nvlink": 1.0, "pcie_p2p": 1.0, "pcie_no_p2p": 0.5, "multinode": 1.0},
}
TIE = 0.001  # leave-one-source-out error within this of the best: the simpler variant
MIN_SOURCES = 3  # a class of fewer sources among the rows fitted on takes the pooled value
TERMS = ("nccl_latency", "contention_share", "rank_spread")
MODES = ("off", "pooled", "per_class", "per_stack", "per_stack_class")  # a parameter's
SIGMA_MODES = ("off", "pooled", "per_stack")  # the ranks' spread is the compute's, no link's
SIZES = {"off": 0, "pooled": 1, "per_class": len(CLASSES), "per_stack": len(STACKS)}
SIZES["per_stack_class"] = len(CLASSES) * len(STACKS)
WORDS = {
    "per_class": " per class",
    "per_stack": " per stack",
    "per_stack_class": " per stack and class",
}


@dataclass(frozen=True)
class Parts:
    """One count's step parts as the advice reports them with the fitted terms off."""

    n: int
    step_ms: float
    compute_ms: float
    wait_ms: float
    hidden_ms: float  # communication backward hid: comm - exposed


@dataclass(frozen=True)
class Advised:
    """A development row, its base count's and N's parts, and its loss (``LOSS`` of the
    log error) on the grid (kappa by sigma)."""

    row: heldout.Row
    base: Parts
    at: Parts
    loss: np.ndarray


Values = dict[str, dict[str, tuple[float, float]]]  # stack: link class: (kappa, sigma)


def group(row: heldout.Row) -> str:
    return f"{row.source}: {row.device}"


def parts(row: heldout.Row, nccl: bool) -> tuple[Parts, Parts, float]:
    """The base count's and N's parts with only ``nccl`` of the terms, and the advice's
    throughput ratio (to check that the parts give it back; its speedup also counts whole
    optimizer steps to train, a difference of under 0.1%)."""
    table = heldout.predictions(row, StepTerms(nccl_latency=nccl))
    found = []
    for n in (row.n_base, row.n_gpus):
        at = table.loc[n]
        found.append(
            Parts(
                n=n,
                step_ms=float(at["step_ms"]),
                compute_ms=float(at["compute_ms"]),
                wait_ms=float(at["wait_ms"]),
                hidden_ms=float(at["comm_ms"] - at["exposed_comm_ms"]),
            )
        )
    rate = table["samples_per_s"]
    return found[0], found[1], float(rate.loc[row.n_gpus] / rate.loc[row.n_base])


def step_with(p: Parts, terms: StepTerms, link: str) -> float:
    """The step of ``p`` on a network of ``link`` class with ``terms`` added as
    ``step.step_at`` adds them."""
    straggler_ms = terms.spread(link) * expected_max_normal(p.n) * p.compute_ms  # 0 at N = 1
    wait = max(p.wait_ms, straggler_ms)
    return p.step_ms - p.wait_ms + wait + terms.contention(link) * max(p.hidden_ms, 0.0)


def ratio(row: heldout.Row, base: Parts, at: Parts, terms: StepTerms) -> float:
    """Throughput at N over the base count, per-device batch kept, with ``terms`` (the
    row's stack's)."""
    link = row.link_class
    return at.n / base.n * step_with(base, terms, link) / step_with(at, terms, link)


def _grid_steps(p: Parts, kappas: np.ndarray, sigmas: np.ndarray) -> np.ndarray:
    """``step_with`` of ``p`` on the grid (kappa by sigma), every class's formula."""
    waits = np.maximum(p.wait_ms, sigmas * expected_max_normal(p.n) * p.compute_ms)
    if p.n < 2:
        waits = np.full_like(sigmas, p.wait_ms)
    return p.step_ms - p.wait_ms + waits[None, :] + kappas[:, None] * max(p.hidden_ms, 0.0)


def advised(row: heldout.Row, base: Parts, at: Parts) -> Advised:
    """``row`` with its loss on the whole grid (an ``off`` parameter reads
    its grid's first value, 0)."""
    predicted = (
        at.n
        / base.n
        * _grid_steps(base, KAPPA_GRID, SIGMA_GRID)
        / _grid_steps(at, KAPPA_GRID, SIGMA_GRID)
    )
    error = np.log(predicted / row.published)
    return Advised(row, base, at, np.abs(error) if LOSS == "absolute" else error**2)


def _key(mode: str, stack: str, link: str) -> str:
    """The cell a row of ``stack`` and ``link`` class is fitted in under a parameter's
    ``mode``."""
    if mode == "per_class":
        return link
    if mode == "per_stack":
        return stack
    return f"{stack}/{link}"


def _cell(mode: str, row: heldout.Row) -> str:
    return _key(mode, row.stack, row.link_class)


def fit(rows: list[Advised], kappa: str, sigma: str) -> Values:
    """The variant's values per stack and class (the module docstring's fits)."""
    nk = len(KAPPA_GRID) if kappa != "off" else 1
    ns = len(SIGMA_GRID) if sigma != "off" else 1

    def least(cell_rows: list[Advised], free: str) -> tuple[int, int]:
        """Grid indices of least loss over ``cell_rows``: both free (``both``), or one
        (``kappa``, ``sigma``) with the other held at its pooled index."""
        loss = sum(x.loss[:nk, :ns] for x in cell_rows)
        if free == "both":
            k, s = np.unravel_index(int(np.argmin(loss)), loss.shape)  # first of least
            return int(k), int(s)
        if free == "kappa":
            return int(np.argmin(loss[:, s0])), s0
        return k0, int(np.argmin(loss[k0, :]))

    def sources(cell_rows: list[Advised]) -> int:
        return len({group(x.row) for x in cell_rows})

    k0, s0 = 0, 0
    k0, s0 = least(rows, "both")
    index = {(st, c): [k0, s0] for st in STACKS for c in CLASSES}
    for position, (name, mode) in enumerate((("kappa", kappa), ("sigma", sigma))):
        if mode in ("off", "pooled"):
            continue
        free = "both" if kappa == sigma else name
        stack_value: dict[str, tuple[int, int]] = {}
        if mode == "per_stack_class":  # the next coarser value, where a pair has too few
            for st in STACKS:
                mine = [x for x in rows if x.row.stack == st]
                if sources(mine) >= MIN_SOURCES:
                    stack_value[st] = least(mine, free)
        for st, c in index:
            key = _key(mode, st, c)
            mine = [x for x in rows if _cell(mode, x.row) == key]
            if sources(mine) >= MIN_SOURCES:
                found = least(mine, free)
            elif mode == "per_stack_class" and st in stack_value:
                found = stack_value[st]
            else:
                continue  # the pooled value
            index[st, c][position] = found[position]
    return {
        st: {
            c: (float(KAPPA_GRID[index[st, c][0]]), float(SIGMA_GRID[index[st, c][1]]))
            for c in CLASSES
        }
        for st in STACKS
    }


def terms_of(nccl: bool, values: Values, stack: str) -> StepTerms:
    return StepTerms(
        nccl_latency=nccl,
        contention_share=tuple((c, values[stack][c][0]) for c in CLASSES),
        rank_spread=tuple((c, values[stack][c][1]) for c in CLASSES),
    )


def by_class(errors: list[tuple[str, float]]) -> dict[str, float]:
    return {
        cls: statistics.median(abs(e) for c, e in errors if c == cls)
        for cls in heldout.CLASSES
        if any(c == cls for c, _ in errors)
    }


def per_term(values: Values, position: int) -> dict[str, dict[str, float]]:
    return {st: {c: values[st][c][position] for c in CLASSES} for st in STACKS}


def write_data(path: Path, nccl: bool, values: Values) -> None:
    """The chosen values into ``data/step_terms.json``'s ``value`` fields, per stack and
    link class (its prose is written by hand)."""
    data = json.loads(path.read_text())
    terms = data["terms"]
    terms["nccl_latency"]["value"] = nccl
    terms["contention_share"]["value"] = per_term(values, 0)
    terms["rank_spread"]["value"] = per_term(values, 1)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the data file the chosen values go to"
    )
    args = parser.parse_args(argv)
    dev = [r for r in heldout.read_rows() if r.split == "development" and not r.flagged]
    groups = sorted({group(r) for r in dev})
    rows_of: dict[bool, list[Advised]] = {}
    for nccl in (False, True):
        rows_of[nccl] = []
        for row in dev:
            base, at, predicted = parts(row, nccl)
            # the parts give back the advice's own ratio with the terms off
            assert abs(ratio(row, base, at, StepTerms(nccl_latency=nccl)) / predicted - 1) < 1e-9
            rows_of[nccl].append(advised(row, base, at))
    variants = {}
    for nccl, kappa, sigma in itertools.product((False, True), MODES, SIGMA_MODES):
        modes = {"nccl_latency": "on" if nccl else "off", "contention_share": kappa}
        modes["rank_spread"] = sigma
        name = "+".join(t + WORDS.get(m, "") for t, m in modes.items() if m != "off")
        rows = rows_of[nccl]
        loso: list[tuple[str, float]] = []
        for g in groups:
            values = fit([x for x in rows if group(x.row) != g], kappa, sigma)
            loso += [
                (
                    x.row.link_class,
                    ratio(x.row, x.base, x.at, terms_of(nccl, values, x.row.stack))
                    / x.row.published
                    - 1,
                )
                for x in rows
                if group(x.row) == g
            ]
        values = fit(rows, kappa, sigma)
        in_sample = [
            (
                x.row.link_class,
                ratio(x.row, x.base, x.at, terms_of(nccl, values, x.row.stack)) / x.row.published
                - 1,
            )
            for x in rows
        ]
        per_class = by_class(loso)
        variants[name or "none"] = {
            "terms": modes,
            "size": int(nccl) + SIZES[kappa] + SIZES[sigma],
            "loso_error": statistics.mean(per_class.values()),
            "loso_by_class": per_class,
            "loso_by_stack": {
                st: statistics.median(
                    abs(e)
                    for x, (_, e) in zip(loso_rows(rows, groups), loso, strict=True)
                    if x.row.stack == st
                )
                for st in STACKS
            },
            "fitted_on_all": {
                "contention_share": per_term(values, 0),
                "rank_spread": per_term(values, 1),
            },
            "in_sample_by_class": by_class(in_sample),
        }
    least = min(v["loso_error"] for v in variants.values())
    chosen = min(
        (k for k, v in variants.items() if v["loso_error"] <= least + TIE),
        key=lambda k: (variants[k]["size"], variants[k]["loso_error"]),
    )
    fitted = variants[chosen]["fitted_on_all"]
    result = {
        "command": COMMAND,
        "rows": len(dev),
        "groups": {g: sum(group(r) == g for r in dev) for g in groups},
        "stacks": {st: sorted({group(r) for r in dev if r.stack == st}) for st in STACKS},
        "rows_by_stack": {st: sum(r.stack == st for r in dev) for st in STACKS},
        "sources_by_class": {
            c: sorted({group(r) for r in dev if r.link_class == c}) for c in CLASSES
        },
        "rule": "the variant of least leave-one-source-out error (mean over classes of the "
        f"median |error|), the smaller size within {TIE:.3f} (a per-class parameter: one per "
        "class, per stack: one per stack, per stack and class: one per pair); a parameter's "
        f"cell (class, stack or pair) fitted on its rows where they come from at least "
        f"{MIN_SOURCES} sources, else the next coarser value (a pair: its stack's, then the "
        "pooled value); parameters fitted on every development row, least "
        f"{'absolute' if LOSS == 'absolute' else 'squares of'} log ratios",
        "chosen": chosen,
        "chosen_terms": {"nccl_latency": variants[chosen]["terms"]["nccl_latency"] == "on"}
        | fitted,
        "gate": {
            t: {st: [c for c in CLASSES if fitted[t][st][c] > 0] for st in STACKS}
            for t in ("contention_share", "rank_spread")
        },
        "variants": variants,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    chosen_values = {
        st: {c: (fitted["contention_share"][st][c], fitted["rank_spread"][st][c]) for c in CLASSES}
        for st in STACKS
    }
    write_data(args.data, result["chosen_terms"]["nccl_latency"], chosen_values)
    for name, v in sorted(variants.items(), key=lambda kv: kv[1]["loso_error"]):
        classes = " ".join(f"{c}={100 * e:.1f}%" for c, e in v["loso_by_class"].items())
        stacks = " ".join(f"{st}={100 * e:.1f}%" for st, e in v["loso_by_stack"].items())
        print(f"{name:70} size {v['size']} LOSO {100 * v['loso_error']:.2f}%  {classes}  {stacks}")
        print(f"{'':70} {v['fitted_on_all']}")
    print(f"chosen: {chosen} {result['chosen_terms']}; written: {args.out}, {args.data}")
    return 0


def loso_rows(rows: list[Advised], groups: list[str]) -> list[Advised]:
    """``rows`` in the order the leave-one-source-out loop predicts them (by group)."""
    return [x for g in groups for x in rows if group(x.row) == g]


if __name__ == "__main__":
    sys.exit(main())
