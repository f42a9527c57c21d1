"""The policy table: FGD's four baselines in their order, then toposolve's own."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim.fgd.test_balanced import SHARES
from toposolve.sim.fgd import POLICIES, make_policy
from toposolve.sim.fgd.balanced import BalancedFGDPolicy
from toposolve.sim.fgd.policies import FGDPolicy, RandomPolicy


def test_policies_and_their_classes():
    # the baselines keep their index (it seeds Random's draws), toposolve's policy comes last
    assert POLICIES == ("Random", "BestFit", "GpuPacking", "FGD", "BalancedFGD")
    rank = np.array([0, 1])
    assert type(make_policy("FGD", rank, 0, SHARES)) is FGDPolicy
    assert isinstance(make_policy("BalancedFGD", rank, 0, SHARES), BalancedFGDPolicy)
    assert isinstance(make_policy("Random", rank, 0, SHARES), RandomPolicy)
    with pytest.raises(ValueError, match="unknown policy 'Best'"):
        make_policy("Best", rank, 0, SHARES)
