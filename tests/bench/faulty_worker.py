"""The bench worker with injected faults, for the runner's tests.

``GPUSCALE_TEST_FAULT=model:kill`` kills rank 1 (SIGKILL) when that model starts;
``model:hang`` makes every rank sleep. Test-only: the package never reads this variable.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from gpuscale.bench import worker

_original = worker.run_model


def _faulty(spec, args, device):
    target, _, kind = os.environ.get("GPUSCALE_TEST_FAULT", ":").partition(":")
    if spec.name == target:
        if kind == "kill" and int(os.environ.get("RANK", "0")) == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        if kind == "hang":
            time.sleep(3600)
    return _original(spec, args, device)


worker.run_model = _faulty

if __name__ == "__main__":
    sys.exit(worker.main())
