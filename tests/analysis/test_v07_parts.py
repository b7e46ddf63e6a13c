"""Like with like on the raw v0.7 round: each V100 part is a family of its own, so a
DGX-2H (V100-SXM3-32GB at 450 W) at 16 is never measured against a DGX-1 (V100-SXM2-16GB
at 300 W) at 8, and no E' within a family rises above linear because of mixed parts."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.analysis.superlinear import TOLERANCE
from gpuscale.cli import app
from gpuscale.mlperf.load import read_paths

pytestmark = [pytest.mark.shared, pytest.mark.slow]

# The parts v0.7's system descriptions write (accelerator_model_name, and the memory
# capacity a bare name leaves open), by system, with the family each must have.
FAMILIES = {
    ("NVIDIA", "dgx1_ngc20.06_pytorch"): "V100-SXM2-16GB",  # V100-SXM2-16GB (300W)
    ("NVIDIA", "dgx2_ngc20.06_tensorflow"): "V100-SXM3-32GB-350W",  # DGX-2
    ("NVIDIA", "dgx2h_ngc20.06_pytorch"): "V100-SXM3-32GB-450W",  # DGX-2H
    ("NVIDIA", "dgx2h_n64_ngc20.06_mxnet"): "V100-SXM3-32GB-450W",
    ("DellEMC", "C4140"): "V100-SXM2-32GB",
    ("DellEMC", "DSS8440"): "V100S",  # V100S-PCIe-32GB: another product
    ("Fujitsu", "gx_V100x8_ngc20.06_pytorch"): "V100-SXM2-32GB",  # "Tesla V100", 32GB
    ("Google", "gpu-v100-8-TF2.0"): "V100-SXM2-16GB",  # "NVIDIA V100", capacity TODO
    ("NVIDIA", "dgxa100_ngc20.06_pytorch"): "A100-SXM4-40GB",  # (400W): the part's own
    ("Inspur", "nf5488_pytorch"): "A100-SXM4-40GB",  # "NVIDIA A100", 40G
}
WORKLOADS = ["bert", "gnmt", "maskrcnn", "resnet"]


@pytest.fixture(scope="module")
def v07(shared_archive):
    return read_paths([shared_archive("v0.7")])


def test_each_v100_part_of_v07_is_its_own_family(v07) -> None:
    systems = v07.systems.set_index(["org", "system_id"])["accelerator_family"]
    assert {key: systems[key] for key in FAMILIES} == FAMILIES
    v100 = sorted(f for f in systems.unique() if str(f).startswith("V100"))
    assert v100 == [
        "V100-SXM2-16GB",
        "V100-SXM2-32GB",
        "V100-SXM3-32GB-350W",
        "V100-SXM3-32GB-450W",
        "V100S",
    ]


def test_no_e_prime_above_linear_within_a_family_from_mixed_parts(v07) -> None:
    """Against the family's own reference, no result at more accelerators than it is above
    linear by more than the run-to-run spread (BERT's DGX-2H at 16 read 2.03 against a
    DGX-1 at 8 while both were "V100")."""
    results = analyze(v07, WORKLOADS, AnalysisOptions(reference="family", n_boot=100))
    tables = pd.concat([r.table for r in results])
    more = tables[tables["accelerators"] > tables["reference_accelerators"]]
    assert set(WORKLOADS) <= set(more["workload"])
    above = more[more["normalized_efficiency"] > 1 + TOLERANCE]
    assert above.empty, above[["workload", "system_id", "accelerator_family"]].to_string()
    bert = tables[
        (tables["workload"] == "bert") & (tables["system_id"] == "dgx2h_ngc20.06_pytorch")
    ]
    assert bert["reference_system_id"].tolist() == ["dgx2h_ngc20.06_pytorch"]


@pytest.mark.parametrize(
    ("asked", "family"),
    [("V100", "V100-SXM2-16GB"), ("V100-SXM3-32GB-450W", "V100-SXM3-32GB-450W")],
)
def test_the_plan_of_a_v100_part_flags_no_super_linear_count(
    shared_archive, asked: str, family: str
) -> None:
    """``plan -a V100`` on v0.7 read DGX-2H's 16 against DGX-1's 8 as one family and
    flagged 16 super-linear (3.34x on 2x); each part alone is planned within linear."""
    args = ["plan", str(shared_archive("v0.7")), "-w", "bert", "-a", asked, "-n", "8,16,64"]
    done = CliRunner().invoke(app, [*args, "-f", "json"])
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    assert plan["model"]["family"] == family
    assert [r["accelerators"] for r in plan["rows"]] == [8, 16, 64]
    assert not [r["accelerators"] for r in plan["rows"] if "super-linear" in r["flags"]]


def test_a_plan_faster_than_linear_below_the_counts_ran_is_flagged(shared_archive) -> None:
    """DGX-2H ran BERT at 16 only: 8 is planned beyond it, 2.01x 16's time on half the
    devices, and 16 more than linear against it, which no family ran: flagged."""
    args = ["plan", str(shared_archive("v0.7")), "-w", "bert", "-a", "V100-SXM3-32GB-450W"]
    done = CliRunner().invoke(app, [*args, "-n", "8,16", "-f", "json"])
    assert done.exit_code == 0, done.output
    eight, sixteen = json.loads(done.stdout)["rows"]
    assert (eight["count_class"], sixteen["count_class"]) == ("ii_out", "i")
    assert eight["time_to_train_min"] > 2 * sixteen["time_to_train_min"]
    assert sixteen["beyond_linear"].endswith("no result measured so")
    assert sixteen["flags"].startswith("more than linear: ")
    assert not sixteen["pareto"]


def test_dlrm_tpu_factors_in_another_unit_are_not_given(v07) -> None:
    """v0.7 DLRM: the TPUs log 15-18 "epochs" where the GPUs at the same batch log 1.9;
    the decomposition read tpu-v4-128's throughput efficiency 4.40 and tpu-v4-16's 8.02.
    Now no factor for either, each flagged, and the GPUs' factors stand. The flag says
    the unit the table counts in, epochs, to its end (it closed "samples to converge kept
    apart" beside a column of epochs)."""
    (result,) = analyze(v07, ["dlrm"], AnalysisOptions(n_boot=100))
    table = result.table.set_index("system_id")
    tpus = table.loc[["tpu-v4-16-TF", "tpu-v4-128-TF"]]
    assert tpus["throughput_efficiency"].isna().all()
    assert tpus["decomposition_flag"].str.contains("another unit or another rule").all()
    assert (tpus["convergence_unit"] == "epochs").all()
    for flag in tpus["decomposition_flag"]:
        assert flag.startswith("its epochs to converge are ")
        assert flag.endswith("(epochs to converge kept apart)") and "samples" not in flag
    gpus = table[table["accelerator_family"] != "TPU-v4"]
    assert (gpus["decomposition_flag"] == "").all()
    assert gpus["throughput_efficiency"].notna().all()
