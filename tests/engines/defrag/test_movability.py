"""Which jobs may move, and at what price (issue 20: toposolve.io/movable, toposolve.io/move-cost).

Racks r0 = {node0, node1} and r1 = {node2, node3} of 8-GPU nodes; `a` runs on node0, `b` on
node2, node1 and node3 are idle. The target wants two 8-GPU pods in one rack: moving `a` to
node3 or `b` to node1 lets it in, one job either way."""

from __future__ import annotations

import pytest
import yaml

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance, Job, Task
from toposolve.core.plan import Move, Plan
from toposolve.defrag import defrag
from toposolve.formats.load import load_instance

TARGET = "default/target"


def cluster(**a_fields) -> Instance:
    def running(name: str, node: str, **fields) -> Job:
        return Job(name=name, min_available=1, tasks=[Task(name="w", replicas=1,
                   requests={GPU: 8}, running={0: node})], **fields)

    target = Job(name="target", min_available=2, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=2, requests={GPU: 8})])
    return Instance(nodes=nodes(4), hypernodes=[leaf("r0", ["node0", "node1"]),
                                                leaf("r1", ["node2", "node3"]),
                                                inner("top", ["r0", "r1"], 2)],
                    jobs=[running("a", "node0", **a_fields), running("b", "node2"), target])


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
@pytest.mark.parametrize(("a_fields", "moved"), [
    ({"movable": False}, ["default/b"]),   # a stays put: b moves
    ({"move_cost": 5}, ["default/b"]),     # a is dear: b moves (cpsat; greedy may not care)
])
def test_movability_and_cost_decide_who_moves(engine, a_fields, moved):
    inst = cluster(**a_fields)
    plan = defrag(inst, [TARGET], engine=engine)
    d = plan.stats["defrag"]
    assert d["admitted"] == [TARGET]
    assert check_plan(inst, plan, eviction_mode="none") == []
    if engine == "cpsat" or "movable" in a_fields:
        assert d["moved_jobs"] == moved
    if engine == "cpsat" and "move_cost" in a_fields:
        assert d["move_cost"] == 1 and d["proven_minimal"]


def test_nothing_movable_admits_nothing():
    inst = cluster(movable=False)
    inst.jobs[1].movable = False
    plan = defrag(inst, [TARGET], engine="cpsat")
    assert plan.stats["defrag"]["admitted"] == [] and not plan.moves
    assert not plan.job(TARGET).placed and plan.job(TARGET).reason


def test_the_checker_refuses_moving_an_immovable_job():
    inst = cluster(movable=False)
    plan = Plan(engine="test", status="FEASIBLE", moves=[Move("default/a-w-0", "node0", "node3")])
    kinds = [(v.kind, v.obj) for v in check_plan(inst, plan, eviction_mode="none")]
    assert ("move", "Job/default/a") in kinds


def test_annotations_are_read_and_bad_values_refused(tmp_path):
    def job(annotations: dict) -> dict:
        return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                "metadata": {"name": "j", "namespace": "default", "annotations": annotations},
                "spec": {"minAvailable": 1, "tasks": [{"name": "w", "replicas": 1, "template": {
                    "spec": {"containers": [{"name": "c"}]}}}]}}

    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump(job({"toposolve.io/movable": "false",
                                        "toposolve.io/move-cost": "7"})))
    (read,) = load_instance(path, warn=lambda _: None).jobs
    assert (read.movable, read.move_cost) == (False, 7)
    from toposolve.core.errors import InputError
    for bad in ({"toposolve.io/movable": "no"}, {"toposolve.io/move-cost": "0"},
                {"toposolve.io/move-cost": "٢"}):
        path.write_text(yaml.safe_dump(job(bad)))
        with pytest.raises(InputError, match=next(iter(bad))):
            load_instance(path, warn=lambda _: None)


def test_a_job_limited_in_a_crossing_topologys_tree_never_moves_nor_is_admitted():
    from tests.builders import crossing_instance, gang, in_cross
    from toposolve.core.errors import InputError
    from toposolve.core.problem import compile_problem
    from toposolve.engines.defrag.common import eligible_to_move

    # x runs in c0 = {node1, node2} of the crossing tree; y the same shape, unconstrained
    inst = crossing_instance([gang("x", 1, topology=in_cross(1), running={0: "node1"}),
                              gang("y", 1, running={0: "node3"}),
                              gang("z", 2, topology=in_cross(1))])
    problem = compile_problem(inst)
    assert not eligible_to_move(problem, 0) and not eligible_to_move(problem, 0, repair=True)
    assert eligible_to_move(problem, 1)
    with pytest.raises(InputError) as info:
        defrag(inst, admit=["default/z"], engine="greedy")
    assert info.value.field == "admit" and "\n" not in str(info.value)
    assert "crosses the cluster's main tree" in str(info.value)
