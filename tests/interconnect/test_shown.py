"""The interconnect's tables as the commands print them (``gpuscale.interconnect.shown``):
a topology's matrix, NICs and affinities, and a sweep's table per collective."""

from __future__ import annotations

import pandas as pd

from gpuscale.interconnect.shown import (
    sweep_failures,
    sweep_spread,
    sweep_tables,
    topology_info,
    topology_tables,
)
from gpuscale.interconnect.topology import parse_topo_matrix
from gpuscale.tables import COLLECTIVES_COLUMNS

from ..builders import sweep_rows
from .test_topology_text import A100_8, H100_8

VIEW = "interconnect/topology"  # what `topo` and `collectives` show in words


def test_topology_tables_matrix_nics_and_affinity(golden) -> None:
    topology = parse_topo_matrix(H100_8)
    titles = [title for title, _ in topology_tables(topology, wide=False)]
    assert len(titles) == 3 and topology.source in titles[0]
    golden.check(VIEW, "titles: a matrix with NICs", "\n".join(titles))
    matrix, nics, affinity = (t for _, t in topology_tables(topology, wide=False))
    assert list(matrix.columns) == ["gpu", *(f"GPU{i}" for i in range(8))]
    assert matrix.iloc[0, 2] == "NV18" and matrix.iloc[0, 1] == "X"
    assert (
        list(nics["nic"]) == ["NIC0", "NIC1"]
        and list(nics.iloc[1, 2:]) == ["SYS"] * 4 + ["PIX"] * 4
    )
    assert list(affinity["numa_node"]) == ["0"] * 4 + ["1"] * 4


def test_topology_tables_leave_out_what_the_matrix_lacks(golden) -> None:
    tables = topology_tables(parse_topo_matrix(A100_8), wide=False)
    matrix, affinity = (table for _, table in tables)  # no NICs: no NIC table
    assert "numa_node" in affinity.columns and "gpu" in matrix.columns
    golden.check(VIEW, "titles: a matrix without NICs", "\n".join(title for title, _ in tables))


def test_topology_wide_is_one_table_with_every_column() -> None:
    [(_, wide)] = topology_tables(parse_topo_matrix(H100_8), wide=True)
    assert len(wide) == 8 and {"cpu_affinity", "numa_node", "NIC0", "NIC1"} <= set(wide.columns)
    assert list(wide["NIC1"]) == ["SYS"] * 4 + ["PIX"] * 4


def test_topology_info_reads_nccl_settings_only_from_the_environment_given() -> None:
    topology = parse_topo_matrix(A100_8)
    assert "nccl_env" not in topology_info(topology, None)
    nccl = {"NCCL_P2P_DISABLE": "maybe"}
    info = topology_info(topology, {**nccl, "HOME": "/root"})
    assert info["nccl_env"] == nccl
    (check,) = info["nccl_checks"]
    assert [check.split(" is ")[0]] == [f"{k}={v}" for k, v in nccl.items()]  # as given


def test_sweep_tables_one_per_collective_and_failures_said(golden) -> None:
    rows = [{**r, "sweep_id": "s1", "count": r["size_bytes"] // 4} for r in sweep_rows(10.0, 5.0)]
    rows.append({"op": "all_gather", "status": "error", "error": "NCCL timeout", "ranks": 2})
    rows.append({"op": "broadcast", "status": "oom", "ranks": 2})
    latest = pd.DataFrame(rows).reindex(columns=list(COLLECTIVES_COLUMNS))
    [(title, table)] = sweep_tables(latest)
    assert title.split()[0] == "all_reduce" and "(sweep s1)" in title
    golden.check(VIEW, "title: a sweep's collective", title)
    assert table["size"].iloc[-1] == "128 MiB" and table["size (B)"].iloc[-1] == 2**27
    assert list(table["type"].unique()) == ["float32"] and list(table["redop"].unique()) == ["sum"]
    failures = sweep_failures(latest)
    assert [f.split(":")[0] for f in failures] == ["all_gather", "broadcast"]
    assert "(NCCL timeout)" in failures[0]  # the error as the rank said it
    golden.check(VIEW, "a sweep's failures", "\n".join(failures))


def test_a_sweep_on_a_busy_machine_says_its_mean_is_far_above_its_median() -> None:
    """A gloo sweep on a busy host printed 8,495.81 us at 1 KiB (the mean, as nccl-tests
    prints it) against a median call of 604 us, and 2 KiB 46x faster, without a word: the
    bench flags such a tail (``NOISY_P95_OVER_P50``), the sweep said nothing."""
    rows = [{**r, "sweep_id": "s1", "time_us_p50": r["time_us"]} for r in sweep_rows(10.0, 5.0)]
    quiet = pd.DataFrame(rows).reindex(columns=list(COLLECTIVES_COLUMNS))
    assert sweep_spread(quiet) == []
    rows[0] = {**rows[0], "time_us": 8495.81, "time_us_p50": 604.34}  # 8 B: 14.1x
    rows[1] = {**rows[1], "time_us": 2 * rows[1]["time_us_p50"]}  # 16 B: 2.0x
    rows[2] = {**rows[2], "time_us": 1.4 * rows[2]["time_us_p50"]}  # 32 B: 1.4x, within
    busy = pd.DataFrame(rows).reindex(columns=list(COLLECTIVES_COLUMNS))
    [said] = sweep_spread(busy)
    assert said.startswith(f"all_reduce: at 2 of {len(rows)} sizes the mean call time shown")
    assert "up to 14.1x, 8,500 against 604 us at 8 B" in said
