"""95% bootstrap intervals for time to train, speedup and E' that cover.

Each result's runs, failed ones included, are resampled and every replicate is scored by
the round's own rule (olympic trim, failed runs dropped first, no score past the
allowed failures): ``gpuscale.analysis.resampling``. Where runs are few their
convergence is pooled: each run's convergence is drawn from every closed-division run
of the workload at that global batch and the round's reference convergence points (RCPs)
at it (within a factor of 2 of the batch where nothing else ran at it), by the batch's law
(``gpuscale.analysis.convergence_law``: where it converges at a few whole counts, a law
drawn per replicate without the result's own runs, for its time and a speedup alike); a
result keeps its own runs'
spread where they vary significantly more than the pool (a one-sided F test at 5%).
Results (and RCP batches) whose mean samples to converge differ from a result's by more
than one result's own runs spread (:class:`ConvergenceSpread`) are kept out of its pool:
no one law holds 1.9 and 18 epochs (v0.7 DLRM, GPUs against TPUs at one batch). Only
closed-division results pool (:func:`not_closed`): the closed rules fix the model and
the hyperparameters the law rests on, the open division may change either (v0.7 SIAT's
open ResNet converged in 20 epochs at 4,096, the closed ones there in 38 and 40), so an
open result draws from no pool and is in none. A result whose samples to converge are
flagged as impossible (``samples_to_converge_flag``: another unit, a logging error) is
in no pool and draws from none: its interval rests on its own runs' times alone
(:func:`result_runs`). A counted run whose logged time cannot be true (the runs'
``time_flag``: v0.7 Google tpu-v3-8192-TF SSD, 922 min beside 0.46) keeps its official
score's part (MLCommons' olympic average drops it) but no replicate draws its time: a
draw of it takes one of its result's other counted runs' (``ResultRuns.untimed``),
since it ran and converged as they did and its own time is unknown
(``ci_untimed_runs``).

Intervals are basic bootstrap intervals on the log scale, ``T x exp(-q)`` for the
quantiles ``q`` of the replicates' log errors, the bootstrap world's true scores being
the official ones (for a time where the law is drawn: each replicate law's expected
score, the law drawn without the result's own runs, and the interval reaching as far as
the counts no pooled run showed could move the truth). The speedup ``S = T_ref / T``
accounts for how the reference was chosen: under the study's rule (and per family) it
is the slowest of the systems at the fewest accelerators, so each replicate takes the
slowest of those candidates' replicate scores, and its error is measured against that
candidate's official score: the upward bias of a maximum of noisy scores is corrected,
not inherited. Every interval holds its own estimate
(``gpuscale.analysis.resampling.basic_interval``). Seeded. Coverage, measured where the
truth is known: ``benchmarks/interval_coverage.py``; on real runs:
``benchmarks/interval_real_check.py``."""

from __future__ import annotations

import functools
import math
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuscale.analysis.convergence_law import PoolDraws, pool_draws
from gpuscale.analysis.critical_batch import round_rcp_runs
from gpuscale.analysis.measured_bounds import LogRatioBound, read_bound
from gpuscale.analysis.metrics import flagged_results, within_own_family
from gpuscale.analysis.resampling import ResultRuns, basic_interval, result_ratios
from gpuscale.tables import CI_COLUMNS, CI_POOL_COLUMNS, FAMILY_CI_COLUMNS
from gpuscale.tables.workloads import MAX_DROPPED_RUNS

_Key = tuple[str, str, str, str]  # round, org, system_id, benchmark
# The bound on how far apart pooled results' samples to converge may be, measured by
# ``benchmarks/convergence_spread.py``.
SPREAD_FILE = "convergence_spread.json"


def result_runs(
    runs: pd.DataFrame, flagged: Collection[_Key]
) -> dict[_Key, tuple[ResultRuns, float]]:
    """Every result of ``runs`` as its ``ResultRuns`` and its global batch (NaN unknown),
    in the order the results first appear. The samples to converge of a ``flagged`` result
    (:func:`flagged_results`) are NaN: no convergence law is drawn from them nor for them.
    A counted run whose time cannot be true (``time_flag``) is ``untimed``: its time and
    samples are in no draw, while it stays one of the result's runs."""
    counted = runs["counted"].astype(bool).to_numpy()
    untimed = counted & _time_flagged(runs)
    counted = counted & ~untimed
    times = runs["time_to_train_min"].to_numpy(float)
    samples = pd.to_numeric(runs["samples_to_converge"], errors="coerce").to_numpy(float)
    if flagged:
        columns = [runs[c].astype(str) for c in ("round", "org", "system_id", "benchmark")]
        keys = zip(*columns, strict=True)
        samples = np.where([k in flagged for k in keys], np.nan, samples)
    batches = pd.to_numeric(runs["global_batch_size"], errors="coerce").to_numpy(float)
    groups = runs.groupby(["round", "org", "system_id", "benchmark"], sort=False).indices
    out = {}
    for key, rows in groups.items():  # numpy per result: a DataFrame each was ~1 ms
        kept = rows[counted[rows]]
        batch = batches[rows][~np.isnan(batches[rows])]
        out[key] = (
            ResultRuns(
                times_min=times[kept],
                samples=samples[kept],
                failed=len(rows) - len(kept) - int(untimed[rows].sum()),
                max_dropped=MAX_DROPPED_RUNS.get(str(key[3]), 1),
                untimed=int(untimed[rows].sum()),
            ),
            float(next(iter(batch), math.nan)),
        )
    return out


def _time_flagged(runs: pd.DataFrame) -> np.ndarray:
    """Which runs logged a time that cannot be true (``time_flag``; none in a runs table
    from before the column)."""
    if "time_flag" not in runs:
        return np.zeros(len(runs), bool)
    return (runs["time_flag"].fillna("").astype(str) != "").to_numpy()


@functools.lru_cache(maxsize=64)
def _rcp_groups(round_name: str, benchmark: str) -> tuple[tuple[float, np.ndarray], ...]:
    """(batch, log samples) of each RCP batch of the round's ruleset, as the one reader of
    the RCP files reads them (``mlperf.rcp.rcp_runs``: a run more than 10x from its
    batch's median, which cannot be true, is left out there and said in the round's
    problems)."""
    return tuple(
        (batch, np.log(np.asarray(values, float)))
        for batch, values in round_rcp_runs(round_name, benchmark)
    )


def log_samples(result: ResultRuns) -> np.ndarray | None:
    """Log samples (or epochs) to converge of the counted runs; None where a counted run
    has no positive count (or none counted)."""
    samples = np.asarray(result.samples, float)
    if len(samples) == 0 or not (np.isfinite(samples) & (samples > 0)).all():
        return None
    return np.log(samples)


@dataclass(frozen=True, slots=True)
class ConvergenceSpread(LogRatioBound):
    """How far apart two results' samples (or epochs) to converge at one batch may be and
    still be pooled: ``log_ratio``, the ``quantile`` of the range (largest over smallest,
    log) of one result's own runs, over ``results`` results of ``rounds``; the runs of a
    result vary this much, so two results whose means differ more converge by two laws
    (another definition of an epoch, other hyperparameters), never one. ``across``: the
    same quantiles of each result's log deviation from the median of the other results at
    its batch (``pairs`` of them), for comparison; ``command`` measured it."""

    quantile: float
    log_ratio: float
    results: int
    rounds: tuple[str, ...]
    across: dict[str, float]
    pairs: int
    command: str


@functools.cache
def convergence_spread() -> ConvergenceSpread:
    """The bound measured on the bundled rounds (``data/convergence_spread.json``)."""
    return read_bound(ConvergenceSpread, SPREAD_FILE)


def measure_convergence_spread(runs: pd.DataFrame, scores: pd.DataFrame, quantile: float) -> dict:
    """The figures of :class:`ConvergenceSpread` (but ``command``) measured on a runs
    table: each result's counted runs with a positive samples to converge (two or more)
    give the range of their log values; each result at a batch with another gives its
    mean log value's deviation from the median of the others' means. A result ``scores``
    flag (:func:`flagged_results`) counts in neither."""
    results = result_runs(runs, flagged_results(scores))
    ranges, means = [], {}
    for key, (result, batch) in results.items():
        values = log_samples(result)
        if values is None:
            continue
        if len(values) >= 2:
            ranges.append(float(values.max() - values.min()))
        if batch > 0:
            means.setdefault((key[0], key[3], batch), []).append(float(values.mean()))
    deviations = [
        abs(m - float(np.median(group[:i] + group[i + 1 :])))
        for group in means.values()
        if len(group) >= 2
        for i, m in enumerate(group)
    ]
    return {
        "quantile": quantile,
        "log_ratio": float(np.quantile(ranges, quantile)),
        "results": len(ranges),
        "rounds": sorted({str(k[0]) for k in results}),
        "across": {f"{q:g}": float(np.quantile(deviations, q)) for q in (0.5, 0.9, 0.99, 1.0)},
        "pairs": len(deviations),
    }


@dataclass(frozen=True, slots=True)
class Pool:
    """The runs pooled for a result: the ``batches`` pooled, the log samples to converge
    at each (``groups``) and by result and RCP batch (``parts``), the ``members`` pooled
    (result keys, ``("rcp", batch)``), and those kept apart (``apart``: each one's key
    and the ratio of its mean samples to converge to the result's)."""

    batches: tuple[float, ...]
    groups: list[np.ndarray]
    parts: list[np.ndarray]
    members: tuple
    apart: tuple[tuple[tuple, float], ...] = ()


def not_closed(runs: pd.DataFrame, *frames: pd.DataFrame | None) -> set[_Key]:
    """The results of ``runs`` and ``frames`` (a scaling or scores table) that are not
    closed division: a run's log (``log_division``) or the system description
    (``division``) names another division (open); one that names none is not counted."""
    keys = ["round", "org", "system_id", "benchmark"]
    out: set[_Key] = set()
    for frame, column in ((runs, "log_division"), *((f, "division") for f in frames)):
        if frame is None or column not in frame:
            continue
        division = frame[column].fillna("").astype(str)
        other = frame[(division != "") & (division != "closed")]
        out |= {tuple(map(str, k)) for k in other[keys].itertuples(index=False)}
    return out


def convergence_pool(
    results: dict[_Key, tuple[ResultRuns, float]],
    key: _Key,
    batch: float,
    logs: dict[_Key, np.ndarray | None] | None = None,
    bound: float = math.inf,
    others: Collection[_Key] = (),
) -> tuple[Pool | None, tuple[tuple[tuple, float], ...]]:
    """The runs pooled for a result at ``batch``: every run of the same round's and
    benchmark's results at that batch and the RCPs at it; where none but the result
    itself, each batch within a factor of 2 of it. A result or RCP batch whose mean log
    samples to converge is more than ``bound`` from the result's own is kept apart (its
    runs converge by another law; :class:`ConvergenceSpread`). ``others``: the
    results of another division than closed (:func:`not_closed`), never pooled. The
    pool is None without a batch, for a result of ``others``, or where
    the result's own runs would be the whole pool; the second item is what was kept
    apart either way. ``logs``: each result's :func:`log_samples`, where computed."""
    round_name, _, _, benchmark = key
    own = logs[key] if logs is not None else log_samples(results[key][0])
    if not batch > 0 or own is None:  # a result without its own counts draws from no law
        return None, ()
    if key in others:  # open: its own model and training, its own law
        return None, ()
    centre = float(np.mean(own))
    sources: dict[float, list[tuple[tuple, np.ndarray]]] = {}
    apart: dict[float, list[tuple[tuple, float]]] = {}
    found = [
        (k, logs[k] if logs is not None else log_samples(r), b)
        for k, (r, b) in results.items()
        if k[0] == round_name and k[3] == benchmark and k not in others
    ]
    found += [(("rcp", b), values, b) for b, values in _rcp_groups(round_name, benchmark)]
    for k, values, b in found:
        if values is None or not b > 0:
            continue
        gap = float(np.mean(values)) - centre
        if abs(gap) > bound:
            apart.setdefault(b, []).append((k, math.exp(gap)))
        else:
            sources.setdefault(b, []).append((k, values))
    chosen = [batch]
    if len(sources.get(batch, ())) < 2:  # only the result itself ran at this batch
        chosen = sorted(b for b in sources if batch / 2 <= b <= batch * 2)
    left = tuple(a for b in sorted({batch, *chosen}) for a in apart.get(b, ()))
    if sum(len(sources[b]) for b in chosen) < 2:  # none but the result itself
        return None, left
    parts = [v for b in chosen for _, v in sources[b]]
    members = tuple(k for b in chosen for k, _ in sources[b])
    groups = [np.concatenate([v for _, v in sources[b]]) for b in chosen]
    return Pool(tuple(chosen), groups, parts, members, left), left


def _candidates(table: pd.DataFrame) -> list[list[int]]:
    """For each row, the positions of the systems its reference was chosen among: those
    at the reference's accelerator count under the same reference (the study's rule or
    per family: the slowest of them is the reference); the reference alone when named."""
    ref = (table["reference_org"] + "/" + table["reference_system_id"]).to_numpy()
    own = (table["org"] + "/" + table["system_id"]).to_numpy()
    count = table["accelerators"].to_numpy(float)
    ref_count = table["reference_accelerators"].to_numpy(float)
    chosen = table["reference_rule"].isin(["study", "family"]).to_numpy()
    out = []
    for pos in range(len(table)):
        same = ref == ref[pos]
        same &= count == ref_count[pos] if chosen[pos] else own == ref[pos]
        out.append(list(np.flatnonzero(same)))
    return out


def bootstrap_intervals(
    table: pd.DataFrame,
    runs: pd.DataFrame,
    *,
    scores: pd.DataFrame | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """CI columns (``gpuscale.tables.CI_COLUMNS``) for every row of a scaling table (see
    the module docstring), and what each result's pool kept apart (``CI_POOL_COLUMNS``).
    NaN where a result has too few runs to score a replicate (or its reference has).
    The samples to converge flagged in ``table`` or in the round's ``scores`` (results of
    ``runs`` the table left out pool too) are in no pool (:func:`result_runs`)."""
    rng = np.random.default_rng(seed)
    bound = convergence_spread().log_ratio
    apart: dict[int, tuple[tuple[tuple, float], ...]] = {}
    # Only the table's rounds and benchmarks: a result's pool is drawn from its own
    # round and benchmark (the order of those results is kept, and with it every draw).
    mine = runs["round"].isin(table["round"].unique()) & runs["benchmark"].isin(
        table["benchmark"].unique()
    )
    results = result_runs(runs[mine.to_numpy()], flagged_results(table) | flagged_results(scores))
    logs = {key: log_samples(result) for key, (result, _) in results.items()}
    other = not_closed(runs[mine.to_numpy()], table, scores)
    pools: dict[tuple, PoolDraws | None] = {}  # one law per pooled batches: shared draws
    law_rng = np.random.default_rng([seed, 1])  # its own stream: the other draws as before
    ratios = np.full((3, len(table), n_boot), np.nan)  # times, ratios, unseen counts
    columns = [table[c] for c in ("round", "org", "system_id", "benchmark")]
    keys = list(zip(*columns, strict=True))
    for pos, key in enumerate(keys):
        if key in results:
            result, batch = results[key]
            pool, kept_apart = convergence_pool(results, key, batch, logs, bound, other)
            apart[pos] = kept_apart
            law = None
            if pool is not None:
                at = (key[0], key[3], pool.batches)  # the same runs: the same law
                if pool.apart:
                    at += (pool.members,)
                if at not in pools:
                    pools[at] = pool_draws(pool.groups, n_boot, law_rng, pool.parts)
                law = pools[at]
            ratios[:, pos] = result_ratios(result, law, n_boot, rng)
    times = table["time_to_train_min"].to_numpy(float)
    speedups = table["speedup"].to_numpy(float)
    ref_counts = table["reference_accelerators"].to_numpy(float)
    counts = table["accelerators"].to_numpy(float)
    is_reference = (table["org"] == table["reference_org"]) & (
        table["system_id"] == table["reference_system_id"]
    ).to_numpy(dtype=bool, na_value=False)
    out = np.full((len(table), len(CI_COLUMNS)), np.nan)
    for pos, among in enumerate(_candidates(table)):
        low, high = basic_interval(times[pos], np.log(ratios[0, pos]))
        unseen = basic_interval(times[pos], np.log(ratios[2, pos]))  # counts not shown
        out[pos, 0:2] = min(low, unseen[0]), max(high, unseen[1])
        if not among:
            continue
        if np.isnan(ratios[1, among[int(np.argmax(times[among]))]]).all():
            continue  # the reference itself cannot be resampled
        if is_reference[pos]:
            out[pos, 2:6] = 1.0  # the reference against itself
            continue
        errors = _speedup_errors(times, ratios[1], among, pos)
        out[pos, 2:4] = basic_interval(float(speedups[pos]), errors)
        out[pos, 4:6] = out[pos, 2:4] * (ref_counts[pos] / counts[pos])
    frame = pd.DataFrame(out, index=table.index, columns=list(CI_COLUMNS))
    ratios_apart = [
        max((r for _, r in apart.get(pos, ())), key=lambda r: abs(math.log(r)), default=math.nan)
        for pos in range(len(table))
    ]
    frame[CI_POOL_COLUMNS[0]] = [len(apart.get(pos, ())) for pos in range(len(table))]
    frame[CI_POOL_COLUMNS[1]] = ratios_apart
    frame[CI_POOL_COLUMNS[2]] = [results[k][0].untimed if k in results else 0 for k in keys]
    return frame


def family_intervals(
    table: pd.DataFrame,
    runs: pd.DataFrame,
    ci: pd.DataFrame,
    *,
    scores: pd.DataFrame | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """``FAMILY_CI_COLUMNS`` for every row of a scaling table: the 95% intervals of its
    speedup and E' against its own family's reference (``metrics.within_own_family``),
    as :func:`bootstrap_intervals` gives them under the rule ``family`` (``analyze -r
    family``'s, the same draws): the reference's own runs and its choice as the slowest
    at its family's fewest accelerators are resampled too, so a system's E' near 1 is
    not read as apart from its reference by the system's spread alone. ``ci``: the
    table's own intervals (:func:`bootstrap_intervals` of the same ``runs``, ``scores``,
    ``n_boot`` and ``seed``), kept where the table is already against each family's own
    reference."""
    wanted = list(CI_COLUMNS[2:])
    if not table.empty and not (table["reference_rule"] == "family").all():
        families = table.groupby("accelerator_family", sort=True)
        own = pd.concat([within_own_family(group) for _, group in families]).loc[table.index]
        # in the table's order, as ``-r family``'s table has it: the same draws
        own = own.reset_index(drop=True).assign(reference_rule="family")
        ci = bootstrap_intervals(own, runs, scores=scores, n_boot=n_boot, seed=seed)
        ci = ci.set_axis(table.index, axis=0)
    return ci[wanted].set_axis(list(FAMILY_CI_COLUMNS), axis=1).reindex(table.index)


def _speedup_errors(
    times: np.ndarray, ratios: np.ndarray, among: list[int], pos: int
) -> np.ndarray:
    """Log errors of the speedup of row ``pos`` in each replicate. The reference is the
    slowest of the candidates ``among``, so its error is that of the slowest candidate of
    the replicate (against that candidate's own true, official, score): upward on
    average, and less spread than one system's. For a row that is itself a candidate the
    slowest-of-several is not smooth in its own score, so the reference keeps its own
    replicate errors, shifted by its own selection bias: its mean error in the replicates
    where it is the slowest over its mean error in all (0 when it is alone at its count).
    Not the mean error of whichever candidate is slowest: a noisy candidate is slowest
    only when drawn high, and that bias is not the reference's (RetinaNet v5.0, H200: a
    candidate at another batch, 1.9% spread, made the precise reference's shift 0.6%, four
    times its peers' intervals, which then excluded their own speedups).
    A candidate with too few runs to resample stays at its official score."""
    fixed = np.isnan(ratios[among]).all(axis=1, keepdims=True)
    errors = np.log(np.where(fixed, 1.0, ratios[among]))  # each candidate's log error
    drawn = np.log(times[among])[:, None] + errors
    chosen = np.argmax(np.where(np.isnan(drawn), -np.inf, drawn), axis=0)
    slowest = errors[chosen, np.arange(errors.shape[1])]
    if pos not in among:
        return slowest - np.log(ratios[pos])
    reference = int(np.argmax(times[among]))
    own = errors[reference]
    picked = chosen == reference
    bias = np.nanmean(own[picked]) - np.nanmean(own) if picked.any() else 0.0
    return own - np.log(ratios[pos]) + bias
