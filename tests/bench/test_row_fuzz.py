"""Any single field of a results row given any JSON value, and any value of the
advice's numbers, never gives a traceback: the row is skipped with the field named (or
read, where the value is valid), and whatever is read goes through the bench table, the
scaling analysis, the printed table and the advice, which refuse only with a message."""

from __future__ import annotations

import copy
import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.console import Console

import gpuscale
from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_view import bench_view
from gpuscale.bench.results import bench_table, read_results
from gpuscale.cli import output
from gpuscale.cli.output import Format
from gpuscale.tables.refusals import NamedError

from ..builders import bench_record

# A small sweep: two models at N = 1 and 2, every section of a row filled in.
ROWS = [
    bench_record(
        model,
        params,
        world,
        8 * world / (3.5 + extra) * 1e3,
        forward_ms=1.0,
        backward_ms=2.0,
        optimizer_ms=0.5,
        sync_overhead_ms=extra,
        comm_ms=extra + 0.5 if world > 1 else None,
        flops_per_sample=6.0 * params,
        power_w=50.0,
        power_w_total=50.0 * world,
        noise={"batch_small": 8, "batch_big": 16, "local_sq": [2.0, 1.9], "global_sq": [1.5, 1.4]},
        comm={"bucket_bytes": [1 << 20, 4 * params]},
        sweep_id="s1",
    )
    for model, params in (("mlp-a", 200_000), ("mlp-b", 1_000_000))
    for world, extra in ((1, 0.0), (2, 1.5))
]


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every field of a row, nested ones too, as key paths."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            out += _paths(inner, (*prefix, key))
    return out


FIELDS = sorted({p for row in ROWS for p in _paths(row)})
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _mutated(which: int, field: tuple, value: object) -> list[dict]:
    rows = copy.deepcopy(ROWS)
    target = rows[which]
    for key in field[:-1]:
        if not isinstance(target.get(key), dict):
            target[key] = {}
        target = target[key]
    target[field[-1]] = value
    return rows


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.slow
@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(which=st.integers(0, len(ROWS) - 1), field=st.sampled_from(FIELDS), value=JSON)
def test_a_mutated_field_is_named_or_read(tmp_path: Path, which: int, field: tuple, value):
    path = _write(tmp_path / "r.jsonl", _mutated(which, field, value))
    records, problems = read_results(path)
    assert len(records) + len(problems) == len(ROWS)
    for problem in problems:  # the field named, or the row's own kind of problem
        assert (
            any(str(key) in problem for key in field) or "schema" in problem or "status" in problem
        )
    table = bench_table(records)
    if not table.empty:
        bench_scaling(table)
        # swapped back after: the module's console is every later command's output
        saved, output.out = output.out, Console(file=io.StringIO(), width=200)
        try:
            output.show(bench_view(table), Format.table)
        finally:
            output.out = saved


@pytest.mark.slow
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(which=st.integers(0, len(ROWS) - 1), field=st.sampled_from(FIELDS), value=JSON)
def test_the_advice_on_a_mutated_row_refuses_only_with_a_message(
    tmp_path: Path, which: int, field: tuple, value
):
    path = _write(tmp_path / "r.jsonl", _mutated(which, field, value))
    try:
        advice = gpuscale.advise(bench=path, interconnect="pcie-phb")
    except ValueError:
        return  # a message for the user (no usable N = 1 run left, ...)
    steps = advice.predictions["step_ms"]
    assert steps.notna().all() and (steps > 0).all()


NUMBER = (
    st.none()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
)
NUMERIC = [
    "params",
    "step_ms",
    "batch",
    "flops_per_sample",
    "busbw_gbs",
    "latency_us",
    "nodes",
    "gpus_per_node",
    "max_devices",
    "overlap",
    "bucket_mb",
    "noise_scale",
    "samples",
    "target_efficiency",
    "price",
    "power_w",
]


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(field=st.sampled_from(NUMERIC), value=NUMBER)
@example(field="params", value=42_949_672_961)  # no count up to 8 holds it: refused
def test_any_number_for_the_advice_is_refused_or_advised(field: str, value) -> None:
    # a custom link's fields go with a custom link, not beside a preset (refused together)
    link = {"busbw_gbs": {}, "latency_us": {"busbw_gbs": 10.0}}.get(
        field, {"interconnect": "pcie-phb"}
    )
    options = {"params": 7e6, "step_ms": 20.0, **link, field: value}
    if value is None and field in ("params", "step_ms"):  # nothing to advise from: refused
        with pytest.raises(ValueError, match=r"params= and step_ms="):
            gpuscale.advise(**options)
        return
    try:
        AdviceRequest(**{k: v for k, v in options.items() if k != "interconnect"})
    except (ValueError, TypeError):
        return  # refused where it is given, the field named
    try:
        advice = gpuscale.advise(**options)
    except NamedError as refusal:
        # a valid request the searched counts cannot serve (a model no count holds) is a
        # named refusal with its sentence, never a traceback from deeper down
        assert len(str(refusal)) > 20
        return
    table = advice.predictions
    assert len(table) and table["step_ms"].map(math.isfinite).all()
    assert (table["time_to_train_min"].dropna() > 0).all()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("params", 1.1471436260601091e-298),
        ("flops_per_sample", 1e-9),
        ("samples", 0.5),
        ("noise_scale", 2.225073858507e-311),  # overflowed the samples to train (the property)
    ],
)
def test_a_size_below_one_is_refused_where_it_is_given(field: str, value: float) -> None:
    """A model of 1e-298 parameters reached the break-even search and divided by zero
    (found by the property above); fewer than one parameter, FLOP or sample cannot be."""
    options = {"params": 7e6, "step_ms": 20.0, "interconnect": "pcie-phb", field: value}
    with pytest.raises(ValueError, match=f"invalid {field} .*: must be a number at least 1"):
        gpuscale.advise(**options)
