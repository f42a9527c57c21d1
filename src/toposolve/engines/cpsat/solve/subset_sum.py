"""Subset sums of non-negative integer weights, as bitsets (Python integers): the largest sum
within a capacity, and one subset reaching a given sum (used by :mod:`.placed_bound` and
:mod:`.refill`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

MAX_STEPS = 1 << 24  # sums counted in steps of the weights' gcd; beyond: not enumerated


def largest_subset_sum(weights: Sequence[int], capacity: int) -> int:
    """The largest sum of a subset of ``weights`` that is at most ``capacity``.

    Above :data:`MAX_STEPS` steps of the weights' gcd the sums are not enumerated and
    ``min(capacity, Σ weights)`` (still at least the answer) is returned."""
    fitting = [w for w in weights if 0 < w <= capacity]
    if capacity <= 0 or not fitting:
        return 0
    if sum(fitting) <= capacity:
        return sum(fitting)
    sums = SubsetSums(fitting, capacity)
    return sums.largest() if sums.exact else capacity


class SubsetSums:
    """Every sum at most ``capacity`` of a subset of ``weights``, with one witness per sum.

    ``exact`` is False (and nothing is enumerated) when the sums would take more than
    :data:`MAX_STEPS` steps of the weights' gcd."""

    def __init__(self, weights: Sequence[int], capacity: int) -> None:
        self.weights = list(weights)
        self.step = 0
        for w in self.weights:
            self.step = math.gcd(self.step, w)
        self.step = max(self.step, 1)
        steps = max(capacity, 0) // self.step
        self.exact = steps <= MAX_STEPS
        self.prefix = [1]  # prefix[k], bit s: the first k weights have a subset summing to s·step
        if not self.exact:
            return
        mask = (1 << (steps + 1)) - 1
        for w in self.weights:
            reach = self.prefix[-1]
            self.prefix.append((reach | (reach << (w // self.step))) & mask)

    def largest(self) -> int:
        """The largest reachable sum."""
        return (self.prefix[-1].bit_length() - 1) * self.step

    def reachable(self, total: int) -> bool:
        """Whether some subset sums to exactly ``total``."""
        return total % self.step == 0 and total >= 0 and bool(
            self.prefix[-1] >> (total // self.step) & 1)

    def descending(self, above: int) -> list[int]:
        """The reachable sums greater than ``above``, largest first."""
        reach, out = self.prefix[-1], []
        for s in range(reach.bit_length() - 1, max(above // self.step, -1), -1):
            if reach >> s & 1 and s * self.step > above:
                out.append(s * self.step)
        return out

    def witness(self, total: int) -> list[int]:
        """Indices of a subset summing to ``total`` (which must be reachable): the weights are
        decided last to first, each taken whenever the earlier ones can still make up the rest,
        so the later a weight is listed, the more it is preferred."""
        if not self.reachable(total):
            raise ValueError(f"{total} is not a subset sum")
        left, out = total // self.step, []
        for k in range(len(self.weights) - 1, -1, -1):
            w = self.weights[k] // self.step
            if left >= w and self.prefix[k] >> (left - w) & 1:
                out.append(k)
                left -= w
        return out[::-1]
