"""A real Slurm cluster of one node, started for the tests in a folder of its own: munged
with a fresh key, slurmctld and slurmd from a minimal ``slurm.conf`` naming this host
(Debian's ``slurm-wlm`` and ``munge``; ``.ci/run`` installs them where it can), stopped
after. Where it cannot start (not root, the programs missing, a daemon that does not come
up) :func:`start_cluster` says why, for the test to skip with it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "sinfo", "scontrol")
START_S = 30.0


@dataclass
class Cluster:
    """A running one-node cluster: its folder, its ``slurm.conf`` and node name."""

    folder: Path
    conf: Path
    node: str

    @property
    def env(self) -> dict[str, str]:
        """This process's environment with the cluster's ``SLURM_CONF`` (for sbatch, srun)."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def stop(self) -> None:
        """End the daemons this cluster started (by their pid files) and remove its folder."""
        for name in ("slurmd", "slurmctld", "munged"):
            pid_file = self.folder / f"{name}.pid"
            try:
                pid = int(pid_file.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            _end(pid)
        shutil.rmtree(self.folder, ignore_errors=True)


def _end(pid: int) -> None:
    """SIGTERM ``pid``, SIGKILL after 5 s."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


CONF = """\
ClusterName=gpuscaletest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={folder}/munge.sock
CredType=cred/munge
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def start_cluster() -> Cluster | str:
    """A running one-node cluster, or why none could start."""
    missing = [p for p in PROGRAMS if shutil.which(p) is None]
    if missing:
        return f"no Slurm here ({', '.join(missing)} missing: apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "slurmd starts its tasks as root: the Slurm test runs as root only"
    folder = Path(tempfile.mkdtemp(prefix="gpuscale-slurm-"))  # short: a socket path
    for sub in ("state", "spool"):
        (folder / sub).mkdir()
    node = socket.gethostname().split(".")[0]
    cluster = Cluster(folder, folder / "slurm.conf", node)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    cluster.conf.write_text(
        CONF.format(
            node=node,
            folder=folder,
            ctld_port=_free_port(),
            slurmd_port=_free_port(),
            cpus=max(2, os.cpu_count() or 1),
        )
    )
    munged = [
        "munged",
        "--force",
        f"--socket={folder}/munge.sock",
        f"--key-file={key}",
        f"--log-file={folder}/munged.log",
        f"--pid-file={folder}/munged.pid",
        f"--seed-file={folder}/munged.seed",
    ]
    conf = str(cluster.conf)
    daemons = [munged, ["slurmctld", "-i", "-f", conf], ["slurmd", "-f", conf, "-N", node]]
    for command in daemons:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            cluster.stop()
            return f"{command[0]} did not start: {(done.stderr or done.stdout).strip()[-300:]}"
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        state = subprocess.run(
            ["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=cluster.env
        )
        if state.stdout.strip() == "idle":
            return cluster
        time.sleep(0.3)
    logs = " | ".join(
        (folder / f"{n}.log").read_text(errors="replace").strip()[-200:]
        for n in ("slurmctld", "slurmd")
        if (folder / f"{n}.log").exists()
    )
    cluster.stop()
    return f"Slurm's node did not come up in {START_S:.0f} s: {logs}"
