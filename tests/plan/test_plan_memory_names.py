"""A family typed with a memory no part of its product has (``GH200 64GB``: the catalogue
holds the 96 GB HBM3 and 144 GB HBM3e parts; ``MI300X 256GB``: the MI300X has 192 GB) is
refused by ``plan -a`` and ``analyze --family``, naming the parts that exist, as ``--gpu``
and ``--device-name`` refuse it: the memory typed is never dropped for another part's (a plan
sizes the model state against the family's memory), and no family is made up from it
(``H100 40GB`` was said to be "accelerator family H100-SXM5-40GB", which no one made)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.names import UnknownNameError, resolve_family

runner = CliRunner()
RESULTS = ["GB200", "H100-SXM5-80GB", "H100-SXM5-96GB", "MI300X", "B200"]


@pytest.mark.parametrize(
    ("typed", "held"),
    [
        (
            "GH200 64GB",
            "the device catalogue holds GH200 96GB and GH200 144GB; these results hold no GH200",
        ),
        ("MI300X 256GB", "holds MI300X (192 GB); these results hold MI300X"),
        ("B200 80GB", "holds B200 180GB; these results hold B200"),
        ("H100 40GB", "H100 NVL 94GB; these results hold H100-SXM5-80GB and H100-SXM5-96GB"),
    ],
)
def test_a_memory_no_part_has_is_refused_naming_the_parts(typed: str, held: str) -> None:
    with pytest.raises(UnknownNameError) as refused:
        resolve_family(typed, RESULTS)
    product, memory = typed.split()
    said = str(refused.value)
    assert f"no {product} part has {memory.removesuffix('GB')} GB" in said
    assert held in said and "-40GB" not in said


@pytest.mark.parametrize(
    ("typed", "family"),
    [
        ("H100 96GB", "H100-SXM5-96GB"),
        ("H100 80GB", "H100-SXM5-80GB"),
        ("MI300X 192GB", "MI300X"),
        ("NVIDIA GH200 480GB", "GH200"),  # NVML's name of the 96 GB part: the catalogue's alias
    ],
)
def test_a_memory_a_part_has_is_read(typed: str, family: str) -> None:
    assert resolve_family(typed, [*RESULTS, "GH200"])[0] == family


def test_plan_and_analyze_refuse_it_on_the_command_line_and_in_python() -> None:
    for args in (
        ["plan", "-a", "GH200 64GB", "-w", "bert"],
        ["analyze", "-b", "bert", "--family", "MI300X 256GB"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "name a part that exists" in result.output and "Traceback" not in result.output
    with pytest.raises(UnknownNameError, match="GH200 96GB"):
        gpuscale.plan(workload="bert", accelerator="GH200 64GB")
