"""Sweeps as records: verdicts against the reference, NVLS, drops between sweeps,
NCCL settings and logs, units; and a real sweep on two gloo processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gpuscale.bench.collectives_config import BUS_FACTOR, bus_bandwidth, message_sizes
from gpuscale.interconnect.changes import ChangeKind
from gpuscale.interconnect.nccl import check_env, parse_debug_log
from gpuscale.interconnect.nvml import nvml_topology
from gpuscale.interconnect.records import read_sweeps
from gpuscale.interconnect.verdict import NO_REFERENCE, judge

from ..fake_nvml import FakeNvml, hgx_h100

SCHEMA = "gpuscale.collectives/2"
VIEW = "interconnect/verdicts"  # one sentence per collective, as `collectives` says it


def write(path: Path, sweeps: dict[str, list[tuple[int, float]]], op="all_reduce", n=8) -> Path:
    lines = []
    for sweep_id, points in sweeps.items():
        lines.append({"schema": SCHEMA, "kind": "sweep", "sweep_id": sweep_id, "device": "cuda"})
        for size, busbw in points:
            lines.append(
                {
                    "schema": SCHEMA,
                    "kind": "result",
                    "sweep_id": sweep_id,
                    "op": op,
                    "placement": "in-place",
                    "status": "ok",
                    "size_bytes": size,
                    "ranks": n,
                    "busbw_gbs": busbw,
                    "time_us": 1.0,
                }
            )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + "garbage\n")
    return path


def test_nvls_above_the_ring_figure_is_normal_on_nvswitch_hopper(tmp_path: Path) -> None:
    topo = nvml_topology(FakeNvml(hgx_h100()))
    sweeps = read_sweeps(write(tmp_path / "c.jsonl", {"a": [(1 << 28, 300.0), (1 << 30, 478.0)]}))
    (v,) = judge(sweeps, topology=topo)
    assert v.verdict == "normal" and v.peak_size_bytes == 1 << 30 and "NVLS" in v.sentence()
    assert sweeps.problems and "not a JSON record" in sweeps.problems[0]


@pytest.mark.parametrize("busbw, verdict", [(787.0, "normal"), (790.0, "suspicious")])
def test_nvls_explains_no_peak_beyond_the_line_rate(tmp_path: Path, busbw, verdict) -> None:
    """NVLink SHARP reduces in the switch, but each GPU still receives the whole result
    over its NVLinks: algbw within the 450 GB/s line rate of an H100, busbw within 450 x
    2 x 7/8 = 787.5 GB/s on 8. Beyond it is no NVLS, and says the ceiling."""
    topo = nvml_topology(FakeNvml(hgx_h100()))
    (v,) = judge(read_sweeps(write(tmp_path / "c.jsonl", {"a": [(1 << 30, busbw)]})), topology=topo)
    assert v.verdict == verdict and v.ratio == pytest.approx(busbw / (18 * 20.6))
    assert ("ceiling, 788 GB/s" in v.sentence()) == (verdict == "suspicious")


def test_wrong_data_back_makes_a_normal_bandwidth_suspicious(tmp_path: Path) -> None:
    """An H100 all-reduce at 478 GB/s is NVLS-normal; the same sweep whose check found 12
    wrong elements at 1 GiB is suspicious, that said first with the size: a link that
    corrupts data has no bandwidth to trust."""
    topo = nvml_topology(FakeNvml(hgx_h100()))
    path = write(tmp_path / "c.jsonl", {"a": [(1 << 28, 300.0), (1 << 30, 478.0)]})
    lines = [json.loads(t) for t in path.read_text().splitlines()[:-1]]
    for line in lines:
        if line["kind"] == "result":
            line["wrong"] = 12 if line["size_bytes"] == 1 << 30 else 0
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (v,) = judge(read_sweeps(path), topology=topo)
    assert v.verdict == "suspicious" and v.peak_busbw_gbs == 478.0
    assert v.causes[0].startswith("12 wrong elements came back at 1 GiB ")
    assert v.to_dict()["causes"][0] == v.causes[0] and "NVLS" not in v.sentence()


def test_a_sweep_of_one_rank_crossed_no_link_and_is_not_judged(tmp_path: Path) -> None:
    """The worker run under torchrun on one GPU writes all-reduce busbw 0 (2(n-1)/n = 0):
    no link was crossed, so neither a preset nor a topology judges it, and no cause is
    named."""
    path = write(tmp_path / "c.jsonl", {"a": [(1 << 20, 0.0), (1 << 30, 0.0)]}, n=1)
    topo = nvml_topology(FakeNvml(hgx_h100()))
    for kwargs in ({"preset": "nvlink4"}, {"topology": topo}):
        (v,) = judge(read_sweeps(path), **kwargs)
        assert (v.verdict, v.expected_busbw_gbs, v.ratio, v.causes) == (
            NO_REFERENCE,
            None,
            None,
            [],
        )
        assert "one rank: no link between devices was crossed" in v.sentence()


def test_the_latest_sweep_is_judged_and_a_drop_reported(tmp_path: Path, golden) -> None:
    path = write(tmp_path / "c.jsonl", {"old": [(1 << 30, 360.0)], "new": [(1 << 30, 200.0)]})
    topo = nvml_topology(FakeNvml(hgx_h100()))
    (v,) = judge(read_sweeps(path), topology=topo)
    assert v.peak_busbw_gbs == 200.0 and v.verdict == "low"
    assert v.change is not None and v.change.kind is ChangeKind.DROPPED
    assert (v.change.against, v.change.before_gbs) == ("old", 360.0)
    golden.check(VIEW, "low, and dropped since an earlier sweep", v.sentence())


def test_cpu_sweeps_have_no_reference(tmp_path: Path, golden) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        json.dumps({"schema": SCHEMA, "kind": "sweep", "sweep_id": "s", "device": "cpu"})
        + "\n"
        + json.dumps(
            {
                "schema": SCHEMA,
                "kind": "result",
                "sweep_id": "s",
                "op": "all_reduce",
                "status": "ok",
                "size_bytes": 8,
                "ranks": 2,
                "busbw_gbs": 0.1,
            }
        )
        + "\n"
    )
    (v,) = judge(read_sweeps(path))
    assert v.ratio is None and v.verdict == NO_REFERENCE
    golden.check(VIEW, "CPU processes", v.sentence())
    # a GPU link's preset asked for is no test of a CPU sweep (not "5% of the 24 GB/s
    # expected for pcie4-x16: SUSPICIOUS. Check: which transport NCCL chose"): said so
    (v,) = judge(read_sweeps(path), preset="pcie4-x16")
    said = v.sentence()
    assert v.ratio is None and v.verdict == NO_REFERENCE and not v.causes
    assert "pcie4-x16" in said and "SUSPICIOUS" not in said and "NCCL" not in said
    golden.check(VIEW, "CPU processes, a GPU link's preset asked for", said)


def test_version_1_files_still_read(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    rows = [
        {
            "schema": "gpuscale.collectives/1",
            "op": "all_reduce",
            "status": "ok",
            "bytes": 1024,
            "ranks": 2,
            "time_us": 10.0,
            "busbw_gbs": 0.1,
        }
    ]
    rows.append({"schema": "gpuscale.collectives/1", "op": "topology", "topology": None})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sweeps = read_sweeps(path)
    assert list(sweeps.results["size_bytes"]) == [1024] and sweeps.latest == "legacy-1"


@pytest.mark.parametrize(
    "op, n, factor",
    [
        ("all_reduce", 8, 1.75),
        ("all_gather", 4, 0.75),
        ("reduce_scatter", 8, 0.875),
        ("all_to_all", 8, 0.875),
        ("broadcast", 8, 1.0),
        ("send_recv", 2, 1.0),
    ],
)
def test_busbw_factors_are_nccl_tests(op: str, n: int, factor: float) -> None:
    algbw, busbw = bus_bandwidth(op, 2e9, 0.5, n)  # 2 GB in 0.5 s
    assert algbw == pytest.approx(4.0) and busbw == pytest.approx(4.0 * factor)
    assert set(BUS_FACTOR) == {
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "all_to_all",
        "broadcast",
        "send_recv",
    }


def test_sizes_reach_the_maximum_asked() -> None:
    assert message_sizes(1 << 30)[-1] == 1 << 30 and len(message_sizes(1 << 30)) == 28
    assert message_sizes(100 << 20)[-2:] == [64 << 20, 100 << 20]


def test_nccl_settings_against_the_documentation(golden) -> None:
    found = {
        c.variable: c.message
        for c in check_env(
            {
                "NCCL_NTHREADS": "16",
                "NCCL_BUFFSIZE": "32MB",
                "NCCL_P2P_DISABLE": "1",
                "NCCL_ALGO": "Ring,Tree",
                "NCCL_PROTO": "^LL128",
                "NCCL_DEBUG": "INFO",
            },
            nvlink=True,
        )
    }
    assert set(found) == {"NCCL_NTHREADS", "NCCL_BUFFSIZE", "NCCL_P2P_DISABLE"}  # the others hold
    assert "64, 128, 256 or 512" in found["NCCL_NTHREADS"]  # the values allowed
    assert "NVLink" in found["NCCL_P2P_DISABLE"]  # what it disables here
    for variable, said in found.items():
        golden.check("interconnect/nccl_settings", variable, said)


def test_what_nccl_chose_is_read_from_its_log() -> None:
    text = """
node:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
node:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
node:1:1 [0] NCCL INFO Channel 01/0 : 1[1] -> 0[0] via SHM/direct/direct
node:1:1 [0] NCCL INFO Using network IB
node:1:1 [0] NCCL INFO NVLS multicast support is available on dev 0
node:1:1 [0] NCCL INFO AllReduce: opCount 0 count 256 [nranks=8] algo NVLS proto Simple
"""
    log = parse_debug_log(text)
    assert log.version == "2.21.5+cuda12.4" and log.network == "IB" and log.nvls is True
    assert log.transports == {"P2P/CUMEM": 1, "SHM/direct": 1}
    assert log.algorithms == {"NVLS/Simple": 1}


@pytest.mark.slow
def test_a_real_sweep_on_two_gloo_processes(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from gpuscale.bench.runner import torchrun_command

    out = tmp_path / "coll.jsonl"
    command = [
        *torchrun_command(2, "gpuscale.bench.collectives"),
        *("--out", str(out), "--backend", "gloo", "--max-bytes", "4096", "--iters", "5"),
        *("--ops", "all_reduce,all_gather,broadcast,send_recv", "--sweep-id", "t1"),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=180)
    sweeps = read_sweeps(out)
    assert sweeps.latest == "t1" and sweeps.headers["t1"]["backend"] == "gloo"
    ok = sweeps.results[sweeps.results["status"] == "ok"]
    assert set(ok["op"]) == {"all_reduce", "all_gather", "broadcast", "send_recv"}
    assert (ok["wrong"] == 0).all() and (ok["busbw_gbs"] > 0).all()
    assert {"in-place", "out-of-place"} <= set(ok[ok.op == "all_gather"]["placement"])
    assert sorted(ok[ok.op == "all_reduce"]["size_bytes"]) == message_sizes(4096)
    assert (ok["time_us_p99"] >= ok["time_us_p50"]).all()
    # the host's load, as bench records a run's (this sweep is too short to measure it)
    assert set(sweeps.headers["t1"]["host"]) == {"other_load_share", "steal_share"}


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_sweep_on_a_busy_host_is_flagged_in_its_verdict(tmp_path: Path, device) -> None:
    """A walk: two `python -c "while 1: pass"` beside a gloo sweep went unseen (its header
    recorded no host load; bench records other_load_share). The header's share above
    the bench's threshold is flagged in every collective's verdict, as bench flags a run;
    one not measured (a sweep under a second) or below it says nothing."""
    busy = {"other_load_share": 0.63, "steal_share": 0.0}
    (v,) = judge(read_sweeps(_cpu_sweep(tmp_path / "b.jsonl", device, host=busy)))
    said = v.sentence()
    assert "Machine busy: other processes used 63% of its CPU time during the sweep" in said
    assert said.endswith("run on a quieter machine, nothing else running."), said
    assert v.to_dict()["host"] == list(v.host) and len(v.host) == 1
    for quiet in ({"other_load_share": 0.02, "steal_share": 0.0}, dict.fromkeys(busy), None):
        (v,) = judge(read_sweeps(_cpu_sweep(tmp_path / "q.jsonl", device, host=quiet)))
        assert "busy" not in v.sentence() and v.host == ()


def _cpu_sweep(
    path: Path, device: str = "cpu", nodes: int | None = None, host: dict | None = None
) -> Path:
    header = {"schema": SCHEMA, "kind": "sweep", "sweep_id": "s", "device": device}
    if nodes is not None:
        header["nodes"] = nodes
    if host is not None:
        header["host"] = host
    row = {
        "schema": SCHEMA,
        "kind": "result",
        "sweep_id": "s",
        "op": "all_reduce",
        "status": "ok",
        "size_bytes": 1 << 30,
        "ranks": 8,
        "busbw_gbs": 300.0,
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps(row) + "\n")
    return path


def test_a_preset_is_said_by_what_it_links(tmp_path: Path) -> None:
    """Each preset is said by its kind: ``eth25`` (``collectives --interconnect eth25`` on
    CPU) is a network link between nodes' NICs, never "a GPU link"."""
    from gpuscale.hardware.links import LINK_KINDS, PRESETS

    network = {name for name, p in PRESETS.items() if p.kind == "network"}
    assert network == {"ib-ndr400", "ib-hdr200", "eth100", "eth25"}
    assert {p.kind for p in PRESETS.values()} == set(LINK_KINDS)
    sweeps = read_sweeps(_cpu_sweep(tmp_path / "c.jsonl"))
    for name, preset in PRESETS.items():
        (v,) = judge(sweeps, preset=name)
        said = v.sentence()
        assert v.ratio is None and f"{name} is {LINK_KINDS[preset.kind]}" in said, said
        assert ("GPU" in said) == (name not in network), said


def test_one_node_is_not_judged_against_a_network(tmp_path: Path) -> None:
    """Eight GPUs of one node cross no network: ib-ndr400's 48 GB/s is no test of them
    (300 GB/s was "SUSPICIOUS" there); a sweep across nodes is judged against a ring
    through the NICs: 8 ranks on 2 nodes are 4 a node, one NIC each, and the header names
    no GPU, so the NICs' sum alone (4 x 48 GB/s; tests/interconnect/test_across_nodes.py)."""
    (v,) = judge(read_sweeps(_cpu_sweep(tmp_path / "a.jsonl", "cuda", 1)), preset="ib-ndr400")
    assert v.ratio is None and "one node" in v.sentence() and "SUSPICIOUS" not in v.sentence()
    (v,) = judge(read_sweeps(_cpu_sweep(tmp_path / "b.jsonl", "cuda", 2)), preset="ib-ndr400")
    assert v.ratio is not None and v.expected_busbw_gbs == pytest.approx(192.0)
    (v,) = judge(read_sweeps(_cpu_sweep(tmp_path / "c.jsonl", "cuda", 1)), preset="nvlink4")
    assert v.ratio is not None  # a GPU link inside the node: judged


def test_a_saved_topology_on_cpu_is_said_not_judged(tmp_path: Path, golden) -> None:
    """`collectives --topo-file X --gpu H100` on CPU processes: the saved GPU links are
    said not to be the sweep's test, not dropped without a word."""
    topo = nvml_topology(FakeNvml(hgx_h100()))
    (v,) = judge(read_sweeps(_cpu_sweep(tmp_path / "c.jsonl")), topology=topo)
    assert v.ratio is None and v.verdict == NO_REFERENCE
    golden.check(VIEW, "CPU processes, a saved GPU topology given", v.sentence())


def test_sizes_rounded_to_whole_elements_are_said_once() -> None:
    """A size is sent as whole float32 elements, split evenly over the ranks in the ops
    whose ranks each hold a part (as nccl-tests sends it): ``--min-bytes 7 --max-bytes
    7`` ran as 4 B ("peak at 4 B", not a word why), ``3`` to ``13`` all-gather on 2 ranks
    as four rows of 8 B. One sentence says how; none where every size goes as asked."""
    from gpuscale.bench.collectives_config import CollectivesConfig, rounded_sizes, sent_bytes

    assert [sent_bytes("all_reduce", 7, 2), sent_bytes("all_gather", 13, 2)] == [4, 8]
    assert sent_bytes("all_gather", 8, 3) == 12  # one element per rank at least
    said = rounded_sizes(CollectivesConfig(ops=("all_reduce",), min_bytes=7, max_bytes=7), "cpu", 2)
    assert said == [
        "sizes sent as nccl-tests sends them, in whole 4-byte elements: all_reduce sent 7 B as 4 B"
    ]
    gather = CollectivesConfig(ops=("all_gather",), min_bytes=3, max_bytes=13)
    assert rounded_sizes(gather, "cpu", 2) == [
        "sizes sent as nccl-tests sends them, in whole 4-byte elements, split evenly over "
        "the 2 ranks in all_gather: all_gather sent 3 B, 6 B, 12 B and 13 B as 8 B; each size "
        "sent is timed and shown once"
    ]
    # the default sweep on 2 ranks sends every size as asked; on 3, the split ops round
    # (ops rounded alike said together, the first three sizes named)
    assert rounded_sizes(CollectivesConfig(), "cuda", 2) == []
    (three,) = rounded_sizes(CollectivesConfig(ops=("all_reduce", "all_gather")), "cuda", 3)
    assert three.endswith(
        "all_gather sent 8 B and 16 B as 12 B; 32 B as 24 B; 64 B as 60 B; 24 sizes more; "
        "each size sent is timed and shown once"
    )


def test_sizes_sent_alike_are_timed_once() -> None:
    """``--min-bytes 1 --max-bytes 16`` all-reduced sent 1, 2 and 4 B each as 4 B: three
    rows of 4 B, the same message shown thrice. The first size of each size sent is timed;
    the note says the sizes went as one."""
    from gpuscale.bench.collectives_config import (
        CollectivesConfig,
        message_sizes,
        rounded_sizes,
        sizes_measured,
    )

    assert sizes_measured("all_reduce", message_sizes(16, 1), 2) == [1, 8, 16]
    assert sizes_measured("all_gather", [3, 6, 12, 13, 16], 2) == [3, 16]  # 8 B, then 16 B
    assert sizes_measured("all_reduce", message_sizes(1 << 30), 2) == message_sizes(1 << 30)
    (said,) = rounded_sizes(CollectivesConfig(min_bytes=1, max_bytes=16), "cpu", 2)
    assert said.endswith(
        "all_reduce sent 1 B and 2 B as 4 B; each size sent is timed and shown once"
    )


def test_a_size_sent_that_reads_as_the_size_asked_is_said_in_bytes() -> None:
    """4 KiB all-gathered on 3 ranks goes as 4092 B: the note said "4 KiB as 4 KiB"
    (both three significant figures); the size sent is then in whole bytes."""
    from gpuscale.bench.collectives_config import CollectivesConfig, rounded_sizes

    gather = CollectivesConfig(ops=("all_gather",), min_bytes=1024, max_bytes=4096)
    (said,) = rounded_sizes(gather, "cpu", 3)
    assert said.endswith("all_gather sent 1 KiB as 1020 B; 2 KiB as 1.99 KiB; 4 KiB as 4092 B")


@pytest.mark.slow
def test_a_sweep_says_how_its_sizes_were_sent(tmp_path: Path) -> None:
    """``gpuscale collectives --min-bytes 3 --max-bytes 13 --ops all_gather`` on two gloo
    processes: every row is 8 B, and the lines beside the verdict say why, once."""
    pytest.importorskip("torch")
    from gpuscale.bench.collectives_config import CheckRequest, CollectivesConfig
    from gpuscale.bench.collectives_sweep import check_interconnect

    config = CollectivesConfig(ops=("all_gather",), min_bytes=3, max_bytes=13, iters=2, warmup=1)
    check = check_interconnect(CheckRequest(out=tmp_path / "c.jsonl", nproc="2"), config, 2)
    rows = check.run.latest  # 3, 6, 12 and 13 B go as 8 B: timed once in each placement
    assert sorted(zip(rows["placement"], rows["size_bytes"], strict=True)) == [
        ("in-place", 8),
        ("out-of-place", 8),
    ]
    rounded = [v for v in check.verdicts if v.startswith("sizes sent")]
    assert rounded == [
        "sizes sent as nccl-tests sends them, in whole 4-byte elements, split evenly over "
        "the 2 ranks in all_gather: all_gather sent 3 B, 6 B, 12 B and 13 B as 8 B; each size "
        "sent is timed and shown once"
    ]
