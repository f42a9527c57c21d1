"""The kube reader's handling of a gang with fewer pods than its ``gang.minCount``."""

from __future__ import annotations

from tests.fidelity.kube.objects import load


def scenario(minimum: int, pods: int) -> dict:
    return {"policy": {"minCount": minimum}, "nodes": [{"name": "node1"}],
            "pods": [{"name": f"p{i}"} for i in range(pods)]}


def test_a_gang_short_of_its_min_count_waits_with_one_warning():
    warnings: list[str] = []
    instance = load(scenario(4, 3), warnings)
    assert not instance.jobs
    assert warnings == ["case.yaml: PodGroup/default/pg: skipped (gang.minCount 4 exceeds its "
                        "3 pod(s): the gang waits for its pods)"]


def test_a_gang_with_exactly_its_min_count_is_read():
    warnings: list[str] = []
    instance = load(scenario(3, 3), warnings)
    assert [j.min_available for j in instance.jobs] == [3] and not warnings
