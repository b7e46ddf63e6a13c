"""The bench worker with injected faults, for the runner's tests.

``GPUSCALE_TEST_FAULT=model:kind`` when that model starts: ``kill`` kills rank 1
(SIGKILL), ``slowkill`` too, with rank 0 slow (2 s) to note each model finished,
``latekill`` too, with rank 0 slow (2 s) to note each model's start, ``afterkill``
kills rank 1 when that model has finished and its row has been noted (5 s later),
``hang`` makes every rank sleep, ``oom`` makes rank 1 run out of memory, ``error`` makes
rank 0 raise; ``*:early`` makes every rank fail after the process group is up, before any
model starts; ``*:exit`` makes rank 1 abort (SIGABRT) after every model finished, as it
leaves the process group. Test-only: the package never reads this variable.
"""

from __future__ import annotations

import os
import signal
import time

import torch

from gpuscale.bench import ranks, row_keys, worker

_original = worker.run_model


def _faulty(name, cfg, device, *rest):
    target, _, kind = os.environ.get("GPUSCALE_TEST_FAULT", ":").partition(":")
    rank = int(os.environ.get("RANK", "0"))
    if name == target:
        if kind in ("kill", "slowkill", "latekill") and rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        if kind == "hang":
            time.sleep(3600)
        if kind == "oom" and rank == 1:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        if kind == "error" and rank == 0:
            raise ValueError("shapes (8, 3) and (4, 4) do not match")
    return _original(name, cfg, device, *rest)


worker.run_model = _faulty

if os.environ.get("GPUSCALE_TEST_FAULT", "").endswith(":slowkill"):
    _quick_note = worker._note

    def _slow_note(progress, local_rank, event, *rest):
        if event == "finished" and int(os.environ.get("RANK", "0")) == 0:
            time.sleep(2)  # the other ranks, were they not held, start the next model
        return _quick_note(progress, local_rank, event, *rest)

    worker._note = _slow_note

if os.environ.get("GPUSCALE_TEST_FAULT", "").endswith(":latekill"):
    _prompt_note = worker._note

    def _late_note(progress, local_rank, event, *rest):
        if event == "started" and int(os.environ.get("RANK", "0")) == 0:
            time.sleep(2)  # a rank on its own would be in the model by now
        return _prompt_note(progress, local_rank, event, *rest)

    worker._note = _late_note

if os.environ.get("GPUSCALE_TEST_FAULT", "").endswith(":afterkill"):
    _noted = worker._note

    def _die_after(progress, local_rank, event, key, *rest):
        model = os.environ["GPUSCALE_TEST_FAULT"].partition(":")[0]
        finished = event == "finished" and row_keys.model_of_key(key) == model
        if finished and int(os.environ.get("RANK", "0")) == 1:
            time.sleep(5)  # rank 0 has noted the row and waits for the next model
            os.kill(os.getpid(), signal.SIGKILL)
        return _noted(progress, local_rank, event, key, *rest)

    worker._note = _die_after

if os.environ.get("GPUSCALE_TEST_FAULT") == "*:early":

    def _refused() -> worker.Host:
        raise RuntimeError("the hosts could not be listed (a fault the test injects)")

    worker.Host.find = staticmethod(_refused)  # type: ignore[method-assign]

if os.environ.get("GPUSCALE_TEST_FAULT") == "*:exit":
    _destroy = worker.dist.destroy_process_group

    def _abort_on_leaving(*args, **kwargs):
        if int(os.environ.get("RANK", "0")) == 1:
            os.kill(os.getpid(), signal.SIGABRT)
        return _destroy(*args, **kwargs)

    worker.dist.destroy_process_group = _abort_on_leaving

if __name__ == "__main__":
    ranks.end_rank(worker.main)  # as the worker ends
