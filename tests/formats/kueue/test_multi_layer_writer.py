"""The Kueue writer writes multi-layer slices back (``podsetSliceRequiredTopologyConstraints``),
so a Kueue dump read, written and read again keeps its gang trees."""

from __future__ import annotations

from pathlib import Path

import yaml

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.formats.load import load_instance
from toposolve.formats.write import write_scheduler_form

DUMP = Path(__file__).resolve().parents[3] / "instances" / "kueue-multilayer.yaml"


def _trees(inst) -> dict[str, list[tuple[int, int, int]]]:
    """Per job, its GangNodes and constrained SubJobs as (depth, tier, pods), sorted."""
    problem = compile_problem(inst)

    def pods(n: int) -> int:
        node = problem.gang_nodes[n]
        return (sum(problem.subjobs[s].min_available for s in node.subjobs)
                + sum(pods(c) for c in node.children))

    out: dict[str, list[tuple[int, int, int]]] = {}
    for cj in problem.jobs:
        rows = [(problem.gang_nodes[n].depth, problem.gang_nodes[n].limit.tier, pods(n))
                for n in cj.gang_nodes]
        rows += [(sj.depth, sj.limit.tier, sj.min_available)
                 for sj in (problem.subjobs[s] for s in cj.subjobs) if sj.limit is not None]
        out[cj.key] = sorted(rows)
    return out


def test_a_multi_layer_dump_keeps_its_gang_trees_through_the_kueue_writer(tmp_path):
    original = load_instance(DUMP, warn=lambda _: None)
    path = tmp_path / "out.yaml"
    warnings: list[str] = []
    write_scheduler_form(original, "kueue", str(path), warn=warnings.append)
    assert not [w for w in warnings if "GangGroups" in w]
    requests = [ps["topologyRequest"] for doc in yaml.safe_load_all(path.read_text())
                if doc and doc["kind"] == "Workload" for ps in doc["spec"]["podSets"]]
    assert {"topology": "kubernetes.io/hostname", "size": 2} in requests[0][
        "podsetSliceRequiredTopologyConstraints"]
    back = load_instance(path, warn=lambda _: None)
    assert _trees(back) == _trees(original)
    assert _trees(original)["ml/pretrain"][:2] == [(2, 2, 8), (2, 2, 8)]
    plan, again = toposolve.solve(original, "kueue"), toposolve.solve(back, "kueue")
    assert len(again.bindings) == len(plan.bindings) == 24
