"""Energy to train per result: per sample, per accelerator-hour, and the compute share.

From the ``scores`` energy (the official rule over the kept runs, kJ, times the RCP
scaling factor as MLCommons scores it) and the ``runs`` split into compute (nodes) and
interconnect (switches):
``energy_per_sample_j = 1000 * sum(energy_kj) / sum(samples_to_converge)`` over the runs
the score kept, as measured (unscaled: a physical quantity, where the convergence count is
in samples and not flagged as impossible),
``energy_per_accelerator_hour_kj = energy_kj / (N * T / 60)`` (both scaled alike), whose
power per accelerator (``/ 3.6``, W) outside what any accelerator draws flags the row
(``energy_flag``, ``plausibility.accelerator_power_flag``): kept in the table, left out of
the headline, the energy-against-scale and measured-twice findings and the report's figure.
"""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.metrics import plausible_samples
from gpuscale.names import resolve_workload
from gpuscale.plausibility import accelerator_power_flag
from gpuscale.quantities import TABLE_DIGITS, counted, joined, number
from gpuscale.tables import RoundTables, Unit, display_name, round_key
from gpuscale.tables.checks import check_round_tables, check_text
from gpuscale.tables.measures import accelerator_hours
from gpuscale.tables.power_copies import COPIES_SUMMED
from gpuscale.tables.power_scope import named_scope, power_scope, scope_disagreement
from gpuscale.tables.republished import is_log_flagged
from gpuscale.tables.rounds import NO_POWER
from gpuscale.tables.views import ENERGY_DROP_ORDER, ENERGY_KEYS, ENERGY_SHOWN, TableView


def energy_table(tables: RoundTables, benchmark: str | None = None) -> pd.DataFrame:
    """Scores with an energy result and the derived energy columns, of one benchmark's
    workload (read as ``--benchmark`` reads it: ``BERT``, ``dlrm``, against the workloads
    of ``tables``; :class:`~gpuscale.names.UnknownNameError`, a ValueError, for none of
    them), every workload's where ``benchmark`` is None. Every power
    measurement is a row, results with the same runs under another name included (the
    same runs measured at another point of the power chain: ``same_runs_as`` names the
    other); ``power_scope`` says where each was measured (its power logs' word, else its
    names': :func:`gpuscale.tables.power_scope.power_scope`). A result
    whose logs contradict their folder (``log_flag``) is left out, as in every analysis.
    Empty for rounds without power logs (before v4.0), and a benchmark's without them:
    either says why in ``attrs["why_empty"]``, as ``gpuscale energy`` does."""
    check_round_tables(tables)
    check_text(benchmark, "benchmark", optional=True)
    every = _every_energy(tables)
    if benchmark is None:
        if every.empty:  # why, as ``gpuscale energy`` says it of the rounds
            every.attrs["why_empty"] = no_energy_reason(tables, every, [])
        return every
    workload = resolve_workload(benchmark, tables.scores, call="energy_table({round}, ...)")
    found = every[every["workload"] == workload]
    if found.empty:  # why, as ``gpuscale energy`` says it
        found.attrs["why_empty"] = no_energy_reason(tables, every, [workload])
    return found


def _every_energy(tables: RoundTables) -> pd.DataFrame:
    scores = tables.scores[~is_log_flagged(tables.scores).to_numpy(bool)]
    scores = scores.dropna(subset=["energy_kj"]).copy()
    if scores.empty:  # no row, every column a full table has (an empty CSV's header)
        derived = ("compute_share", "energy_per_accelerator_hour_kj", "energy_per_sample_j")
        text = {c: pd.Series(dtype=str) for c in ("power_scope", "energy_flag")}
        return scores.assign(**text, **dict.fromkeys(derived, 0.0))
    scores["power_scope"] = power_scope(scores)
    kept = tables.runs[tables.runs["kept"].astype(bool)]
    # a kept run's samples only where it has an energy: sum(energy) / sum(samples) of one
    # set of runs (a run without either leaves the sum NaN: min_count)
    measured = kept[["compute_energy_kj", "interconnect_energy_kj", "energy_kj"]].astype(float)
    measured["samples"] = kept["samples_to_converge"].astype(float)
    by_result = [kept[c] for c in ("round", "org", "system_id", "benchmark")]
    parts = measured.groupby(by_result).sum(min_count=1)
    parts = parts.where(~measured.isna().groupby(by_result).any())
    keys = pd.MultiIndex.from_frame(scores[["round", "org", "system_id", "benchmark"]])
    compute = parts["compute_energy_kj"].reindex(keys).to_numpy()
    total = compute + parts["interconnect_energy_kj"].reindex(keys).to_numpy()
    scores["compute_share"] = compute / total
    hours = accelerator_hours(scores["accelerators"], scores["time_to_train_min"])
    # float64, as every other energy column (an Int64 count made it Float64: pd.NA, not NaN)
    scores["energy_per_accelerator_hour_kj"] = (scores["energy_kj"] / hours).astype(float)
    scores["energy_flag"] = energy_flags(scores)
    # the kept runs' measured energy over the samples they trained (unscaled): the score's
    # scaling factor stretches its energy and time, not the work done
    per_sample = 1000.0 * parts["energy_kj"] / parts["samples"]
    per_sample = pd.Series(per_sample.reindex(keys).to_numpy(), index=scores.index)
    counted_in_samples = scores["convergence_unit"] == str(Unit.SAMPLES)
    scores["energy_per_sample_j"] = per_sample.where(
        counted_in_samples & plausible_samples(scores).notna()
    )
    return scores.sort_values(["round", "benchmark", "accelerators"]).reset_index(drop=True)


def energy_flags(scores: pd.DataFrame) -> list[str]:
    """Each score row's ``energy_flag``: why the power per accelerator its energy to train
    implies (kJ per accelerator-hour / 3.6, W) cannot be true, a wrong unit or count in the
    logs, not a finding (``plausibility.accelerator_power_flag``; "" where plausible or
    without an energy)."""
    columns = (scores[c].tolist() for c in ("energy_kj", "accelerators", "time_to_train_min"))
    return [accelerator_power_flag(*row) for row in zip(*columns, strict=True)]


def energy_against_scale(energy: pd.DataFrame) -> pd.DataFrame:
    """How energy to train changes with the accelerator count, where one submitter has
    power results of a workload at several counts on one accelerator family (one row per
    larger count, against the smallest). Energy to train is ``N x T x P`` (``P`` the
    average power per accelerator, host included), so between two counts

        ``energy ratio = (N2 T2) / (N1 T1) x P2 / P1 = 1 / E'(2 vs 1) x power ratio``

    (``E'`` of the larger against the smaller). Columns: round, workload, org, submitter,
    accelerator_family, accelerators_from, accelerators_to, energy_from_kj, energy_to_kj,
    energy_ratio, inverse_efficiency (``1 / E'``), power_ratio, energy_per_sample_from_j,
    energy_per_sample_to_j (NaN where convergence is not counted in samples)."""
    rows = []
    keys = ["round", "workload", "org", "accelerator_family"]
    # a result without its count, time or energy, or whose energy cannot be true, has no
    # place on the scale
    energy = plausible_energy(energy).dropna(
        subset=["accelerators", "time_to_train_min", "energy_kj"]
    )
    for key, group in energy.groupby(keys, sort=True):
        # the fastest result at each count (two systems at one count: the faster one)
        best = group.sort_values("time_to_train_min").drop_duplicates("accelerators")
        best = best.sort_values("accelerators")
        if len(best) < 2:
            continue
        small = best.iloc[0]
        for large in best.iloc[1:].itertuples(index=False):
            inverse = accelerator_hours(large.accelerators, large.time_to_train_min) / (
                accelerator_hours(small["accelerators"], small["time_to_train_min"])
            )
            ratio = large.energy_kj / small["energy_kj"]
            rows.append(
                dict(zip(keys, key, strict=True))
                | {
                    "submitter": small["submitter"],
                    "accelerators_from": int(small["accelerators"]),
                    "accelerators_to": int(large.accelerators),
                    "energy_from_kj": float(small["energy_kj"]),
                    "energy_to_kj": float(large.energy_kj),
                    "energy_ratio": float(ratio),
                    "inverse_efficiency": float(inverse),
                    "power_ratio": float(ratio / inverse),
                    "energy_per_sample_from_j": float(small["energy_per_sample_j"]),
                    "energy_per_sample_to_j": float(large.energy_per_sample_j),
                }
            )
    return pd.DataFrame(rows, columns=list(ENERGY_SCALE_COLUMNS))


ENERGY_SCALE_COLUMNS: tuple[str, ...] = (
    "round",
    "workload",
    "org",
    "accelerator_family",
    "submitter",
    "accelerators_from",
    "accelerators_to",
    "energy_from_kj",
    "energy_to_kj",
    "energy_ratio",
    "inverse_efficiency",
    "power_ratio",
    "energy_per_sample_from_j",
    "energy_per_sample_to_j",
)


# How the energy-against-scale sentence ends, by whether the energy grows with the count
_ENERGY_GROWS = {True: ", so the energy grows as the efficiency falls.", False: "."}


def _who(row: pd.Series) -> str:
    """The submitter, and its folder where that differs (one submitter, two folders)."""
    return (
        row["submitter"] if row["org"] == row["submitter"] else f"{row['submitter']} ({row['org']})"
    )


def per_sample_joules(*joules: float) -> list[str]:
    """Energies per sample in one unit, the one that shows them: kJ where the largest is
    1,000 J or more, else J (13.5 J read "0.0 kJ"); every sentence says them so."""
    unit, scale = ("kJ", 1000.0) if max(joules) >= 1000 else ("J", 1.0)
    return [f"{number(j / scale)} {unit}" for j in joules]


def energy_scale_sentences(energy: pd.DataFrame) -> list[str]:
    """Energy to train against the accelerator count in words, where a submitter has power
    results of a workload at several counts (``energy_against_scale``)."""
    scale = energy_against_scale(energy)
    out = []
    for key, group in scale.groupby(["round", "workload", "org", "accelerator_family"], sort=False):
        first = group.iloc[0]
        steps = ", ".join(
            f"{r.energy_to_kj:,.0f} kJ at {r.accelerators_to:,}" for r in group.itertuples()
        )
        last = group.iloc[-1]
        per_sample = ""
        if last["energy_per_sample_to_j"] == last["energy_per_sample_to_j"]:
            pair = (first["energy_per_sample_from_j"], last["energy_per_sample_to_j"])
            per_sample = "; per sample " + " -> ".join(per_sample_joules(*pair))
        out.append(
            f"{display_name(key[1])} ({key[0]}), {_who(first)} on {key[3]}: energy to "
            f"train {first['energy_from_kj']:,.0f} kJ at {first['accelerators_from']:,} "
            f"accelerators, {steps}{per_sample}. From {first['accelerators_from']:,} to "
            f"{last['accelerators_to']:,} it takes {last['energy_ratio']:.2f}x the energy: "
            f"1/E' {last['inverse_efficiency']:.2f} (accelerator-time against the smaller) x "
            f"{last['power_ratio']:.2f} (power per accelerator, host included)"
            + _ENERGY_GROWS[bool(last["energy_ratio"] > 1)]
        )
    return out


def plausible_energy(energy: pd.DataFrame) -> pd.DataFrame:
    """The rows of an ``energy_table`` whose energy can be true (``energy_flag`` empty;
    every row of a frame without the column)."""
    if "energy_flag" not in energy:
        return energy
    return energy[energy["energy_flag"].fillna("").astype(str) == ""]


def flagged_notes(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note per energy row whose energy cannot be true (``energy_flag``): kept in the
    table, left out of every finding."""
    if "energy_flag" not in frame:
        return ()
    flagged = frame[frame["energy_flag"].fillna("").astype(str) != ""]
    return tuple(
        f"{r.round} {r.org}/{r.system_id} {r.benchmark}: energy to train "
        f"{number(r.energy_kj, TABLE_DIGITS)} kJ {r.energy_flag}; left out of the findings"
        for r in flagged.itertuples(index=False)
    )


def measured_twice(energy: pd.DataFrame) -> pd.DataFrame:
    """Pairs of energy rows of the same runs (one names the other in ``same_runs_as``, or
    both name a third), each measured at its own point of the power chain: the first by
    scope (AC before DC) against each other. Columns: round, workload, accelerators,
    first / second (``org/system_id``), first_scope / second_scope, first_energy_kj /
    second_energy_kj, energy_ratio (second / first)."""
    energy = plausible_energy(energy)
    named = energy["org"].astype(str) + "/" + energy["system_id"].astype(str)
    twin = energy["same_runs_as"].fillna("").astype(str)
    rows = energy.assign(named=named, runs_of=twin.where(twin != "", named))
    rows = rows.sort_values(["power_scope", "named"])
    out = []
    for _, group in rows.groupby(["round", "benchmark", "runs_of"], sort=False):
        first = group.iloc[0]
        for second in group.iloc[1:].itertuples(index=False):
            out.append(
                {
                    "round": first["round"],
                    "workload": first["workload"],
                    "accelerators": int(first["accelerators"]),
                    "first": first["named"],
                    "second": second.named,
                    "first_scope": first["power_scope"],
                    "second_scope": second.power_scope,
                    "first_energy_kj": float(first["energy_kj"]),
                    "second_energy_kj": float(second.energy_kj),
                    "energy_ratio": float(second.energy_kj / first["energy_kj"]),
                }
            )
    frame = pd.DataFrame(out, columns=list(MEASURED_TWICE_COLUMNS))
    return frame.sort_values(["round", "workload", "accelerators"]).reset_index(drop=True)


MEASURED_TWICE_COLUMNS = (
    "round",
    "workload",
    "accelerators",
    "first",
    "second",
    "first_scope",
    "second_scope",
    "first_energy_kj",
    "second_energy_kj",
    "energy_ratio",
)


def _folder(named: str) -> str:
    """The submitter folder of an ``org/system_id``."""
    return named.split("/", 1)[0]


def measured_twice_sentences(energy: pd.DataFrame) -> list[str]:
    """One sentence per round and workload whose runs were measured at two points of the
    power chain (:func:`measured_twice`): the ratio of the two energies, its range."""
    pairs = measured_twice(energy)
    out = []
    for (round_name, workload), rows in pairs.groupby(["round", "workload"], sort=True):
        first = rows.iloc[0]
        ratios = rows["energy_ratio"]
        span = (
            f"{ratios.iloc[0]:.3f}"
            if ratios.min() == ratios.max()
            else f"{ratios.min():.3f}-{ratios.max():.3f}"
        )
        counts = ", ".join(f"{int(n):,}" for n in rows["accelerators"])
        out.append(
            f"{display_name(workload)} ({round_name}): the same runs measured twice at "
            f"{counts} accelerators, {_folder(first['second'])} ({first['second_scope']}) "
            f"against {_folder(first['first'])} ({first['first_scope']}): {span}x the energy "
            "to train."
        )
    return out


def no_energy_reason(tables: RoundTables, every: pd.DataFrame, workloads: list[str]) -> str:
    """Why ``workloads`` have no energy row in ``tables`` (``every``: the rounds' whole
    ``energy_table``): no power logs for them (naming the workloads that have some), or
    none in these rounds at all."""
    names = sorted(tables.scores["round"].unique(), key=round_key)
    rounds = ", ".join(names)
    if len(every):
        having = ", ".join(sorted(every["workload"].unique()))
        return f"no power logs for {', '.join(workloads)} in {rounds} (power results: {having})"
    these = "this round has" if len(names) == 1 else "these rounds have"
    what = (
        "power results are optional, published by few submitters: give a round whole as "
        f"published, or another with power results (e.g. --round {FIRST_POWER_ROUND})"
    )
    if names and round_key(names[-1]) < round_key(FIRST_POWER_ROUND):
        what = (
            f"MLPerf Training's power results begin with {FIRST_POWER_ROUND}: give a round "
            f"from it on (e.g. --round {FIRST_POWER_ROUND})"
        )
    return f"no power logs in {rounds}: {these} no energy results; {what}"


# The first MLPerf Training round with power results (MLCommons, "New MLPerf Training and
# HPC Benchmark Results", 2024-06-12: v4.0 "introduces ... power consumption" measurement;
# https://mlcommons.org/2024/06/mlperf-training-v4-benchmark-results/)
FIRST_POWER_ROUND = "v4.0"


# how the headline's result stands among its workload's: the only one, or the least of them
ONE_OR_LEAST = {False: "its only result", True: "the least of its {}"}


def energy_headline(frame: pd.DataFrame) -> tuple[str, ...]:
    """The most efficient result, said first: the least energy to train (MLPerf Power's
    training metric, kJ) among the results of the workload with the most of them in the
    table (energy to train compares within a workload only), its energy per sample
    where counted; where the table has other workloads, how to choose one."""
    measured = plausible_energy(frame).dropna(subset=["energy_kj"])
    if measured.empty:
        return ()
    counts = measured["workload"].value_counts(sort=False)
    workload = counts.idxmax()  # the first of the most counted, in the table's order
    rows = measured[measured["workload"] == workload]
    best = rows.loc[rows["energy_kj"].idxmin()]
    per_sample = best["energy_per_sample_j"]
    # NaN: not counted; else in the unit the sentences under the table say it in
    sample = "" if per_sample != per_sample else f", {per_sample_joules(per_sample)[0]} per sample"
    others = len(counts) - 1
    choose = f"; {counted(others, 'other benchmark')}: -b chooses one" if others else ""
    among = ONE_OR_LEAST[len(rows) > 1].format(counted(len(rows), "result"))
    # like with like: the least among other hardware or another point of the power chain
    # (AC at the wall, DC after the power supplies) says so
    families = rows["accelerator_family"].dropna().astype(str).unique()
    scopes = sorted(rows["power_scope"].dropna().astype(str).unique())
    crossed = [counted(len(families), "accelerator family")] if len(families) > 1 else []
    crossed += [f"power scopes {joined(scopes)}"] if len(scopes) > 1 else []
    among += f" (across {joined(crossed)}: not like with like)" if crossed else ""
    # among several workloads, the one said is the most counted, not the least energy of
    # all (another's results may take less: BERT's 1,949 kJ under Llama2 70B LoRA's 6,114)
    which = f": {display_name(workload)}"
    tied = int((counts == counts.max()).sum())  # benchmarks with as many results as it
    if others and tied > 1:
        which = f" of {display_name(workload)}, the first of {tied} benchmarks with "
        which += f"{counted(int(counts.max()), 'result')} each here:"
    elif others:
        which = f" of {display_name(workload)}, the benchmark with the most results here:"
    # as the table under it shows it (16,380 kJ, not 16,384 above a column's 16,380)
    return (
        f"least energy to train{which} {number(best['energy_kj'], TABLE_DIGITS)} kJ"
        f"{sample}, {best['system_name']} ({best['submitter']}, "
        f"{int(best['accelerators']):,} x {best['accelerator_family']}, {best['round']}, "
        f"power scope {best['power_scope']}), {among}{choose}",
    )


def energy_view(tables: RoundTables, workloads: list[str], *, asked: bool = False) -> TableView:
    """``gpuscale energy``: the energy results of ``workloads`` (``energy_table``), energy
    against scale in words under it, or why there is none (``no_energy_reason``); where
    ``workloads`` were ``asked`` (``-b``), those without a power log said in a note (``-b
    bert,llama2_70b_lora`` of v4.1 showed Llama2 70B LoRA's rows alone, BERT unsaid)."""
    every = energy_table(tables)
    frame = every[every["workload"].isin(workloads)]
    lost = energy_unknown(tables, workloads)
    if frame.empty:  # every column still: an empty CSV has a full one's header
        why = "; ".join(lost) or no_energy_reason(tables, every, workloads)
        return TableView(frame, ENERGY_SHOWN, empty=why)
    metered = set(tables.runs.dropna(subset=["energy_kj"])["workload"])
    unlogged = [w for w in workloads if w not in metered] if asked else []
    return TableView(
        frame,
        ENERGY_SHOWN,
        "energy to train (official rule)",
        ENERGY_DROP_ORDER,
        notes=(
            *flagged_notes(frame),
            *per_sample_missing(frame),
            *lost,
            *filter(None, [unlogged and no_energy_reason(tables, every, unlogged)]),
            *scope_notes(frame),
            *copies_notes(tables.problems, frame),
        ),
        said=(*energy_scale_sentences(frame), *measured_twice_sentences(frame)),
        headline=energy_headline(frame),
        keys=ENERGY_KEYS,
        explained=(*ENERGY_MADE, *energy_left_out(tables, workloads)),
    )


# ``energy --explain``: how each column of a row (one power measurement of a result) is made
ENERGY_MADE = (
    "how each row's columns are made (a row: one power measurement of a scored result):",
    "  energy kJ: the official rule over the runs the score keeps, times its RCP scaling "
    "factor, as MLCommons scores it; power scope: where it was measured (AC or DC, as the "
    "logs' conversion_eff line states it)",
    "  energy per sample J: 1000 x the kept runs' energy over the samples they trained, "
    "unscaled (empty where the count is not in samples, or is flagged)",
    "  energy per accelerator hour kJ: energy kJ / (accelerators x time to train min / 60); a "
    "power per accelerator no accelerator draws flags the row (energy_flag)",
    "  compute share: the nodes' share of the energy (the rest: the switches' estimate)",
)


def energy_left_out(tables: RoundTables, workloads: list[str]) -> tuple[str, ...]:
    """``energy --explain``: how many scored results of ``workloads`` no row holds, by why:
    logs that contradict their folder (``log_flag``), no power log, or power logs that gave
    no energy to train (:func:`energy_unknown` names them); or that none is left out."""
    scores = tables.scores[
        tables.scores["workload"].isin(workloads) & tables.scores["time_to_train_min"].notna()
    ]
    flagged = is_log_flagged(scores).to_numpy(bool)
    result = ["round", "org", "system_id", "benchmark"]
    metered = pd.MultiIndex.from_frame(tables.runs.dropna(subset=["energy_kj"])[result])
    logged = pd.MultiIndex.from_frame(scores[result]).isin(metered)
    counts = {
        "whose own logs contradict their folder (log_flag)": int(flagged.sum()),
        "without power logs": int((~flagged & ~logged).sum()),
        "with power logs that gave no energy to train (said above)": int(
            (~flagged & logged & scores["energy_kj"].isna().to_numpy(bool)).sum()
        ),
    }
    said = [f"  {counted(n, 'scored result')} {why}" for why, n in counts.items() if n]
    if not said:
        return ("scored results left out: none",)
    return (f"scored results left out ({counted(sum(counts.values()), 'result')}):", *said)


def energy_unknown(tables: RoundTables, workloads: list[str]) -> tuple[str, ...]:
    """Scored results of ``workloads`` with power logs but no energy to train, a note per
    workload: a run the score keeps has a power log that gave no power (why, as the
    round's problems of kind ``power log`` say it), and its other logs' sum would be too
    low."""
    scores = tables.scores[~is_log_flagged(tables.scores).to_numpy(bool)]
    result = ["round", "org", "system_id", "benchmark"]
    metered = pd.MultiIndex.from_frame(tables.runs.dropna(subset=["energy_kj"])[result])
    has_logs = pd.MultiIndex.from_frame(scores[result]).isin(metered)
    lost = scores[
        has_logs
        & scores["energy_kj"].isna()
        & scores["time_to_train_min"].notna()
        & scores["workload"].isin(workloads)
    ]
    out = []
    for (round_name, workload), rows in lost.groupby(["round", "workload"], sort=True):
        named = joined(
            sorted(
                f"{r.org}/{r.system_id}"
                + (f" ({int(r.accelerators):,} accelerators)" if pd.notna(r.accelerators) else "")
                for r in rows.itertuples()
            )
        )
        why = _power_log_reasons(tables.problems, rows)
        out.append(
            f"{display_name(workload)} ({round_name}): no energy to train for {named}: a run "
            f"its score keeps has a power log that gave no power ({why}), and the other "
            "logs' sum would be too low"
        )
    return tuple(out)


def _power_log_reasons(problems: pd.DataFrame, results: pd.DataFrame, most: int = 2) -> str:
    """Why the power logs of ``results`` gave no power, as the round's problems say it
    (``power_reading -10 W is outside the physical range 0-200,000 W``), the first
    ``most`` distinct reasons and how many more; where none is recorded, where to look."""
    folders = {f"{r.org}/results/{r.system_id}/{r.benchmark}/power" for r in results.itertuples()}
    found = problems[
        problems["path"].isin(folders) & problems["message"].str.endswith(NO_POWER, na=False)
    ]
    reasons = list(
        dict.fromkeys(m.partition(": ")[2].removesuffix(NO_POWER) for m in found["message"])
    )
    if not reasons:
        return "the round's problems table, kind 'power log', says why: gpuscale ingest writes it"
    more = len(reasons) - most
    return "; ".join(reasons[:most]) + (f"; and {more:,} more" if more > 0 else "")


def scope_notes(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note per energy row whose power logs state both scopes, or one its names
    contradict (the ingest's ``power log`` problem, said where the energy is shown)."""
    out = []
    for row in frame.itertuples(index=False):
        named = named_scope(str(row.org), str(row.system_id), str(row.system_name))
        if said := scope_disagreement(str(row.power_scope), named):
            out.append(f"{row.round} {row.org}/{row.system_id} {row.benchmark}: {said}")
    return tuple(out)


def copies_notes(problems: pd.DataFrame, frame: pd.DataFrame) -> tuple[str, ...]:
    """A note per energy row whose node power logs repeat one another byte for byte (the
    ingest's ``power log`` problem, quoted where the energy that sums them is shown)."""
    said = problems[
        (problems["kind"] == "power log")
        & problems["message"].str.endswith(COPIES_SUMMED, na=False)
    ]
    by_folder = dict(
        zip(zip(said["round"], said["path"], strict=True), said["message"], strict=True)
    )
    out = []
    for row in frame.itertuples(index=False):
        where = (row.round, f"{row.org}/results/{row.system_id}/{row.benchmark}/power")
        if where in by_folder:
            out.append(f"{row.round} {row.org}/{row.system_id} {row.benchmark}: {by_folder[where]}")
    return tuple(out)


def per_sample_missing(frame: pd.DataFrame) -> tuple[str, ...]:
    """Why rows of ``frame`` have no energy per sample, a note per workload: its round
    counts convergence in another unit (RetinaNet's epochs), or the count is flagged."""
    out = []
    missing = frame[frame["energy_per_sample_j"].isna()]
    for (round_name, workload), rows in missing.groupby(["round", "workload"], sort=True):
        units = set(rows["convergence_unit"].dropna().astype(str)) - {str(Unit.SAMPLES)}
        why = (
            f"{round_name}'s rules count its convergence in {', '.join(sorted(units))}, not samples"
            if units
            else "its sample count is flagged as impossible (see samples_to_converge_flag)"
        )
        out.append(f"{display_name(workload)} ({round_name}): no energy per sample: {why}")
    return tuple(out)
