"""Alibaba GPU-share pods (FGD's simulator: ``alibabacloud.com/gpu-milli`` / ``gpu-count`` /
``gpu-index`` / ``gpu-card-model``) read as device shares; running ones on their devices; bad
values in one line; every engine's plan of the bundled instance checks."""

from __future__ import annotations

from pathlib import Path

import pytest
from scheduler_docs import write_docs

from toposolve.check.checker import check_plan
from toposolve.cli.main import main
from toposolve.core.errors import InputError
from toposolve.core.problem import compile_problem
from toposolve.formats.k8s.gpushare import GPUSHARE_COUNT, GPUSHARE_MILLI, GPUSHARE_MODEL
from toposolve.formats.load import load_instance
from toposolve.formats.volcano.writer import write_manifests
from toposolve.solve import solve_problem

INSTANCE = Path(__file__).resolve().parents[3] / "instances" / "gpushare-openb.yaml"
INDEX = "alibabacloud.com/gpu-index"


def node(name: str, gpus: int, model: str = "V100") -> dict:
    amounts = {GPUSHARE_COUNT: str(gpus), GPUSHARE_MILLI: str(1000 * gpus), "cpu": "64",
               "memory": "256Gi"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {GPUSHARE_MODEL: model}},
            "status": {"allocatable": amounts}}


def pod(name: str, annotations: dict[str, str], node_name: str | None = None) -> dict:
    spec: dict = {"schedulerName": "volcano",
                  "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    if node_name is not None:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "annotations": annotations},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def gpu(milli: int | str, count: int | str = 1, **extra: str) -> dict[str, str]:
    return {GPUSHARE_MILLI: str(milli), GPUSHARE_COUNT: str(count),
            **{k.replace("_", "-").replace("gpu-", "alibabacloud.com/gpu-"): v
               for k, v in extra.items()}}


def load(tmp_path, docs, warnings=None):
    sink = warnings.append if warnings is not None else (lambda _: None)
    return load_instance(write_docs(tmp_path, docs), warn=sink)


def task_of(instance, name):
    return next(t for j in instance.jobs if j.name == name for t in j.tasks)


def test_gpu_milli_of_gpu_count_devices_is_a_device_share(tmp_path):
    docs = [node("n0", 4), pod("half", gpu(500)), pod("two", gpu(1000, 2)),
            pod("pair", gpu(250, 2)), pod("cpu", {})]
    instance = load(tmp_path, docs)
    shapes = {j.name: (t.device_share and (t.device_share.milli, t.device_share.count),
                       t.requests.get(GPUSHARE_COUNT)) for j in instance.jobs for t in j.tasks}
    assert shapes == {"half": ((500, 1), 500), "two": ((1000, 2), 2000),
                      "pair": ((250, 2), 500), "cpu": (None, None)}
    assert instance.device_resource == GPUSHARE_COUNT
    problem = compile_problem(instance)
    assert problem.has_devices and problem.node_devices.tolist() == [4]
    # the node's pooled gpu-milli only repeats 1000 × gpu-count: not a resource of its own
    assert GPUSHARE_MILLI not in instance.nodes[0].allocatable


def test_gpu_card_model_restricts_the_nodes(tmp_path):
    docs = [node("p100", 2, "P100"), node("t4", 1, "T4"), node("a10", 1, "A10"),
            pod("any-of-two", gpu(300, gpu_card_model="T4|A10"))]
    instance = load(tmp_path, docs)
    (term,) = task_of(instance, "any-of-two").constraints.affinity_terms
    assert [(r.key, r.values) for r in term] == [(GPUSHARE_MODEL, ["T4", "A10"])]
    plan = solve_problem(compile_problem(instance), "volcano")
    assert [b.node for b in plan.bindings] in (["t4"], ["a10"])


def test_running_pods_hold_the_devices_of_their_gpu_index(tmp_path):
    warnings: list[str] = []
    docs = [node("n0", 4), pod("r0", gpu(600, gpu_index="2"), "n0"),
            pod("r1", gpu(1000, 2, gpu_index="0-3"), "n0"),
            pod("new", gpu(500))]
    instance = load(tmp_path, docs, warnings)
    assert task_of(instance, "r0").device_use == {0: {2: 600}}
    assert task_of(instance, "r1").device_use == {0: {0: 1000, 3: 1000}}
    assert not [w for w in warnings if "devices" in w]
    (binding,) = solve_problem(compile_problem(instance), "volcano").bindings
    assert binding.devices in ([1], [2])  # device 2 has 400m left, device 1 all


def test_running_pods_without_gpu_index_are_placed_first_fit_with_one_warning(tmp_path):
    warnings: list[str] = []
    docs = [node("n0", 2), pod("r0", gpu(700, gpu_index="0"), "n0"),
            pod("r1", gpu(500), "n0"), pod("r2", gpu(200), "n0")]
    instance = load(tmp_path, docs, warnings)
    # device 0 holds 700m (named): 500m goes to device 1, 200m to device 0 (lowest with room)
    assert task_of(instance, "r1").device_use == {0: {1: 500}}
    assert task_of(instance, "r2").device_use == {0: {0: 200}}
    lines = [w for w in warnings if "do not say which devices" in w]
    assert len(lines) == 1 and "2 running pod(s)" in lines[0]


def test_running_pods_that_overfill_the_devices_are_refused(tmp_path):
    docs = [node("n0", 1), pod("r0", gpu(700), "n0"), pod("r1", gpu(500), "n0")]
    with pytest.raises(InputError, match="hold more of alibabacloud.com/gpu-count") as info:
        load(tmp_path, docs)
    assert info.value.obj == "Pod/ns/r1" and "\n" not in str(info.value)


@pytest.mark.parametrize(("annotations", "field", "words"), [
    (gpu("half"), GPUSHARE_MILLI, "not thousandths of one GPU"),
    (gpu(0), GPUSHARE_MILLI, "not thousandths of one GPU"),
    (gpu(1500), GPUSHARE_MILLI, "not thousandths of one GPU"),
    (gpu(500, 0), GPUSHARE_COUNT, "not a device count"),
    (gpu(500, "two"), GPUSHARE_COUNT, "not a device count"),
    ({GPUSHARE_MILLI: "500"}, GPUSHARE_MILLI, "without alibabacloud.com/gpu-count"),
    ({GPUSHARE_COUNT: "1"}, GPUSHARE_COUNT, "without alibabacloud.com/gpu-milli"),
    (gpu(500, 2, gpu_index="1"), INDEX, "not 2 distinct device numbers"),
    (gpu(500, 2, gpu_index="1-1"), INDEX, "not 2 distinct device numbers"),
    (gpu(500, 1, gpu_index="x"), INDEX, "not 1 distinct device numbers"),
])
def test_bad_gpushare_values_are_one_line(tmp_path, annotations, field, words):
    with pytest.raises(InputError) as info:
        load(tmp_path, [node("n0", 2), pod("p", annotations, "n0")])
    err = info.value
    assert err.file.endswith("in.yaml") and err.obj.endswith("ns/p")
    assert err.field == f"metadata.annotations.{field}"
    assert words in str(err) and "\n" not in str(err)


def test_a_container_request_beside_the_annotations_is_refused(tmp_path):
    docs = [node("n0", 2), pod("p", gpu(500))]
    docs[1]["spec"]["containers"][0]["resources"]["requests"][GPUSHARE_COUNT] = "1"
    with pytest.raises(InputError, match="beside the GPU-share annotations"):
        load(tmp_path, docs)


def test_a_bad_value_exits_2_in_one_line(tmp_path, capsys):
    path = write_docs(tmp_path, [node("n0", 2), pod("p", gpu(2000))])
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and GPUSHARE_MILLI in err and "Traceback" not in err


@pytest.mark.parametrize("engine", ["volcano", "heuristic", "kueue", "kai", "kube", "cpsat"])
def test_every_engine_places_the_bundled_instance_on_devices(engine):
    instance = load_instance(INSTANCE, warn=lambda _: None)
    plan = solve_problem(compile_problem(instance), engine)
    assert check_plan(instance, plan, eviction_mode="none") == []
    nodes = {n.name: n for n in instance.nodes}
    bound = {b.pod: b for b in plan.bindings}
    assert bound["openb/share-0-3-t4"].node == "openb-node-0002"  # the only T4 node
    assert nodes[bound["openb/whole-2gpu"].node].labels[GPUSHARE_MODEL] == "V100M32"
    assert len(bound["openb/whole-2gpu"].devices) == 2
    assert bound["openb/cpu-only"].devices is None
    assert "openb/whole-8gpu" not in bound  # node-0001 has 8 devices, 3 of them busy


def test_a_volcano_job_template_carries_gpushare_annotations(tmp_path):
    template = {"metadata": {"annotations": gpu(250, 2, gpu_card_model="V100")},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    vcjob = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
             "metadata": {"name": "infer", "namespace": "ns"},
             "spec": {"minAvailable": 3, "tasks": [{"name": "w", "replicas": 3,
                                                    "template": template}]}}
    instance = load(tmp_path, [node("n0", 2), node("t4", 2, "T4"), vcjob])
    (task,) = instance.jobs[0].tasks
    assert (task.device_share.milli, task.device_share.count) == (250, 2)
    plan = solve_problem(compile_problem(instance), "volcano")
    # 3 pods × 250m on each of 2 devices of the V100 node (the T4 node is not allowed)
    assert sorted((b.node, tuple(b.devices)) for b in plan.bindings) == [("n0", (0, 1))] * 3


def test_written_gpushare_pods_read_back_as_the_same_sharing(tmp_path):
    before = load_instance(INSTANCE, warn=lambda _: None)
    path = tmp_path / "out.yaml"
    write_manifests(before, path)
    after = load_instance(path, warn=lambda _: None)

    def shapes(instance):
        return sorted((j.key, t.device_share, t.device_use, t.constraints.affinity_terms)
                      for j in instance.jobs for t in j.tasks)

    assert shapes(after) == shapes(before)
    assert (compile_problem(after).device_used == compile_problem(before).device_used).all()
