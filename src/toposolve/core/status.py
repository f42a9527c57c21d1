"""The status of a solve: one enum for engine results, CP-SAT stages, plans and replays.

A :class:`enum.StrEnum`, so a status compares equal to its name, prints as its name and is
written to plan JSON as a plain string (``"OPTIMAL"``), byte for byte as before.
"""

from __future__ import annotations

from enum import StrEnum

import yaml


class SolveStatus(StrEnum):
    """How a solve (or one CP-SAT stage) ended.

    ``OPTIMAL``: proven optimal. ``FEASIBLE``: a plan, not proven optimal. ``INFEASIBLE``: the
    model has no solution. ``UNKNOWN``: nothing found in time. ``MODEL_INVALID``: CP-SAT
    refused the model (an engine bug). ``FALLBACK``: the engine returned its warm start.
    """

    OPTIMAL = "OPTIMAL"
    FEASIBLE = "FEASIBLE"
    INFEASIBLE = "INFEASIBLE"
    UNKNOWN = "UNKNOWN"
    MODEL_INVALID = "MODEL_INVALID"
    FALLBACK = "FALLBACK"

    @property
    def found(self) -> bool:
        """A search found a solution (``OPTIMAL`` or ``FEASIBLE``)."""
        return self in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)

    @property
    def usable(self) -> bool:
        """The engine produced a plan: found one, or returned its warm start."""
        return self.found or self is SolveStatus.FALLBACK


# YAML writes a status as the plain string it is (plans and records may hold the enum)
yaml.SafeDumper.add_representer(SolveStatus, yaml.SafeDumper.represent_str)
