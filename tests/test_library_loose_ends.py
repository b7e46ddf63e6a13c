"""The Python library agrees with the command line: the division a scaling table keeps,
the names it reads (their notes kept), what help() says of each keyword, a plan's attrs
and the turns of its time with more devices."""

from __future__ import annotations

import pydoc

import pytest

import gpuscale
from gpuscale.planning.cache import default_fits


@pytest.fixture(scope="module")
def v31():
    return gpuscale.load_round("v3.1").scores


@pytest.fixture(scope="module")
def v41():
    return gpuscale.load_round("v4.1").scores


def test_scaling_table_keeps_the_closed_division_as_analyze_does(v31) -> None:
    """v3.1 ResNet holds 39 closed results and one open: the default table is the 39 that
    `gpuscale analyze` and `analyze` use; all= gives the 40."""
    table = gpuscale.scaling_table(v31, "resnet")
    assert len(table) == 39 and set(table["division"]) == {"closed"}
    both = gpuscale.scaling_table(v31, "resnet", division="all")
    assert len(both) == 40 and (both["division"] == "open").sum() == 1
    tables = gpuscale.load_round("v3.1")
    result = gpuscale.analyze(tables, ["resnet"], n_boot=100)[0]
    assert len(result.table) == len(table)


def test_a_family_read_is_said_in_the_tables_notes(v41) -> None:
    table = gpuscale.scaling_table(v41, "bert", families="H100")
    assert set(table["accelerator_family"]) == {"H100-SXM5-80GB"}
    (note,) = table.attrs["notes"]
    assert "H100-SXM5-80GB" in note and "H100-NVL-94GB" in note
    assert gpuscale.scaling_table(v41, "bert", families="H100-SXM5-80GB").attrs["notes"] == []


def test_equilibrium_reads_its_scope_as_families_are_read(v41) -> None:
    table = gpuscale.scaling_table(v41, "bert", families="H100", reference="family")
    eq = gpuscale.equilibrium(table, scope="H100")
    assert eq.scope == "H100-SXM5-80GB"
    assert eq.notes == ["'H100' read as the accelerator family H100-SXM5-80GB"]
    full = gpuscale.equilibrium(table, scope="H100-SXM5-80GB")
    assert (full.scope, full.notes, full.knee) == (eq.scope, [], eq.knee)
    assert gpuscale.equilibrium(table, scope="ALL").scope == "all"
    with pytest.raises(ValueError, match="did you mean 'H100'"):
        gpuscale.equilibrium(table, scope="h1000")


@pytest.mark.parametrize(
    ("function", "said"),
    [
        (
            "advise",
            [
                "``step_ms`` (default ``None``): Measured single-device step time, ms",
                "Per-device batch of step_ms=, one per step_ms=",
                "``params`` (default ``None``): Parameters, e.g. 7e6 (with bench=",
                "``price_per_device_hour`` (default ``None``): Price per accelerator-hour",
                "nodes x gpus_per_node=",
            ],
        ),
        (
            "plan",
            [
                "``workload`` (required): MLPerf benchmark",
                "``power_w`` (default ``None``): Average power per device, W",
            ],
        ),
        (
            "analyze",
            [
                "``division`` (default ``'closed'``): closed",
                "``families`` (default ``None``): Keep only these accelerator families (a list)",
            ],
        ),
    ],
)
def test_help_says_each_keywords_meaning_in_pythons_words(function: str, said: list[str]) -> None:
    text = pydoc.render_doc(getattr(gpuscale, function), renderer=pydoc.plaintext)
    for line in said:
        assert line in text
    keywords = text.partition("Keywords (")[2]
    assert "--" not in keywords and " 7M" not in keywords


def test_a_plan_carries_its_cost_unit() -> None:
    ask = {"workload": "bert", "accelerator": "H100", "devices": [8, 64]}
    priced = gpuscale.plan(**ask, price_per_device_hour=2.0)
    assert set(priced.attrs) == {"notes", "model", "cost_unit"}
    assert priced.attrs["cost_unit"] == (
        "the currency of price_per_device_hour=, per accelerator-hour x accelerator-hours"
    )
    assert gpuscale.plan(**ask).attrs["cost_unit"] is None


SWEEP = [2**k for k in range(3, 13)]  # 8 .. 4,096 devices


def test_llama2_on_a100_turns_at_512_and_says_why() -> None:
    """Beyond A100's data the shared shape of Llama2 70B LoRA gains from 512 to 1,024
    (results of other families there): the time rises to 512 and falls after, a turn the
    notes name with its terms."""
    table = gpuscale.plan(workload="llama2", accelerator="A100", devices=SWEEP)
    times = table.set_index("accelerators")["time_to_train_min"]
    assert times[256] < times[512] > times[1024]
    (note,) = [n for n in table.attrs["notes"] if n.startswith("Time to train rises")]
    assert "from 256 to 512 devices (67.12 min -> 67.96 min)" in note
    assert "512 to 1,024 (65.12 min)" in note
    assert "samples to converge grow x1.93" in note and "moves x1.006" in note


def test_every_turn_of_a_sweep_is_said() -> None:
    """Over each workload's families (up to four) and 8 .. 4,096 devices: each count at
    which the time, having risen, falls again has its note, and no note names another."""
    fits = default_fits()
    checked = 0
    for workload, fit in fits["workloads"].items():
        for family in list(fit["families"])[:4]:
            try:
                table = gpuscale.plan(workload=workload, accelerator=family, devices=SWEEP)
            except ValueError:
                continue  # a family this workload cannot be planned for (said so)
            checked += 1
            t = table.dropna(subset=["time_to_train_min"]).sort_values("accelerators")
            n, m = t["accelerators"].tolist(), t["time_to_train_min"].tolist()
            turns = {
                n[j]
                for j in range(1, len(m) - 1)
                if m[j] > m[j - 1] * 1.001 and m[j] > m[j + 1] * 1.001
            }
            said = [x for x in table.attrs["notes"] if x.startswith("Time to train rises")]
            assert len(said) == len(turns), (workload, family)
            for count in turns:
                assert any(f"and falls again from {count:,} to" in x for x in said)
    assert checked > 30


def test_the_api_page_lists_each_calls_keywords() -> None:
    """The API page's docstrings are read from source, without the keywords listed at
    import: the site's hook adds them after each call that takes a request's fields."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "docs" / "hooks.py"
    spec = importlib.util.spec_from_file_location("docs_hooks", path)
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = (Path(__file__).parents[1] / "docs" / "reference" / "api.md").read_text()
    text = hooks.with_keywords(page)
    assert text.count("Keywords (the fields of") == 3
    plan_part = text.partition("::: gpuscale.planning.api.plan\n")[2]
    assert plan_part.lstrip().startswith("Keywords (the fields of ``PlanRequest``)")
    assert "* ``power_w`` (default ``None``): Average power per device, W" in plan_part


def test_the_api_page_documents_each_call_gpuscale_exports_itself() -> None:
    """Every name of ``gpuscale.__all__`` is on the API page as that very object: the page
    showed ``gpuscale.mlperf.bundled.load_round`` (bundled rounds only, a KeyError) for
    ``gpuscale.load_round`` (any published round, a RoundNamesError)."""
    import importlib
    import inspect
    import re
    from pathlib import Path

    import gpuscale

    page = (Path(__file__).parents[1] / "docs" / "reference" / "api.md").read_text()
    documented = set()
    for path in re.findall(r"^::: (\S+)$", page, re.MULTILINE):
        module, _, name = path.rpartition(".")
        documented.add(id(getattr(importlib.import_module(module), name)))
    missing = [
        n for n in gpuscale.__all__ if id(inspect.unwrap(getattr(gpuscale, n))) not in documented
    ]
    assert missing == []
