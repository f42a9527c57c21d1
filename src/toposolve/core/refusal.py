"""Why no node satisfies a job's topology constraint: a level its tree lacks, or a request its
scheduler never places (``NetworkTopology.missing_level`` / ``never_placed``,
docs/kueue-fidelity.md). ``Problem.refused_jobs`` holds one per such job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from toposolve.core.instance import NetworkTopology

MISSING_LEVEL = "missing_level"
NEVER_PLACED = "never_placed"


@dataclass(frozen=True)
class Refusal:
    """Why a job's constraint holds on no node.

    ``kind`` :data:`MISSING_LEVEL`: ``why`` is the level its tree lacks; :data:`NEVER_PLACED`:
    ``why`` is its scheduler's reason it never places the request.
    """

    kind: Literal["missing_level", "never_placed"]
    why: str

    def outranks(self, other: Refusal | None) -> bool:
        """Whether this refusal, not ``other``, is the job's: the first one met, except that a
        missing level wins over a request never placed (Kueue's flavor assigner, which finds no
        flavor with the level, runs before its TAS, which refuses the request)."""
        return other is None or (self.kind == MISSING_LEVEL and other.kind == NEVER_PLACED)


def refusal_of(spec: NetworkTopology | None) -> Refusal | None:
    """Why no node satisfies ``spec`` (None when a node may).

    Parameters
    ----------
    spec
        A topology constraint, or None.

    Returns
    -------
    Refusal or None
        Its missing level (which wins), else its never-placed reason.
    """
    if spec is not None and spec.missing_level is not None:
        return Refusal(MISSING_LEVEL, spec.missing_level)
    if spec is not None and spec.never_placed is not None:
        return Refusal(NEVER_PLACED, spec.never_placed)
    return None
