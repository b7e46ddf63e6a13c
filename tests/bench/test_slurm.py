"""``srun gpuscale bench`` on a real Slurm: the documented batch script (docs/measure-results.md)
run by sbatch on a one-node cluster with two tasks gives the rows the plain command gives;
the step's nodes read from the environment srun sets; host lists expanded as Slurm does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gpuscale.bench import sweep_plan
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.slurm import HostlistError, expand_hostlist, rendezvous_port, slurm_task
from gpuscale.bench.sweep_plan import nodes_of
from gpuscale.bench.sweep_request import SweepRequest

from .slurm_cluster import Cluster, start_cluster

ROOT = Path(__file__).resolve().parents[2]
# The documented script's stand-ins here: a tiny model on gloo, one node's two CPU cores
# (one thread a rank: a sweep's threads per rank are the host's cores over its most ranks)
TINY = "mlp-0.2m --steps 2 --warmup 1 --threads 1"
STAND_INS = {
    "--nproc 1,2,4,8": "--backend gloo --nproc 1",
    "--nproc 8 ": "--backend gloo --nproc 2 ",
    "tf-7m,tf-30m": TINY,
}
PLAIN = f"bench --backend gloo --nproc 1,2 --models {TINY} --out r.jsonl"


def documented_script() -> str:
    """The batch script of docs/measure-results.md (the shell block with ``#SBATCH`` lines)."""
    page = (ROOT / "docs" / "measure-results.md").read_text()
    found = [b for b in re.findall(r"```bash\n(.*?)```", page, re.S) if "#SBATCH" in b]
    assert len(found) == 1, "docs/measure-results.md has one sbatch script"
    return found[0]


@pytest.fixture(scope="module")
def cluster():
    started = start_cluster()
    if isinstance(started, str):
        pytest.skip(started)
    yield started
    started.stop()


def _gpuscale_on_path(folder: Path) -> dict[str, str]:
    """An environment whose ``gpuscale`` is the code under test."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "gpuscale"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gpuscale.cli "$@"\n')
    wrapper.chmod(0o755)
    return {
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }


def _rows(path: Path) -> list[tuple[str, str, str]]:
    """(key, status, config) of each row: what was run and how it went, not its timings."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted((r["key"], r["status"], json.dumps(r["config"], sort_keys=True)) for r in rows)


@pytest.mark.slow
def test_the_documented_batch_script_gives_the_plain_commands_rows(
    cluster: Cluster, tmp_path: Path
) -> None:
    script = documented_script()
    for old, new in STAND_INS.items():
        assert old in script, f"the script no longer holds {old!r}: update the stand-ins"
        script = script.replace(old, new)
    script = re.sub(r"#SBATCH --gpus-per-node=\S+[^\n]*\n", "", script)  # no GPU here
    (tmp_path / "slurm").mkdir()
    (tmp_path / "plain").mkdir()
    (tmp_path / "slurm" / "bench.sh").write_text(script)
    env = {**cluster.env, **_gpuscale_on_path(tmp_path)}
    sbatch = ["sbatch", "--wait", "--nodes=1", "--ntasks=2", "--ntasks-per-node=2"]
    job = subprocess.Popen(
        [*sbatch, "--output=job.log", "bench.sh"],
        cwd=tmp_path / "slurm",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    plain = subprocess.run(
        ["gpuscale", *PLAIN.split()],
        cwd=tmp_path / "plain",
        env={**os.environ, **_gpuscale_on_path(tmp_path / "plain")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    submitted, _ = job.communicate(timeout=600)
    log = (tmp_path / "slurm" / "job.log").read_text(errors="replace")
    assert job.returncode == 0, f"{submitted}\n{log}"
    assert plain.returncode == 0, plain.stderr
    assert _rows(tmp_path / "slurm" / "results.jsonl") == _rows(tmp_path / "plain" / "r.jsonl")
    assert re.search(rf"Slurm job \d+: node 1 of 1 \({cluster.node}\)", log)
    assert f"Slurm task 1 on {cluster.node} stands aside" in log  # the second task


def _step(nodes: str, node_id: int, local_id: int = 0, job: str = "4242") -> dict[str, str]:
    return {
        "SLURM_JOB_ID": job,
        "SLURM_STEP_ID": "0",
        "SLURM_STEP_NODELIST": nodes,
        "SLURM_STEP_NUM_NODES": str(len(expand_hostlist(nodes))),
        "SLURM_NODEID": str(node_id),
        "SLURM_LOCALID": str(local_id),
    }


def test_a_step_of_two_nodes_is_read_as_the_sweeps_nodes(tmp_path: Path) -> None:
    request = SweepRequest(out=tmp_path / "r.jsonl")
    nodes = nodes_of(request, _step("gpu[07-08]", 1))
    assert (nodes.nnodes, nodes.node_rank, nodes.rdzv_endpoint) == (2, 1, "gpu07:19242")
    assert nodes.said == ("Slurm job 4242: node 2 of 2 (gpu07, gpu08), rendezvous at gpu07:19242",)
    given = SweepRequest(out=tmp_path / "r.jsonl", rdzv_endpoint="10.0.0.1:29500", nnodes=2)
    assert nodes_of(given, _step("gpu[07-08]", 0)).rdzv_endpoint == "10.0.0.1:29500"  # given wins
    aside = nodes_of(request, _step("gpu[07-08]", 0, local_id=1))
    assert aside.aside and aside.aside.startswith("Slurm task 1 on gpu07 stands aside")
    alone = nodes_of(request, {"SLURM_JOB_ID": "7", "SLURM_NNODES": "4"})  # sbatch's shell
    assert (alone.nnodes, alone.rdzv_endpoint) == (1, None)
    assert "outside srun: this node alone is benched" in alone.said[0]
    assert nodes_of(request, {}).said == ()  # no Slurm: nothing read, nothing said


def test_two_jobs_meeting_at_one_port_never_join_one_rendezvous(tmp_path: Path) -> None:
    """Job ids 4242 and 14242 share a port (19,242) on a shared first node: each sweep's
    launches carry its own job's rendezvous id, so a node of one never joins the other."""
    request = SweepRequest(out=tmp_path / "r.jsonl", models="mlp-0.2m", nproc="1")
    planned = [
        sweep_plan.plan_bench(request, BenchConfig(backend="gloo"), _step("gpu[07-08]", 0, job=j))
        for j in ("4242", "14242")
    ]
    configs = [p.config for p in planned]
    assert all(c is not None for c in configs)
    assert {c.rdzv_endpoint for c in configs if c} == {"gpu07:19242"}
    assert [c.rdzv_id for c in configs if c] == ["gpuscale-slurm-4242", "gpuscale-slurm-14242"]
    alone = sweep_plan.plan_bench(request, BenchConfig(backend="gloo"), {})
    assert alone.config is not None and alone.config.rdzv_id == "gpuscale"  # no job to name


def test_the_plan_numbers_a_node_one_way(tmp_path: Path) -> None:
    """Under srun the Slurm line and the rendezvous line name one node: the second node
    of two is node 2 of 2 in both (the wait line said node 1 of 2, the 0-based rank)."""
    request = SweepRequest(out=tmp_path / "r.jsonl", models="mlp-0.2m", nproc="1")
    said = sweep_plan.plan_bench(request, BenchConfig(backend="gloo"), _step("gpu[07-08]", 1))
    lines = said.said.splitlines()
    assert lines[1].startswith("Slurm job 4242: node 2 of 2 (gpu07, gpu08)")
    assert lines[2].startswith("node 2 of 2 (node rank 1): each world size starts once all 2")
    given = SweepRequest(
        out=tmp_path / "r.jsonl",
        models="mlp-0.2m",
        nproc="1",
        nnodes=2,
        node_rank=0,
        rdzv_endpoint="10.0.0.1:29500",
    )
    plain = sweep_plan.plan_bench(given, BenchConfig(backend="gloo"), {}).said.splitlines()
    assert plain[1].startswith("node 1 of 2 (node rank 0): each world size starts")


def test_a_step_that_cannot_be_read_says_what_to_give() -> None:
    assert slurm_task({"SLURM_JOB_ID": "1"}) is None  # no step
    with pytest.raises(HostlistError, match="give --nnodes, --node-rank and --rdzv-endpoint"):
        slurm_task({**_step("gpu[07-08]", 1), "SLURM_STEP_NUM_NODES": "3"})
    with pytest.raises(HostlistError, match="unclosed bracket"):
        slurm_task({**_step("gpu07", 0), "SLURM_STEP_NODELIST": "gpu[07-08"})


@pytest.mark.parametrize(
    ("text", "hosts"),
    [
        ("node[01-03,07]", ["node01", "node02", "node03", "node07"]),
        ("a[1-2]-b[3-4]", ["a1-b3", "a1-b4", "a2-b3", "a2-b4"]),
        ("n[8-10]", ["n8", "n9", "n10"]),
        ("c0[8-10]", ["c08", "c09", "c010"]),
        ("n[098-101]", ["n098", "n099", "n100", "n101"]),
        ("login,gpu[1,3]", ["login", "gpu1", "gpu3"]),
    ],
)
def test_host_lists_expand_as_slurm_expands_them(text: str, hosts: list[str]) -> None:
    assert expand_hostlist(text) == hosts


@pytest.mark.parametrize("text", ["n[3-1]", "n[1-5:2]", "n[1", "n]1[", "a,,b", "n[x]"])
def test_a_host_list_that_is_none_is_refused(text: str) -> None:
    with pytest.raises(HostlistError, match="is no Slurm host list"):
        expand_hostlist(text)


def test_the_rendezvous_port_is_the_jobs() -> None:
    assert rendezvous_port("4242") == 19_242
    assert rendezvous_port("1234567") == 19_567
    assert rendezvous_port("12_3") == 15_123  # an array job's id


_RANGE = st.tuples(st.integers(0, 120), st.integers(0, 5), st.integers(1, 3)).map(
    lambda t: f"{t[0]:0{t[2]}d}" + (f"-{t[0] + t[1]}" if t[1] else "")
)
_HOSTS = st.lists(
    st.tuples(
        st.sampled_from(["node", "gpu-", "c0"]),
        st.lists(_RANGE, min_size=1, max_size=3),
        st.sampled_from(["", "", "", "-ib", "-ib[1-2]"]),
    ),
    min_size=1,
    max_size=3,
).map(lambda items: ",".join(f"{p}[{','.join(r)}]{s}" for p, r, s in items))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_HOSTS)
def test_host_lists_expand_as_scontrol_does(cluster: Cluster, text: str) -> None:
    shown = subprocess.run(
        ["scontrol", "show", "hostnames", text], capture_output=True, text=True, env=cluster.env
    )
    assert shown.returncode == 0, shown.stderr
    # Slurm 22.05 refuses text after a last bracket (``node[1-2]-ib``), which it never
    # writes into a step's node list; gpuscale reads it as the same hosts' names
    assume("Invalid hostlist" not in shown.stdout + shown.stderr)
    assert expand_hostlist(text) == shown.stdout.split()


def test_a_second_task_on_a_node_runs_nothing_and_says_why(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gpuscale.cli import app

    pytest.importorskip("torch")
    out = tmp_path / "r.jsonl"
    args = ["bench", "--backend", "gloo", "--nproc", "1", "--models", "mlp-0.2m", "--out", out]
    done = CliRunner().invoke(app, [str(a) for a in args], env=_step("vm", 0, local_id=1))
    assert done.exit_code == 0, done.output
    assert done.stderr.startswith("Slurm task 1 on vm stands aside: gpuscale bench starts")
    assert not out.exists()


def test_a_second_task_on_a_node_runs_no_collectives_sweep(tmp_path: Path) -> None:
    """srun gpuscale collectives with two tasks a node ran two sweeps at once on its
    devices, the second judged against the first ('ROSE 346% since sweep ...'): the
    node's first task runs it, a later one is refused before any process starts."""
    from typer.testing import CliRunner

    from gpuscale.bench.collectives_config import CheckRequest
    from gpuscale.cli import app

    asked = CheckRequest(out=tmp_path / "c.jsonl", nproc="2")
    assert asked.world(_step("vm", 0)) == 2  # the node's first task
    assert asked.world({}) == 2  # no Slurm
    with pytest.raises(ValueError, match="gpuscale collectives starts a node's processes"):
        asked.world(_step("vm", 0, local_id=1))
    # a node list that cannot be read: the task number on the node alone decides
    with pytest.raises(ValueError, match=r"^Slurm task 1 on .* stands aside"):
        asked.world({**_step("vm", 0, local_id=1), "SLURM_STEP_NODELIST": "vm["})
    assert asked.world({**_step("vm", 0), "SLURM_STEP_NODELIST": "vm["}) == 2
    out = tmp_path / "c.jsonl"
    args = ["collectives", "--backend", "gloo", "--nproc", "2", "--out", str(out)]
    done = CliRunner().invoke(app, args, env=_step("vm", 0, local_id=1))
    assert done.exit_code == 2, done.output
    assert "Slurm task 1 on vm stands aside: gpuscale collectives starts" in done.stderr
    assert "--ntasks-per-node=1" in done.stderr
    assert not out.exists()


def test_several_nodes_without_an_endpoint_are_refused_before_a_model_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rendezvous is checked before the models are built (torch, seconds): the refusal
    is quick and names --rdzv-endpoint."""

    def built(*args: object, **kwargs: object) -> None:
        pytest.fail("a model was built before the nodes were checked")

    monkeypatch.setattr(sweep_plan, "choose_models", built)
    request = SweepRequest(out=tmp_path / "r.jsonl", nnodes=2)
    with pytest.raises(ValueError, match="--rdzv-endpoint"):
        sweep_plan.plan_bench(request, BenchConfig(backend="gloo"), environ={})
