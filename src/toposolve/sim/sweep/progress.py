"""One line per finished scenario: how many, which, and the estimated time left."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any


class Progress:
    def __init__(self, total: int, write: Callable[[str], None] | None = None) -> None:
        self.total = total
        self.done = 0
        self.start = time.perf_counter()
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))

    def finished(self, row: dict[str, Any]) -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.start
        eta = elapsed / self.done * (self.total - self.done)
        self.write(f"[{self.done}/{self.total}] scenario {row['scenario']} ({row['engine']}) done, "
                   f"{elapsed:.0f}s elapsed, ETA {eta:.0f}s")
