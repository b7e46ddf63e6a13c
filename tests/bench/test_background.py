"""The background thread behind the NVML sampler and the collectives' compute load."""

from __future__ import annotations

import threading
import time

from gpuscale.bench.background import Background


class Counter(Background):
    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.loops = 0

    def run(self) -> None:
        self.started.set()
        while not self.stopping.is_set():
            self.loops += 1
            self.stopping.wait(0.001)


def test_runs_during_the_block_and_stops_after_it() -> None:
    with Counter() as counter:
        assert counter.started.wait(5)
        assert counter._thread.is_alive()
    assert not counter._thread.is_alive()
    assert counter.loops >= 1
    loops = counter.loops
    time.sleep(0.05)  # the thread would loop ~50 times meanwhile if it were still running
    assert counter.loops == loops
