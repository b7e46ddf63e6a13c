"""Sentences read off the predictions where a bare number misled (H100 walks, the rows in
tests/report/h100_paths.jsonl):

* tf-7m's N = 1 row predicted 48.18 ms where the bench measured 53.68 ms with DDP, and
  nothing said that the prediction leaves DDP's own work (5.27 ms) out on one device;
* "Fixed per-step cost: 0 ms" and, lines below, "1.1 ms fixed cost" (the optimizer step,
  paid whole by every device) meant two things by one word;
* "Equilibrium: knee none, speed x efficiency 8, efficiency >= 0.8 x best 1." said no
  word of what each pick means.

Each sentence is checked against the bench row and the predictions table it describes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.explain.as_json import advice_document
from gpuscale.advice.explain.document import advice_view
from gpuscale.quantities import counted, format_ms, number
from tests.builders import one_device_record

from ..golden import Golden

VIEW = "advice/table_words"
ROWS = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"
# the rows' path in a command the words quote, as a placeholder: no checkout's path in a golden
TESTS = {str(ROWS.parents[1]): "<tests>"}


def _line(advice, start: str) -> str:
    found = [line for line in advice.explanation if line.startswith(start)]
    assert len(found) == 1, (start, advice.explanation)
    return found[0]


def test_the_one_device_step_says_ddp_was_left_out_and_what_it_was(golden: Golden) -> None:
    timing = one_device_record("tf-7m")["timing"]
    advice = gpuscale.advise(bench=ROWS, model="tf-7m")
    frame = advice.predictions.set_index("accelerators")
    one, two = frame.loc[1], frame.loc[2]
    # the premise: the N = 1 row holds no DDP, the N > 1 rows the DDP the bench measured
    assert one["ddp_ms"] == 0
    assert two["ddp_ms"] == pytest.approx(timing["sync_overhead_ms"], rel=1e-6)
    assert one["step_ms"] + timing["sync_overhead_ms"] == pytest.approx(
        timing["step_ms_mean"], rel=0.02
    )
    said = _line(advice, "The step predicted on 1 device")
    assert format_ms(float(one["step_ms"])) in said  # the predicted step
    assert format_ms(timing["step_ms_mean"]) in said  # the measured one, with DDP
    assert format_ms(timing["sync_overhead_ms"]) in said and "without DDP" in said
    golden.check(VIEW, "the one-device step without DDP, bench", said)
    # said where the speedups are: right after the decision's own lines
    assert advice.explanation.index(said) <= advice.decision_line + 3
    # the speedups are what the sentence says: against that one device's time to train
    assert (
        frame["speedup"] == frame.loc[1, "time_to_train_min"] / frame["time_to_train_min"]
    ).all()


@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_an_fsdp_one_device_step_is_said_as_its_row(strategy: str, golden: Golden) -> None:
    """As FSDP, the FSDP step whole (no bare module timed); as DDP, less FSDP's own work
    (its synchronised minus no-sync step), which DDP does not do."""
    timing = one_device_record("tf-30m")["timing"]
    own = timing["step_ms_mean"] - timing["nosync_step_ms_mean"]
    advice = gpuscale.advise(bench=ROWS, model="tf-30m", strategy=strategy)
    one = advice.predictions.iloc[0]
    row = timing["step_ms_mean"] - (own if strategy == "ddp" else 0.0)
    assert float(one["step_ms"]) == pytest.approx(row, rel=0.02)  # premise
    said = _line(advice, "The step predicted on 1 device")
    assert "FSDP" in said and format_ms(timing["step_ms_mean"]) in said
    if strategy == "fsdp":
        assert "without DDP" not in said and "left out" not in said.replace("nothing is left", "")
    else:
        assert "without FSDP or DDP" in said and format_ms(own) in said
    golden.check(VIEW, f"the one-device step of an FSDP bench, --strategy {strategy}", said)
    # the JSON's no-sync step is the bench's step less the work the row leaves out: the
    # no-sync step timed where FSDP's own work is left (DDP), the FSDP step whole where not
    one_device = advice_document(advice)["scaling"]["one_device"]
    kept = timing["nosync_step_ms_mean"] if strategy == "ddp" else timing["step_ms_mean"]
    assert one_device["nosync_ms"] == pytest.approx(kept, rel=1e-6)
    assert one_device["gap_ms"] == pytest.approx(kept - float(one["step_ms"]), abs=1e-6)
    assert abs(one_device["gap_ms"]) < 0.02 * kept


def test_a_step_given_by_numbers_says_its_one_device_step_adds_no_ddp(golden: Golden) -> None:
    advice = gpuscale.advise(params=7e6, step_ms=50, batch=32, link="pcie-phb")
    frame = advice.predictions.set_index("accelerators")
    said = _line(advice, "The step predicted on 1 device")
    assert format_ms(50.0) in said and "no DDP" in said
    assert f"({format_ms(float(frame.loc[2, 'ddp_ms']))})" in said
    golden.check(VIEW, "the one-device step by numbers", said)


def test_the_fixed_cost_words_name_the_optimizer_step_they_count(golden: Golden) -> None:
    timing = one_device_record("tf-7m")["timing"]
    opt = timing["optimizer_ms"]
    advice = gpuscale.advise(bench=ROWS, model="tf-7m")
    d = advice.decision
    frame = advice.predictions.set_index("accelerators")
    focus, one = frame.loc[d.focus.accelerators], frame.loc[1]
    # the focus count computes fewer samples per device than one device: the optimizer,
    # once per step whatever the batch, is paid whole where its share would be smaller
    share = focus["batch_per_device"] * focus["accum"] / (one["batch_per_device"] * one["accum"])
    assert share < 1
    paid = opt * (1 - share)
    assert float(focus["fixed_excess_ms"]) == pytest.approx(paid, rel=0.01)
    fixed = _line(advice, "Fixed per-step costs: of each forward and backward")
    assert format_ms(advice.calibration.model.fixed.ms) in fixed and format_ms(opt) in fixed
    step = _line(advice, f"On {d.focus.accelerators} devices")
    like = d.focus.step_ms
    assert f"of it {format_ms(paid, like)} fixed" in step
    assert f"({format_ms(opt, like)}" in step
    golden.check(VIEW, "the fixed costs, the optimizer's measured", f"{fixed}\n{step}", paths=TESTS)
    # nowhere a fixed per-step cost of one number (0 ms) and a fixed cost of another (1.1 ms)
    # (the one line on the fixed costs is the line of parts, "Fixed per-step costs: of ...")
    assert sum(line.startswith("Fixed per-step cost") for line in advice.explanation) == 1
    # the JSON says the same parts
    doc = advice_document(advice)
    assert doc["scaling"]["fixed_cost"]["optimizer_ms"] == pytest.approx(opt, rel=1e-6)
    parts = doc["scaling"]["fixed_term_ms"]
    assert parts["optimizer"] == pytest.approx(paid, rel=0.01)
    assert sum(parts.values()) == pytest.approx(doc["decision"]["limit"]["overheads_ms"]["fixed"])


def test_without_an_optimizer_measured_the_fixed_term_is_the_forward_backward_fixed_cost(
    golden: Golden,
) -> None:
    advice = gpuscale.advise(params=7e6, step_ms=50, batch=32, link="pcie-phb")
    d = advice.decision
    focus = advice.predictions.set_index("accelerators").loc[d.focus.accelerators]
    step = _line(advice, f"On {d.focus.accelerators} devices")
    excess = format_ms(float(focus["fixed_excess_ms"]), d.focus.step_ms)
    # the step given holds its optimizer: one fixed per-step cost, said as one number
    fixed = _line(advice, "Fixed per-step cost:")
    assert (
        format_ms(advice.calibration.model.fixed.ms, advice.calibration.model.fixed.high_ms)
        in fixed
    )
    assert f"of it {excess} fixed" in step
    assert "optimizer" not in step and "optimizer" not in fixed
    golden.check(VIEW, "the fixed cost by numbers", f"{fixed}\n{step}")


@pytest.mark.parametrize("model", ["tf-7m", "tf-30m", "mlp-4m"])
def test_the_equilibrium_is_said_in_words_from_the_table(model: str, golden: Golden) -> None:
    advice = gpuscale.advise(bench=ROWS, model=model)
    frame = advice.predictions[advice.predictions["flags"] == ""]
    said = _line(advice, "Equilibrium")
    assert said == advice.explanation[-1]
    # speedup x efficiency = S^2 / N, largest at
    score = frame["speedup"] ** 2 / frame["accelerators"]
    best = frame.loc[score.idxmax()]
    assert f"N = {int(best['accelerators'])} ({number(best['speedup'])} x" in said
    assert f"{best['efficiency']:.0%} = {number(score.max())})" in said
    golden.check(VIEW, f"the equilibrium of {model}", said)
    # the most devices keeping efficiency >= 80% of the best
    floor = 0.8 * frame["efficiency"].max()
    kept = int(frame[frame["efficiency"] >= floor]["accelerators"].max())
    assert f"up to N = {kept} " in said
    above = frame[frame["accelerators"] > kept]
    if len(above):
        nxt = above.iloc[0]
        assert f"N = {int(nxt['accelerators'])}: {nxt['efficiency']:.0%}" in said
        assert nxt["efficiency"] < floor
    # no knee, and why; the advice's own count beside them
    assert "no knee (" in said
    if len(frame) < 3:
        assert f"the table has {len(frame)}" in said
    assert f"the advice's {counted(advice.recommended, 'device')}" in said
    assert not re.search(r"knee none|x best \d", said)
    shown = advice_view(advice, terminal=True, explain=True).said
    assert sum(line.startswith("- Equilibrium") for line in shown) == 1


def test_weak_scaling_names_the_accumulation_its_global_batch_holds() -> None:
    """tf-7m benched at batch 32 x 4 accumulation steps: 'per-device batch 32 kept, global
    batch 512 on 4 devices' read as 4 x 32 = 128 samples, not the 512 said."""
    for scaling in ("auto", "weak"):
        advice = gpuscale.advise(bench=ROWS, model="tf-7m", scaling=scaling)
        said = [s for s in advice.explanation if s.startswith("Weak scaling")]
        assert len(said) == 1, advice.explanation
        batch = re.search(
            r"per-device batch (\d+)(?: x (\d+) accumulation steps)? (?:is )?kept", said[0]
        )
        assert batch, said[0]
        b, k = int(batch[1]), int(batch[2] or 1)
        table = advice.alternative if scaling == "auto" else advice.predictions
        assert (table["batch_per_device"] * table["accum"] == b * k).all()
        found = re.search(r"global batch ([\d,]+) on (?:the )?(\d+) devices", said[0])
        if found:  # the alternative's count: its global batch is N x b x k
            assert int(found[1].replace(",", "")) == int(found[2]) * b * k


@pytest.mark.parametrize("rows", ["h100_paths.jsonl", "h100_sweep.jsonl"])
def test_counts_in_the_advice_take_their_number(rows: str) -> None:
    """'left out 6 run(s)', 'per-device batch(es) 32', '1 leave-one-out prediction(s)':
    every count in words takes the number it has (quantities.counted)."""
    path = ROWS.parent / rows
    models = {json.loads(line)["config"]["model"] for line in path.read_text().splitlines()}
    for model in sorted(models):
        advice = gpuscale.advise(bench=path, model=model)
        plural = [s for s in advice.explanation if re.search(r"\w\((?:s|es)\)", s)]
        assert not plural, (model, plural)
