"""A Slurm job step, read from the environment ``srun`` gives each of its tasks: the nodes
of ``gpuscale bench``'s sweep and the rendezvous host, so that one line in a batch script
(``srun gpuscale bench ...``) benches every node of an allocation.

``gpuscale bench`` launches the processes of a node itself (torchrun, one per device), so
a node runs one command: the step's first task on each node (``SLURM_LOCALID`` 0) is that
node's launcher, and any other task on it stands aside. The step's nodes
(``SLURM_STEP_NUM_NODES``, else ``SLURM_NNODES``) are the sweep's nodes, this node's
number in the step (``SLURM_NODEID``) its node rank, and the first host of the step's
node list (``SLURM_STEP_NODELIST``, else ``SLURM_JOB_NODELIST``), expanded as
``scontrol show hostnames`` expands it, the c10d rendezvous host. Its port is the job
id's (:func:`rendezvous_port`), so two jobs sharing a first node meet at one port only
where their ids' last four digits agree; even then each job's rendezvous id is its own
(``Nodes.rdzv_id``), so nodes of one never join the other's.

A batch script's own shell (sbatch runs it on the first node, outside any step: no
``SLURM_STEP_ID``) is no step: a bench started there runs on that node alone.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import product

from gpuscale.quantities import counted

# Ports a job's rendezvous takes: 15,000 + the job id's last four digits, below Linux's
# ephemeral range (32,768-60,999, which connections take their own ports from), as
# PyTorch Lightning's SLURMEnvironment derives its MASTER_PORT.
FIRST_PORT = 15_000
PORTS = 10_000


class HostlistError(ValueError):
    """A Slurm host list that is none (an unclosed bracket, a range upside down)."""


def expand_hostlist(text: str) -> list[str]:
    """The hosts of a Slurm host list, in order, as ``scontrol show hostnames`` gives them:
    ``node[01-03,07]`` -> node01, node02, node03, node07; ``a[1-2]-b[3-4]`` -> a1-b3,
    a1-b4, a2-b3, a2-b4 (each bracket a dimension); a range keeps the width of its first
    number (``n[8-10]``: n8, n9, n10; ``n[08-10]``: n08, n09, n10)."""
    hosts: list[str] = []
    for item in _top_level_items(text):
        parts = re.split(r"(\[[^\[\]]*\])", item)
        if any(c in part for part in parts[::2] for c in "[]"):
            raise HostlistError(f"{text!r} is no Slurm host list (unmatched bracket in {item!r})")
        choices = [_bracket(part[1:-1], text) if part.startswith("[") else [part] for part in parts]
        hosts += ["".join(chosen) for chosen in product(*choices)]
    return hosts


def _top_level_items(text: str) -> list[str]:
    """``a,b[1,2],c`` -> a, b[1,2], c: the commas outside brackets split the list."""
    items, depth, start = [], 0, 0
    for at, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth not in (0, 1):
            raise HostlistError(f"{text!r} is no Slurm host list (brackets do not pair)")
        if char == "," and depth == 0:
            items.append(text[start:at])
            start = at + 1
    if depth:
        raise HostlistError(f"{text!r} is no Slurm host list (an unclosed bracket)")
    items.append(text[start:])
    if not all(item.strip() for item in items):
        raise HostlistError(f"{text!r} is no Slurm host list (an empty host)")
    return [item.strip() for item in items]


def _bracket(inside: str, text: str) -> list[str]:
    """The numbers a bracket names (``01-03,07``), each as wide as its range's first."""
    numbers = []
    for piece in inside.split(","):
        low, dash, high = piece.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise HostlistError(f"{text!r} is no Slurm host list (range {piece!r})")
        last = int(high or low)  # a range's end, else the one number
        if last < int(low):
            raise HostlistError(f"{text!r} is no Slurm host list (range {piece!r} runs down)")
        numbers += [str(n).zfill(len(low)) for n in range(int(low), last + 1)]
    return numbers


def rendezvous_port(job_id: str) -> int:
    """The job's rendezvous port: :data:`FIRST_PORT` + its id's last four digits."""
    digits = re.sub(r"\D", "", job_id)[-4:]
    return FIRST_PORT + int(digits or 0) % PORTS


@dataclass(frozen=True, slots=True)
class SlurmTask:
    """This process as a task of a Slurm job step: the step's ``nodes`` (host names, in
    order), this node's ``node_rank`` among them, this task's ``local_task`` number on its
    node (0: the node's launcher), and the job's id."""

    job_id: str
    nodes: tuple[str, ...]
    node_rank: int
    local_task: int

    @property
    def nnodes(self) -> int:
        return len(self.nodes)

    @property
    def rendezvous(self) -> str:
        """``HOST:PORT`` of the step's first node at the job's port."""
        return f"{self.nodes[0]}:{rendezvous_port(self.job_id)}"

    def aside(self, command: str = "gpuscale bench") -> str:
        """Why this task (not its node's first) runs nothing: ``command`` starts the
        node's processes itself."""
        return (
            f"Slurm task {self.local_task} on {self.nodes[self.node_rank]} stands aside: "
            f"{command} starts a node's processes itself, so it runs once per node (task "
            "0 runs it here); give srun --ntasks-per-node=1"
        )


def slurm_task(environ: Mapping[str, str]) -> SlurmTask | None:
    """This process as a task of a Slurm job step, from the environment ``srun`` sets;
    None outside a step (no ``SLURM_STEP_ID``: not under srun, or in a batch script's
    own shell). A step's variables that cannot be read raise :class:`HostlistError`."""
    if "SLURM_STEP_ID" not in environ or "SLURM_JOB_ID" not in environ:
        return None
    listed = environ.get("SLURM_STEP_NODELIST") or environ.get("SLURM_JOB_NODELIST", "")
    nodes = tuple(expand_hostlist(listed)) if listed else ()
    count = environ.get("SLURM_STEP_NUM_NODES") or environ.get("SLURM_NNODES", "")
    rank, local = environ.get("SLURM_NODEID", ""), environ.get("SLURM_LOCALID", "0")
    if not nodes or not all(v.isdigit() for v in (count, rank, local)):
        raise HostlistError(
            "a Slurm step without its nodes (SLURM_STEP_NODELIST or SLURM_JOB_NODELIST, "
            "SLURM_NNODES, SLURM_NODEID): give --nnodes, --node-rank and --rdzv-endpoint"
        )
    if int(count) != len(nodes) or int(rank) >= len(nodes):
        raise HostlistError(
            f"Slurm's node list {listed!r} names {counted(len(nodes), 'node')}, its step "
            f"{count} (node {rank}): give --nnodes, --node-rank and --rdzv-endpoint"
        )
    return SlurmTask(environ["SLURM_JOB_ID"], nodes, int(rank), int(local))


def second_task(environ: Mapping[str, str], command: str) -> str | None:
    """Why this process, a Slurm step's second or later task on its node, runs nothing of
    ``command`` (which starts the node's processes itself: several tasks on a node would
    run several sweeps at once on its devices); None where it is its node's first task,
    or no task of a step. A step whose node list cannot be read is told by its task
    number on the node (``SLURM_LOCALID``) alone, the node named as this host."""
    try:
        task = slurm_task(environ)
    except HostlistError:
        local = environ.get("SLURM_LOCALID", "0")
        number = int(local) if local.isdigit() else 0
        task = SlurmTask(environ["SLURM_JOB_ID"], (socket.gethostname(),), 0, number)
    return task.aside(command) if task is not None and task.local_task else None


def batch_shell_note(environ: Mapping[str, str]) -> str | None:
    """What a bench started in a batch script's own shell of a job of several nodes is
    told: it runs here alone (None: not such a shell)."""
    nodes = environ.get("SLURM_NNODES") or environ.get("SLURM_JOB_NUM_NODES", "")
    if "SLURM_STEP_ID" in environ or not nodes.isdigit() or int(nodes) < 2:
        return None
    return (
        f"in Slurm job {environ.get('SLURM_JOB_ID', '?')} of {nodes} nodes but outside srun: "
        "this node alone is benched; start the same command under srun to bench every node"
    )


def across_nodes(head: str, tail: str, devices: int, per_node: int) -> str | None:
    """How ``gpuscale bench`` measures ``devices`` devices across nodes of ``per_node``
    (``head``: the command up to ``--nproc``; ``tail``: its options after): one command on
    each node, ``--nproc`` its devices, with ``--nnodes``, ``--node-rank`` and
    ``--rdzv-endpoint`` (the torchrun form), or one ``srun`` line that sets those three from
    the job step (docs/measure-results.md, "On a cluster"). None where ``devices`` fit one
    node or do not split evenly over the nodes they need."""
    nodes = -(-devices // per_node)  # ceil: the fewest nodes that hold them
    if nodes < 2 or devices % nodes:
        return None
    each = f"{head} --nproc {devices // nodes}{tail}"
    ranks = "1 on the other" if nodes == 2 else f"1 to {nodes - 1} on the others"
    return (
        f"`{each} --nnodes {nodes} --node-rank R --rdzv-endpoint HOST:PORT` on each of "
        f"{nodes} nodes (R: 0 on the node at HOST, {ranks}), or under Slurm "
        f"`srun --nodes={nodes} --ntasks-per-node=1 {each}`"
    )
