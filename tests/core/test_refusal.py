"""Why no node satisfies a constraint: one record per job, a missing level winning."""

from __future__ import annotations

from toposolve.core.instance import NetworkTopology
from toposolve.core.refusal import MISSING_LEVEL, NEVER_PLACED, Refusal, refusal_of


def test_a_constraint_is_refused_for_its_missing_level_or_its_never_placed_request():
    assert refusal_of(None) is None
    assert refusal_of(NetworkTopology(mode="hard", highest_tier_allowed=2)) is None
    assert refusal_of(NetworkTopology(mode="soft", missing_level="rack")) == Refusal(
        MISSING_LEVEL, "rack")
    assert refusal_of(NetworkTopology(mode="hard", never_placed="why")) == Refusal(
        NEVER_PLACED, "why")


def test_the_first_refusal_met_stays_unless_a_missing_level_follows_a_never_placed_one():
    level, never = Refusal(MISSING_LEVEL, "rack"), Refusal(NEVER_PLACED, "why")
    assert level.outranks(None) and never.outranks(None)
    assert level.outranks(never)
    assert not never.outranks(level)
    assert not Refusal(MISSING_LEVEL, "zone").outranks(level)
    assert not Refusal(NEVER_PLACED, "other").outranks(never)
