"""Direct unit tests of ``toposolve.engines.kai.engine`` (KAI's allocate loop) and the engine
contract."""

from __future__ import annotations

from fidelity.kai.kai_objects import case_documents, load_case

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.engines.kai import run_kai
from toposolve.engines.kai.engine import KaiEngine


def _instance(tmp_path, jobs: list[dict], gpus: int = 3, nodes: int = 1):
    case = {
        "topologies": {"t": ["zone"]},
        "nodes": {f"n{i}": {"gpus": gpus, "labels": {"zone": f"z{i}"}} for i in range(nodes)},
        "jobs": jobs,
    }
    return load_case(tmp_path, case_documents(case))


def _placed(problem, assignment) -> dict[str, int]:
    out: dict[str, int] = {}
    for g, per_node in assignment.counts.items():
        name = problem.jobs[int(problem.group_job[g])].key.rsplit("/", 1)[-1]
        out[name] = out.get(name, 0) + sum(per_node.values())
    return out


def test_gangs_of_other_jobs_come_before_extra_pods(tmp_path):
    """KAI pushes a job back after its gang: jobs below their minimum go first, so the second job's
    gang takes the room before the first job's extra pods."""
    first = {
        "name": "a",
        "gpus": 1,
        "subgroups": [{"name": "s", "min": 1}],
        "tasks": [{"subgroup": "s"}] * 3,
    }
    second = {"name": "b", "gpus": 1, "tasks": [{}, {}]}
    problem = compile_problem(_instance(tmp_path, [first, second]))
    assert _placed(problem, run_kai(problem)) == {"a": 1, "b": 2}


def test_extra_pod_goes_to_the_subgroup_with_the_lowest_placed_to_minimum_ratio(tmp_path):
    job = {
        "name": "a",
        "gpus": 1,
        "subgroups": [{"name": "x", "min": 2}, {"name": "y", "min": 1}],
        "tasks": [{"subgroup": "x"}] * 3 + [{"subgroup": "y"}] * 2,
    }
    problem = compile_problem(_instance(tmp_path, [job], gpus=4))
    engine = KaiEngine(problem)
    gang = engine.gang_pods(0)
    assert sorted(len(p) for p in gang.values()) == [1, 2]
    assert engine.min_state(0) == 0
    assert engine.allocate_job(0, gang) is None
    assert engine.min_state(0) == 1
    ((s, pods),) = engine.elastic_pod(
        0
    ).items()  # x at 2/2 and y at 1/1: tie, (match index, id) order
    assert problem.subjobs[s].id.endswith("subgroup-x") and len(pods) == 1


def test_required_domains_are_those_holding_the_job_pods(tmp_path):
    job = {
        "name": "a",
        "gpus": 1,
        "constraint": {"required": "zone"},
        "tasks": [{"running_on": "n1"}, {}],
    }
    problem = compile_problem(_instance(tmp_path, [job], nodes=2))
    engine = KaiEngine(problem)
    cj = problem.jobs[0]
    assert engine.required_domains(cj.groups, cj.limit).tolist() == [False, True]
    assert engine.required_domains(cj.groups, None) is None
    placed = run_kai(problem).counts
    assert {n for per in placed.values() for n in per} == {1}


def test_the_contract_gives_a_checked_deterministic_plan(tmp_path):
    jobs = [
        {"name": f"j{i}", "gpus": 1, "constraint": {"required": "zone"}, "tasks": [{}, {}]}
        for i in range(3)
    ]
    inst = _instance(tmp_path, jobs, gpus=2, nodes=2)
    plan = toposolve.solve(inst, "kai")
    assert plan.engine == "kai" and toposolve.check_plan(inst, plan) == []
    assert sum(j.placed for j in plan.jobs) == 2
    assert toposolve.solve(inst, "kai").bindings == plan.bindings


def test_kai_measures_a_constraint_in_its_own_crossing_tree():
    from builders import crossing_instance, gang, in_cross

    # two whole nodes in one leaf of the crossing tree: its leaves straddle the main tree's
    inst = crossing_instance([gang("x", 2, topology=in_cross(1))])
    plan = toposolve.solve(inst, "kai")  # checked inside solve(), in the job's own tree
    nodes = sorted(b.node for b in plan.bindings)
    assert nodes in (["node1", "node2"], ["node3", "node4"], ["node5", "node6"])
    (entry,) = plan.jobs
    assert entry.placed and entry.hypernode == {"node1": "c0", "node3": "c1",
                                                "node5": "c2"}[nodes[0]]
