"""One broken rule found in a plan."""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("unknown-pod", "unknown-node", "duplicate-binding", "not-running", "capacity",
         "predicate", "gang", "subgroup-gang", "tier", "queue-capability", "plan-jobs", "eviction",
         "move", "pdb", "repair", "device", "wave")


@dataclass(frozen=True)
class Violation:
    kind: str  # one of KINDS
    obj: str  # e.g. "Node/node0", "Job/default/train", "Pod/default/train-worker-0"
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.obj}: {self.message}"
