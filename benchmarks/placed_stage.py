"""The ``placed`` stage(s) of a CP-SAT plan as the overload and quality benchmarks report them:
one reading of the plan's stage records, one way of printing the outcome."""

from __future__ import annotations

import toposolve


def placed_stages(plan: toposolve.Plan) -> list[dict]:
    """The plan's stage records of the ``placed`` objective (one per priority level, or one)."""
    return [s for s in plan.stats.get("stages", []) if s["stage"].startswith("placed")]


def proven(placed: list[dict]) -> bool:
    """Every ``placed`` stage ended proven optimal (False when there is none)."""
    return bool(placed) and all(s["status"] == "OPTIMAL" for s in placed)


def outcome(record: dict) -> str:
    """ "proven at Ns", "proven" or "gap G" for a record with ``placed_proven`` / ``placed_gap``."""
    if record["placed_proven"]:
        at = record.get("placed_proven_s")
        return f"proven at {at:.1f}s" if at is not None else "proven"
    return f"gap {record['placed_gap']}"
