"""The advice's words on the real H100 rows (tests/report/h100_paths.jsonl) against the
table they describe: steps compared hold the same samples, the scaling sentence follows
the counts' accumulation, the JSON's cap is the table's largest overhead, and FSDP's
optimizer step is sharded."""

from __future__ import annotations

import re
from pathlib import Path

import gpuscale
from gpuscale.advice.explain.phrasebook import term_words
from tests.builders import one_device_record

from ..golden import Golden
from .lines import lines_on

VIEW = "advice/like_with_like"
ROWS = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"
# the rows' path in a command the words quote, as a placeholder: no checkout's path in a golden
TESTS = {str(ROWS.parents[1]): "<tests>"}


def test_the_one_device_sentence_sets_steps_of_the_same_samples_side_by_side() -> None:
    """mlp-4m's N = 1 row trains 8 x 8 accumulation steps, the bench's N = 1 run 8 x 1:
    the sentence set 17.4 ms (64 samples) against 5.38 ms (8 samples) unexplained. It
    must say each step's samples, and the step it sets against the bench's no-sync step
    must be the model's at the bench's samples: within 10% of that measured step."""
    advice = gpuscale.advise(bench=ROWS, model="mlp-4m")
    one = advice.predictions.iloc[0]
    bench = one_device_record("mlp-4m")
    row_samples = int(one["batch_per_device"]) * int(one["accum"])
    bench_samples = int(bench["config"]["batch_per_device"]) * int(bench["config"]["accum"])
    assert row_samples != bench_samples  # the case the user met
    said = next(s for s in advice.explanation if s.startswith("The step predicted on 1"))
    found = re.search(r"holds (\d+) samples .*?, the bench's (\d+)", said)
    assert found, said
    assert (int(found[1]), int(found[2])) == (row_samples, bench_samples)
    at_bench = re.search(r"the same model predicts ([\d.]+) ms", said)
    assert at_bench, said
    nosync = bench["timing"]["nosync_step_ms_mean"]
    assert abs(float(at_bench[1]) / nosync - 1) < 0.10
    assert f"no-sync step {nosync:.3g} ms" in said


def test_what_caps_the_speedup_is_what_the_table_says(golden: Golden) -> None:
    """tf-7m on the H100 rows: the JSON said the speedup was capped by 'communication'
    where 4 devices expose 0.146 ms of communication in a 19.9 ms step and DDP's copies
    are the largest overhead. The cap is the throughput efficiency (every overhead) when
    it loses more than the convergence factor, and the largest overhead is named from
    the table's columns."""
    for model in ("tf-7m", "mlp-4m"):
        advice = gpuscale.advise(bench=ROWS, model=model)
        d = advice.decision
        focus = advice.predictions.set_index("accelerators").loc[d.focus.accelerators]
        assert focus["throughput_efficiency"] < focus["convergence_factor"]
        assert d.limit.cap == "overheads"
        columns = {
            "ddp": focus["ddp_ms"],
            "wait": focus["wait_ms"],
            "fixed": focus["fixed_excess_ms"],
            "communication": focus["exposed_comm_ms"],
        }
        largest = max(columns, key=columns.get)
        assert largest != "communication"  # the case the user met, on both models
        assert d.limit.dominant_term == largest
        (said,) = [s for s in advice.explanation if "cap the speedup" in s]
        subject = term_words(largest, "subject")
        assert said.startswith(f"At {d.focus.accelerators} devices") and f"is {subject}." in said
        golden.check(VIEW, f"what caps the speedup of {model}", said)


def test_fsdp_steps_the_optimizer_on_its_shard_ddp_on_every_parameter(golden: Golden) -> None:
    """Under FSDP each rank steps only its shard of the parameters (Zhao et al., VLDB
    2023): tf-7m's optimizer step (1.46 ms timed by the bench at N = 1) is 1/N of it on
    each of N devices; DDP steps every parameter on every device. At a count both
    strategies predict at the same batch and accumulation, DDP's compute less FSDP's is
    the optimizer step's (1 - 1/N); the sentence says each device's shard."""
    opt = one_device_record("tf-7m")["timing"]["optimizer_ms"]
    ddp = gpuscale.advise(bench=ROWS, model="tf-7m").predictions.set_index("accelerators")
    fsdp_advice = gpuscale.advise(bench=ROWS, model="tf-7m", strategy="fsdp")
    fsdp = fsdp_advice.predictions.set_index("accelerators")
    compared = 0
    for n in sorted(set(ddp.index) & set(fsdp.index)):
        a, b = ddp.loc[n], fsdp.loc[n]
        if (a["batch_per_device"], a["accum"]) != (b["batch_per_device"], b["accum"]):
            continue
        gap = a["compute_ms"] - b["compute_ms"]
        assert abs(gap - opt * (1 - 1 / n)) < 0.02 * opt, (n, gap)
        compared += n > 1
    assert compared
    said = lines_on(fsdp_advice.explanation, "Fixed per-step costs")
    assert "shard" in said and "on every device" not in said
    golden.check(VIEW, "FSDP's fixed costs, the optimizer's sharded", said, paths=TESTS)


def test_the_strong_scaling_sentence_follows_the_counts_accumulation(golden: Golden) -> None:
    """tf-7m at global batch 128: 4 micro-steps on 1 device, 1 on 4. The words said
    the forward and backward's fixed cost does not shrink, where it is paid once per
    micro-step and so falls with them; the sentence now reads each count's micro-steps
    from the table (in the table's order, without naming the counts: a sentence naming
    the next count must say what it is), and says the fixed cost shrinks exactly where the table's
    accumulation falls."""
    for model, extra in (("tf-7m", {}), ("mlp-4m", {"global_batch": 64})):
        advice = gpuscale.advise(bench=ROWS, model=model, **extra)
        frame = advice.predictions
        said = next(s for s in advice.explanation if s.startswith("Strong scaling"))
        listed = re.search(r"\(([\d, and]+) micro-steps at the table's counts, in order", said)
        assert listed, said
        assert [int(k) for k in re.findall(r"\d+", listed[1])] == list(frame["accum"]), said
        falls = frame["accum"].nunique() > 1
        assert falls  # both models' micro-steps fall with the count on these rows
        assert "do not shrink" not in said.split(";")[0]
        golden.check(VIEW, f"strong scaling of {model}, the micro-steps falling", said)


def test_fsdp_remedy_does_not_say_the_optimizer_step_is_paid_whole(golden: Golden) -> None:
    """tf-30m, benched with FSDP: the fixed term is the largest overhead at the focus
    count, and the remedy said every device pays the optimizer step whole, where each
    FSDP rank steps its shard (the JSON's fixed term has no optimizer part there)."""
    advice = gpuscale.advise(bench=ROWS, model="tf-30m")
    assert (
        advice.calibration.run.strategy == "fsdp" and advice.decision.limit.dominant_term == "fixed"
    )
    parts = advice.fixed_term
    assert parts.optimizer_excess_ms == 0 < parts.forward_backward_excess_ms
    said = next(s for s in advice.explanation if s.startswith("What would change it"))
    # the largest overhead named is the forward and backward's fixed cost, not the optimizer's
    assert "falls as 1/N" in said and "optimizer step)" not in said
    golden.check(VIEW, "FSDP's remedy for the fixed term", said)
