"""Scheduling rules every engine shares (not the checker, which restates them independently).

Today: the eviction modes. The gang, quota and eviction-eligibility rules join here as they are
moved out of the engines.
"""

from __future__ import annotations

from typing import Literal

EvictMode = Literal["preempt", "reclaim", "both"]
EVICT_MODES: tuple[str, ...] = ("preempt", "reclaim", "both")
