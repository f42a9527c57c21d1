"""kube-scheduler's placement score plugins' tests (``placement_bin_packing_test.go``,
``pod_group_count_test.go``; data/README.md) against the ``kube`` engine's score code.

Each case's cluster is read by the kube reader and compiled; the score is then computed by the
functions the cycle uses (``placement_scores``, ``group_pod_counts``, ``pods_count_scores``)
with the requests the cycle sees.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import yaml

from tests.fidelity.kube.objects import GROUP, NAMESPACE, node, pod, podgroup
from toposolve.core.errors import InputError
from toposolve.core.problem import compile_problem
from toposolve.engines.common.capacity import Capacity
from toposolve.engines.kube.cycle import run_kube
from toposolve.engines.kube.placement import group_pod_counts, placement_scores
from toposolve.engines.kube.scores import PlacementScoring, ScoredResources, pods_count_scores
from toposolve.formats.load import instance_from_bodies

DATA = Path(__file__).parent / "data"
BIN = yaml.safe_load((DATA / "placement_bin_packing.yaml").read_text())
COUNT = yaml.safe_load((DATA / "pod_group_count.yaml").read_text())
RESOURCES = ("cpu", "memory", "nvidia.com/gpu")

def _resources(values: list[str]) -> dict[str, str]:
    return dict(zip(RESOURCES, values, strict=False))


def bin_packing_score(case) -> int:
    """The engine's NodeResourcesFit placement score of the case's placement and assignment."""
    docs = [node({"name": n, "allocatable": _resources(v)}) for n, v in case["nodes"].items()]
    docs.append(podgroup("basic", None))
    docs += [pod({"name": p, "requests": _resources(r)}) for p, r in case["pods"].items()]
    docs += [pod({"name": p, "node": v[0], "requests": _resources(v[1:])}, group=None)
             for p, v in case.get("existing", {}).items()]
    instance = instance_from_bodies([(d, "case.yaml") for d in docs], "case", lambda _: None)
    problem = compile_problem(instance)
    j = next(i for i, cj in enumerate(problem.jobs) if cj.key == f"{NAMESPACE}/{GROUP}")
    strategy = case["strategy"]
    scored = ScoredResources.of(problem, tuple(strategy["resources"].items()))
    groups = problem.jobs[j].groups
    proposed = sum(scored.pod(problem, g) * len(problem.group_pending[g])
                   for g in groups)
    names = problem.topology.node_names
    row = np.array([[1 if n in case["placement"] else 0 for n in names]], dtype=np.int64)
    shape = tuple(tuple(point) for point in strategy.get("shape", ()))
    scoring = PlacementScoring(strategy["type"], scored, fit_weight=1, count_weight=0,
                               shape=shape)
    score = placement_scores(problem, Capacity(problem), sp.csr_matrix(row), None,
                             np.array([len(case["assigned"])]), proposed[None, :], 0, scoring)
    return int(score[0])


@pytest.mark.parametrize("case", BIN["score_cases"],
                         ids=[f"{c['test']}/{c['name']}" for c in BIN["score_cases"]])
def test_placement_bin_packing_score(case):
    assert bin_packing_score(case) == case["want"]


RUN_VALIDATION = [c for c in BIN["validation_cases"] if "listed" not in c]


def scheduler_config(case) -> dict:
    """A KubeSchedulerConfiguration giving PlacementBinPacking the case's arguments."""
    strategy = {"type": case["strategy"],
                "resources": [{"name": r, "weight": w}
                              for r, w in case.get("resources", {}).items()]}
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"pluginConfig": [{"name": "PlacementBinPacking",
                                            "args": {"scoringStrategy": strategy}}]}]}


@pytest.mark.parametrize("case", RUN_VALIDATION, ids=[c["name"] for c in RUN_VALIDATION])
def test_placement_bin_packing_args_validation(case):
    """Upstream validates the plugin's arguments; toposolve validates them where it reads them,
    in the KubeSchedulerConfiguration of the input."""
    bodies = [(node({"name": "node1"}), "c.yaml"), (scheduler_config(case), "c.yaml")]
    if case["want"] == "refused":
        with pytest.raises(InputError, match="unsupported value") as err:
            instance_from_bodies(bodies, "c", lambda _: None)
        assert err.value.field.endswith("args.scoringStrategy.type")
    else:
        instance = instance_from_bodies(bodies, "c", lambda _: None)
        assert instance.kube_scoring.placement.type == case["strategy"]
        assert instance.kube_scoring.placement.resources == tuple(case["resources"].items())
        assert not run_kube(compile_problem(instance)).counts


@pytest.mark.parametrize("case", COUNT["score_cases"],
                         ids=[c["name"] for c in COUNT["score_cases"]])
def test_pod_group_count_score(case):
    docs = [node({"name": n}) for n in ("node1", "node2", "node3")]
    docs.append(podgroup({"minCount": 1}, None))
    docs += [pod({"name": p, "node": n}) for p, n in case.get("assigned", {}).items()]
    docs += [pod({"name": p, "node": n, "phase": "Pending"})
             for p, n in case.get("assumed", {}).items()]
    docs += [pod({"name": f"proposed-pod-{i}"}) for i in (1, 2)]
    problem = compile_problem(instance_from_bodies([(d, "c.yaml") for d in docs], "c",
                                                   lambda _: None))
    job = problem.jobs[0]
    running = problem.running_count(job.groups)
    proposed = sum(len(problem.group_pending[g]) for g in job.groups)
    assert group_pod_counts(running, np.array([proposed])) == [case["want"]]


@pytest.mark.parametrize("case", COUNT["normalize_cases"],
                         ids=[c["name"] for c in COUNT["normalize_cases"]])
def test_pod_group_count_normalize(case):
    if "error" in case:
        with pytest.raises(ValueError, match=case["error"]):
            pods_count_scores(case["scores"])
    else:
        assert pods_count_scores(case["scores"]) == case["want"]


def test_every_upstream_case_is_ported_or_listed():
    assert len(BIN["score_cases"]) == 7 + 5 and len(BIN["validation_cases"]) == 4
    assert len(COUNT["score_cases"]) == 4 and len(COUNT["normalize_cases"]) == 5

