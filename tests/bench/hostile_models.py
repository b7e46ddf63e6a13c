"""Model factories that misbehave, for ``bench --model tests/bench/hostile_models.py:NAME``:
in the parameter count (every process) or only in the ranks (``RANK`` is set there)."""

from __future__ import annotations

import os
import sys
import time

import torch


def _batch(n, d):
    return torch.randn(n, 4).to(d), torch.randint(0, 3, (n,)).to(d)


def hang():
    time.sleep(3600)


def exits():
    sys.exit(3)


def hard_exit():
    os._exit(7)


def allocate():
    hoard = []
    while True:
        hoard.append(bytearray(64 << 20))


def interrupt():
    raise KeyboardInterrupt


def rank_only():
    if "RANK" in os.environ:
        raise RuntimeError("only in the rank: checkpoint missing")
    return torch.nn.Linear(4, 3), _batch


def rank_exit():
    if "RANK" in os.environ:
        os._exit(9)
    return torch.nn.Linear(4, 3), _batch


def rank_hang():
    if "RANK" in os.environ:
        time.sleep(3600)
    return torch.nn.Linear(4, 3), _batch


def rank_allocate():
    if "RANK" in os.environ:
        hoard = []
        while True:
            hoard.append(bytearray(64 << 20))
    return torch.nn.Linear(4, 3), _batch


def tensors():
    hoard = []
    while True:
        hoard.append(torch.ones(2**24))


def native_oom():
    # what OpenBLAS does when its thread buffers fail to allocate under the cap (seen on a
    # 16-core H100 host importing torchvision): one line on stderr, then exit(1)
    print("OpenBLAS error: Memory allocation still failed after 10 retries, giving up.")
    sys.stdout.flush()
    os._exit(1)


def blas_threads():
    # one parameter per BLAS thread the child was given: a count needs one
    return torch.nn.Linear(1, int(os.environ.get("OPENBLAS_NUM_THREADS", "0")), bias=False), _batch


def vector_loss():
    """A loss per sample, never reduced: no scalar to run backward from."""

    def loss(output, targets):
        return torch.nn.functional.cross_entropy(output, targets, reduction="none")

    return torch.nn.Linear(4, 3), _batch, loss
