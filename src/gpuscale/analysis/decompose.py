"""Why efficiency falls: speedup split into a throughput factor and a convergence factor.

Time to train is samples to converge over training throughput, ``T = samples / X`` (with
``X = samples / (60 T)`` samples per second, the run's own average). Hence exactly

    ``S = T_ref / T = (X / X_ref) * (samples_ref / samples)``
           throughput factor   convergence factor

and for normalised efficiency ``E' = S * N_ref / N``:

    ``E' = [(X / X_ref) * N_ref / N] * (samples_ref / samples)``
            throughput efficiency       convergence factor

The throughput efficiency holds everything but the samples: the hardware and the
communication, and also evaluation inside the timed region, the per-device batch (a
reference running more samples per device is faster per device) and the software. The
convergence factor falls below 1 when the larger global batch of a larger system needs
more samples to reach the quality target.

Samples come on one of two bases (``basis``). **expected** (the default): what the
round's reference convergence points predict at each system's global batch,
``E(B) = E_min (1 + B / B_noise)`` fitted to ``mlperf-logging``'s RCPs of the round's
ruleset (``gpuscale.analysis.critical_batch``), so the convergence factor
``E(B_ref) / E(B)`` is the batch's effect alone and one run's convergence luck (the
reference's above all, which would enter every row) stays out of it; the difference
between measured and expected samples is then in the throughput factor. **measured**: the
RCP checker's count of the result (samples for BERT, the LLMs and Stable Diffusion,
epochs for the others: the factors are ratios, so the unit cancels). A row whose batch (or
its reference's) has no expected count falls back to the measured one, and
``convergence_basis`` says which basis each row used; rows without either get NaN. A
count flagged as impossible (``samples_to_converge_flag``) is in no factor (nor in
``samples_vs_expected``). ``throughput_per_s`` is the measured count per second, in its
unit (``convergence_unit`` says which). ``samples_vs_expected`` is the measured over the
expected count: about 1 when a system converges as the references do, below 1 when its
hyperparameters beat them.

A measured count can be in another unit than its reference's (v0.7 DLRM: Google's TPUs
log 15-18 "epochs" where the GPUs at the same batch log 1.9), and then both factors are
wrong by that ratio (tpu-v4-128 read throughput factor 35.2 x convergence factor 0.106,
throughput efficiency 4.40). One law bounds the ratio: samples to converge grow with the
batch but never faster than it (``E(B) = E_min (1 + B / B_noise)``), so a row's count
over its reference's lies between 1 and its batch over the reference's, give or take
how far one result's own runs spread (:class:`~gpuscale.analysis.score_intervals.
ConvergenceSpread`, the bound that keeps such results out of each other's pooled
intervals). A measured-basis row outside it gets ``decomposition_flag`` (why) and no
factors: NaN, so no headline or sentence rests on them. A throughput efficiency above 1
alone is no such sign: software makes it at the reference's own count (v0.7 DLRM's
HugeCTR A100 row, 1.35, against the PyTorch reference).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gpuscale.analysis.critical_batch import round_rcp_model
from gpuscale.analysis.equilibrium import fastest_per_count
from gpuscale.analysis.metrics import plausible_samples, within_own_family
from gpuscale.analysis.score_intervals import convergence_spread
from gpuscale.tables.analysis_request import BASES
from gpuscale.tables.measures import normalized_efficiency


def decompose(table: pd.DataFrame, basis: str = "expected") -> pd.DataFrame:
    """A scaling table with the decomposition columns added (see the module docstring)."""
    if basis not in BASES:
        raise ValueError(f"basis must be one of {', '.join(BASES)}, not {basis!r}")
    out = table.copy()
    samples = plausible_samples(out)  # a flagged count is in no factor
    out["throughput_per_s"] = samples / (out["time_to_train_min"] * 60.0)
    out["expected_samples_to_converge"] = [
        expected_samples(str(r), str(b), g)
        for r, b, g in zip(out["round"], out["benchmark"], out["global_batch_size"], strict=True)
    ]
    out["samples_vs_expected"] = samples / out["expected_samples_to_converge"]
    counts = out.assign(plausible_samples=samples)
    ref = counts.set_index(["org", "system_id"])  # stems repeat across org folders
    ref_keys = pd.MultiIndex.from_arrays([out["reference_org"], out["reference_system_id"]])

    def ratio(column: str) -> np.ndarray:  # reference's count over the row's
        own = counts[column].to_numpy(float)
        return ref[column].reindex(ref_keys).to_numpy(float) / own

    expected = ratio("expected_samples_to_converge")
    use = np.isfinite(expected) if basis == "expected" else np.zeros(len(out), bool)
    out["convergence_factor"] = np.where(use, expected, ratio("plausible_samples"))
    out["throughput_factor"] = out["speedup"].to_numpy(float) / out["convergence_factor"]
    # as floats: a nullable count (Int64) would turn each NaN factor into <NA>, which no
    # reader of the factor can take as a number
    out["throughput_efficiency"] = normalized_efficiency(
        out["throughput_factor"].to_numpy(float),
        out["accelerators"].to_numpy(float, na_value=np.nan),
        out["reference_accelerators"].to_numpy(float, na_value=np.nan),
    )
    flags = _unit_flags(out, ~use, 1.0 / ratio("plausible_samples"), ratio("global_batch_size"))
    flagged = flags != ""
    factors = ["convergence_factor", "throughput_factor", "throughput_efficiency"]
    out.loc[flagged, factors] = np.nan
    known = np.isfinite(out["convergence_factor"].to_numpy(float))
    out["convergence_basis"] = np.where(use, "expected", np.where(known, "measured", ""))
    out["decomposition_flag"] = flags
    return out


def _unit_flags(
    table: pd.DataFrame, measured: np.ndarray, counts: np.ndarray, batches: np.ndarray
) -> np.ndarray:
    """Why each row's measured factors cannot be true ("" where they can; see the module
    docstring): ``counts`` its samples to converge over its reference's, ``batches`` its
    reference's global batch over its own (NaN unknown: the batch bound is then 1),
    ``measured`` the rows on the measured basis."""
    spread = convergence_spread()
    allowed = math.exp(spread.log_ratio)
    batch = np.where(np.isfinite(batches) & (batches > 0), 1.0 / batches, 1.0)
    low, high = np.minimum(1.0, batch) / allowed, np.maximum(1.0, batch) * allowed
    off = measured & np.isfinite(counts) & ((counts < low) | (counts > high))
    units = table.get("convergence_unit", pd.Series("", index=table.index)).fillna("")
    return np.array(
        [
            (
                f"its {unit or 'samples'} to converge are {count:.3g}x its reference's at "
                f"{b:.3g}x the reference's global batch, where one law allows "
                f"{lo:.3g}-{hi:.3g}x ({min(1.0, b):.3g}-{max(1.0, b):.3g}x by the batch, "
                f"widened by the {spread.ratio:.2f}x one result's runs span in "
                f"{spread.quantile:.0%} of "
                f"{spread.results:,} results): another unit or another rule, so no "
                f"throughput or convergence factor ({unit or 'samples'} to converge kept apart)"
            )
            if flag
            else ""
            for flag, count, b, lo, hi, unit in zip(
                off, counts, batch, low, high, units, strict=True
            )
        ]
    )


def family_decomposition(
    table: pd.DataFrame, family: str, basis: str = "expected"
) -> pd.Series | None:
    """The family's largest system (the fastest at its largest accelerator count),
    decomposed against the family's own reference (the study's rule within the family):
    the row ``analyze --reference family --decompose`` prints for it, whatever reference
    ``table`` was computed with. None when the family has one accelerator count."""
    own = within_family(table, family, basis)
    if own["accelerators"].nunique() < 2:
        return None
    return fastest_per_count(own).iloc[-1]


def table_basis(table: pd.DataFrame) -> str:
    """The basis a decomposed table was asked for: ``expected`` when any row used it (a
    row falls back to measured only where its batch has no expected count)."""
    used = table.get("convergence_basis", pd.Series([], dtype=str))
    return "expected" if (used == "expected").any() or used.empty else "measured"


def within_family(table: pd.DataFrame, family: str, basis: str = "expected") -> pd.DataFrame:
    """The family's systems decomposed against the family's own reference (the study's
    rule within the family): what the report's decomposition figure draws, beside the
    sentence of ``family_decomposition``. Empty when the family has no system."""
    group = table[table["accelerator_family"] == family]
    if group.empty:
        return group
    return decompose(within_own_family(group), basis)


def expected_samples(round_name: str, benchmark: str, global_batch: float) -> float:
    """Samples (or epochs) the round's reference convergence points predict at a global
    batch; NaN without RCPs for it (or a batch)."""
    model = round_rcp_model(round_name, benchmark)
    if model is None or not global_batch > 0:
        return float("nan")
    return model.samples(float(global_batch))


def dominant_loss(row: pd.Series) -> tuple[str, float]:
    """Which factor accounts for more of E' < 1, and its share of the (log) loss."""
    log_t = np.log(row["throughput_efficiency"])
    log_c = np.log(row["convergence_factor"])
    total = log_t + log_c
    if not np.isfinite(total) or total >= 0:
        return "none", 0.0
    losses = {"throughput": min(log_t, 0.0), "convergence": min(log_c, 0.0)}
    name = min(losses, key=losses.get)
    return name, float(losses[name] / (losses["throughput"] + losses["convergence"]))
