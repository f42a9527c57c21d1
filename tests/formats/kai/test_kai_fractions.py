"""KAI reader and writer: fractional GPU pods (``gpu-fraction``, ``gpu-fraction-num-devices``)
as device shares; running ones on the devices of their GPU group; bad values in one line."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scheduler_docs import kai_docs, write_docs

from tests.device_cases import gpu_nodes, share, whole
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.formats.kai.writer import kai_documents
from toposolve.formats.load import load_instance
from toposolve.formats.native.writer import write_native
from toposolve.solve import solve_problem

GPU = "nvidia.com/gpu"


def fractional(annotations: list[dict], running: list[dict | None] | None = None) -> list[dict]:
    """KAI docs (4 nodes of 8 GPUs) with one pod per entry, no container request,
    ``annotations`` added and, where ``running`` gives them, its node and labels (running)."""
    docs = kai_docs([], ["default"] * len(annotations))
    pods = [d for d in docs if d["kind"] == "Pod"]
    for k, (pod, extra) in enumerate(zip(pods, annotations, strict=True)):
        pod["metadata"]["annotations"].update(extra)
        pod["spec"]["containers"][0]["resources"] = {}  # the nodes have GPUs only
        where = (running or [None] * len(pods))[k]
        if where is not None:
            pod["spec"]["nodeName"] = where["node"]
            pod["metadata"]["labels"].update(where.get("labels", {}))
            pod["status"] = {"phase": "Running"}
    return docs


def load(tmp_path, docs, warnings=None):
    sink = warnings.append if warnings is not None else (lambda _: None)
    return load_instance(write_docs(tmp_path, docs), warn=sink)


def test_a_fraction_is_a_device_share(tmp_path):
    instance = load(tmp_path, fractional([{"gpu-fraction": "0.5"},
                                          {"gpu-fraction": "0.25",
                                           "gpu-fraction-num-devices": "2"}]))
    shares = sorted((t.device_share.milli, t.device_share.count, t.requests[GPU])
                    for t in instance.jobs[0].tasks)
    assert shares == [(250, 2, 500), (500, 1, 500)]
    assert instance.device_resource == GPU or compile_problem(instance).has_devices


def test_pods_without_a_fraction_keep_whole_gpus(tmp_path):
    instance = load(tmp_path, kai_docs([], ["default"]))
    assert all(t.device_share is None for t in instance.jobs[0].tasks)
    assert not compile_problem(instance).has_devices


@pytest.mark.parametrize(("extra", "field", "words"), [
    ({"gpu-fraction": "half"}, "gpu-fraction", "not a GPU fraction"),
    ({"gpu-fraction": "0"}, "gpu-fraction", "not a GPU fraction"),
    ({"gpu-fraction": "1"}, "gpu-fraction", "not a GPU fraction"),
    ({"gpu-fraction": "1.5"}, "gpu-fraction", "not a GPU fraction"),
    ({"gpu-fraction": "0.0001"}, "gpu-fraction", "below 1/1000"),
    ({"gpu-fraction": "0.5", "gpu-fraction-num-devices": "0"}, "gpu-fraction-num-devices",
     "not a device count"),
    ({"gpu-fraction": "0.5", "gpu-fraction-num-devices": "two"}, "gpu-fraction-num-devices",
     "not a device count"),
    ({"gpu-fraction-num-devices": "2"}, "gpu-fraction-num-devices", "without gpu-fraction"),
])
def test_bad_fractions_are_one_line(tmp_path, extra, field, words):
    with pytest.raises(InputError) as info:
        load(tmp_path, fractional([extra]))
    err = info.value
    assert err.file.endswith("in.yaml") and err.obj.endswith("default/p0")
    assert err.field == f"metadata.annotations.{field}"
    assert words in str(err) and "\n" not in str(err)


def test_a_fraction_beside_a_whole_gpu_is_refused(tmp_path):
    docs = fractional([{"gpu-fraction": "0.5"}])
    docs[-1]["spec"]["containers"][0]["resources"] = {"limits": {GPU: "1"}}
    with pytest.raises(InputError, match="beside a whole nvidia.com/gpu"):
        load(tmp_path, docs)


def test_running_fractions_share_the_device_of_their_gpu_group(tmp_path):
    group = {"runai-gpu-group": "g1"}
    docs = fractional([{"gpu-fraction": "0.3"}, {"gpu-fraction": "0.2"},
                       {"gpu-fraction": "0.7"}, {"gpu-fraction": "0.2"}],
                      running=[{"node": "n0", "labels": group}, {"node": "n0", "labels": group},
                               {"node": "n0"}, None])
    instance = load(tmp_path, docs)
    use = {(t.device_share.milli, i): d for t in instance.jobs[0].tasks
           for i, d in t.device_use.items()}
    # g1 is device 0 (300m + 200m); the pod without a group takes a device of its own
    assert use == {(300, 0): {0: 300}, (200, 0): {0: 200}, (700, 0): {1: 700}}
    plan = solve_problem(compile_problem(instance), "kai")
    (binding,) = plan.bindings
    # the pending 200m pod fits devices 0 (500m used) and 1 (700m): gpupack takes the fuller
    assert (binding.node, binding.devices) == ("n0", [1])


def test_gpu_memory_is_not_read_with_one_warning(tmp_path):
    warnings: list[str] = []
    instance = load(tmp_path, fractional([{"gpu-memory": "2000"}, {"gpu-memory": "4000"}]),
                    warnings)
    lines = [w for w in warnings if "gpu-memory" in w]
    assert len(lines) == 1 and "default/p0" in lines[0] and "without a GPU" in lines[0]
    assert all(GPU not in t.requests for t in instance.jobs[0].tasks)


def test_written_fractions_read_back_as_the_same_sharing(tmp_path):
    running = [share("r0", 300, running={0: "n0"}, device_use={0: {2: 300}}),
               share("r1", 500, running={0: "n0"}, device_use={0: {2: 500}}),
               share("r2", 250, count=2, running={0: "n1"}, device_use={0: {0: 250, 3: 250}}),
               whole("r3", 1, running={0: "n0"}, device_use={0: {0: 1000}})]
    instance = Instance(nodes=gpu_nodes(4, 4), jobs=[*running, share("a", 400, replicas=3),
                                                     share("m", 500, count=2)])
    docs = kai_documents(instance, lambda _: None)
    pods = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Pod"}
    assert pods["a-w-0"]["metadata"]["annotations"]["gpu-fraction"] == "0.4"
    assert pods["m-w-0"]["metadata"]["annotations"]["gpu-fraction-num-devices"] == "2"
    assert "nvidia.com/gpu" not in pods["a-w-0"]["spec"]["containers"][0]["resources"].get(
        "requests", {})
    back = load(tmp_path, docs)
    shares = sorted((t.device_share.milli, t.device_share.count) for j in back.jobs
                    for t in j.tasks if t.device_share is not None)
    assert shares == [(250, 2), (300, 1), (400, 1), (500, 1), (500, 2)]
    # the same devices are shared (numbered afresh): per node, the sorted device loads agree
    before, after = compile_problem(instance), compile_problem(back)
    assert (np.sort(before.device_used, axis=1) == np.sort(after.device_used, axis=1)).all()
    assert len(solve_problem(after, "kai").bindings) == len(solve_problem(before,
                                                                          "kai").bindings)


def with_gpu_memory(docs: list[dict], mib: str) -> list[dict]:
    for doc in docs:
        if doc["kind"] == "Node":
            doc["metadata"]["labels"]["nvidia.com/gpu.memory"] = mib
    return docs


@pytest.mark.parametrize(("label", "asked", "milli"), [
    ("81559", "20000", 246),  # floored to 81500 MiB: 20000 / 81500 = 0.24540 → 246 thousandths
    ("40960", "10240", 251),  # floored to 40900: 0.25037 → 251 (rounded up, never down)
    (str(80 * 1024**3), "40960", 501),  # bytes (a GFD bug KAI undoes): 81920 → 81900 MiB
])
def test_gpu_memory_is_a_share_of_the_nodes_gpu_memory_rounded_up(tmp_path, label, asked, milli):
    docs = with_gpu_memory(fractional([{"gpu-memory": asked,
                                        "gpu-fraction-num-devices": "2"}]), label)
    (task,) = load(tmp_path, docs).jobs[0].tasks
    assert (task.device_share.milli, task.device_share.count) == (milli, 2)
    assert task.requests[GPU] == 2 * milli


def test_gpu_memory_beside_unlike_gpu_memories_is_read_without_a_gpu(tmp_path):
    docs = with_gpu_memory(fractional([{"gpu-memory": "2000"}]), "81559")
    next(d for d in docs if d["kind"] == "Node")["metadata"]["labels"][
        "nvidia.com/gpu.memory"] = "40960"
    warnings: list[str] = []
    instance = load(tmp_path, docs, warnings)
    assert len([w for w in warnings if "gpu-memory" in w]) == 1
    assert all(GPU not in t.requests for t in instance.jobs[0].tasks)


@pytest.mark.parametrize(("extra", "words"), [
    ({"gpu-memory": "lots"}, "not GPU memory"),
    ({"gpu-memory": "0"}, "not GPU memory"),
    ({"gpu-memory": "90000"}, "more than one GPU's memory"),
    ({"gpu-memory": "2000", "gpu-fraction": "0.5"}, "beside gpu-fraction"),
])
def test_bad_gpu_memory_is_one_line(tmp_path, extra, words):
    with pytest.raises(InputError) as info:
        load(tmp_path, with_gpu_memory(fractional([extra]), "81559"))
    err = info.value
    assert err.field == "metadata.annotations.gpu-memory" and err.obj.endswith("default/p0")
    assert words in str(err) and "\n" not in str(err)


def test_gpu_memory_is_kept_beside_its_share_and_written_back(tmp_path):
    # KAI words a refusal of a gpu-memory pod by its MiB (docs/kai-fidelity.md): the share keeps
    # them; native YAML and the KAI writer give them back (gpu-memory, not gpu-fraction)
    for sub in ("again", "back"):
        (tmp_path / sub).mkdir()
    docs = with_gpu_memory(fractional([{"gpu-memory": "20000"}, {"gpu-fraction": "0.5"}]),
                           "81559")
    instance = load(tmp_path, docs)
    memory = sorted((t.device_share.milli, t.device_share.memory)
                    for t in instance.jobs[0].tasks)
    assert memory == [(246, 20000), (500, None)]
    one = load(tmp_path / "again", with_gpu_memory(fractional([{"gpu-memory": "20000"}]),
                                                    "81559"))
    write_native(one, tmp_path / "native.yaml")
    (again,) = load_instance(tmp_path / "native.yaml").jobs[0].tasks
    assert again.device_share == one.jobs[0].tasks[0].device_share
    assert again.device_share.memory == 20000
    pods = {d["metadata"]["name"]: d["metadata"]["annotations"]
            for d in kai_documents(instance, lambda _: None) if d["kind"] == "Pod"}
    asked = sorted(a.get("gpu-memory", a.get("gpu-fraction")) for a in pods.values())
    assert asked == ["0.5", "20000"]
    back = load(tmp_path / "back", kai_documents(instance, lambda _: None))
    assert sorted((t.device_share.milli, t.device_share.memory)
                  for t in back.jobs[0].tasks) == memory


def test_mixed_fraction_shapes_get_distinct_task_names_that_read_back(tmp_path):
    # pods of one SubGroup asking gpu-memory, two fractions and whole GPUs are four tasks: the
    # first keeps the SubGroup's name, the later ones are <name>-2, -3, ... in order of appearance
    docs = with_gpu_memory(fractional([{"gpu-memory": "20000"}, {"gpu-fraction": "0.5"},
                                       {"gpu-fraction": "0.25"}, {"gpu-memory": "20000"}]),
                           "81559")
    whole_gpu = copy.deepcopy(docs[-1])
    whole_gpu["metadata"]["name"] = "whole"
    whole_gpu["metadata"]["annotations"] = {"pod-group-name": "pg"}
    whole_gpu["spec"]["containers"][0]["resources"] = {"requests": {GPU: "1"}}
    docs.append(whole_gpu)
    instance = load(tmp_path, docs)
    tasks = instance.jobs[0].tasks
    assert [(t.name, t.pod_names) for t in tasks] == [
        ("default", ["p0", "p3"]), ("default-2", ["p1"]), ("default-3", ["p2"]),
        ("default-4", ["whole"])]
    assert all(t.labels["kai.scheduler/subgroup-name"] == "default" for t in tasks)
    write_native(instance, tmp_path / "native.yaml")
    again = load_instance(tmp_path / "native.yaml").jobs[0].tasks
    assert [(t.name, t.device_share, t.requests) for t in again] == [
        (t.name, t.device_share, t.requests) for t in tasks]
