"""A thread that runs while a ``with`` block does: the NVML sampler and the collectives
sweep's compute load are both one."""

from __future__ import annotations

import threading
from typing import TypeVar

_B = TypeVar("_B", bound="Background")


class Background:
    """Runs ``self.run`` in a daemon thread from ``__enter__`` until ``__exit__``, which
    sets ``self.stopping`` and waits for the thread; ``run`` must return once it is set."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        raise NotImplementedError

    def __enter__(self: _B) -> _B:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._thread.join()
