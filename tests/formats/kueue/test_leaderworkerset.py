"""A queued LeaderWorkerSet (issue 21): one Workload per group, podsets as Kueue's LWS
reconciler builds them (kueue@ff69552 ``podSets``), its gated pods not read twice, bad sizes a
one-line error."""

from __future__ import annotations

import copy

import pytest
from scheduler_docs import gated_lws_pod, kueue_docs, lws, lws_template, write_docs

import toposolve
from toposolve.cli.main import main
from toposolve.core.errors import InputError
from toposolve.formats.load import load_instance


def load(tmp_path, *objects: dict):
    docs = kueue_docs(["block", "kubernetes.io/hostname"], objects[0]) + list(objects[1:])
    warnings: list[str] = []
    return load_instance(write_docs(tmp_path, docs), warn=warnings.append), warnings


def _shape(instance):
    return [(j.name, j.queue, [(t.name, t.replicas) for t in j.tasks]) for j in instance.jobs]


def test_each_group_is_a_gang_of_leader_and_workers(tmp_path):
    instance, warnings = load(tmp_path, lws(replicas=2, size=2))
    assert warnings == []
    assert _shape(instance) == [("leaderworkerset-infer-0", "cq", [("leader", 1), ("worker", 1)]),
                                ("leaderworkerset-infer-1", "cq", [("leader", 1), ("worker", 1)])]
    plan = toposolve.solve(instance, "kueue")
    blocks: dict[str, set[int]] = {}
    for b in plan.bindings:  # leader and worker of a group in one block (one node each)
        blocks.setdefault(b.pod.split("/")[1].rsplit("-", 2)[0], set()).add(int(b.node[1:]) // 2)
    assert len(plan.bindings) == 4 and sorted(map(len, blocks.values())) == [1, 1]


def test_without_a_leader_template_a_group_is_one_podset_main(tmp_path):
    instance, _ = load(tmp_path, lws(replicas=3, size=2, leader=False, cpu="1"))
    assert _shape(instance) == [(f"leaderworkerset-infer-{g}", "cq", [("main", 2)])
                                for g in range(3)]


def test_gated_pods_of_the_lws_are_its_groups_pods_not_extra_ones(tmp_path):
    pods = [gated_lws_pod(g, w) for g in range(2) for w in range(2)]
    with_pods, warnings = load(tmp_path, lws(), *pods)
    without, _ = load(tmp_path, lws())
    assert warnings == []  # not "pending pod of no Workload" four times
    assert _shape(with_pods) == _shape(without)
    assert sum(t.replicas for j in with_pods.jobs for t in j.tasks) == 4


def test_an_lws_a_workload_owns_already_is_not_read_again(tmp_path):
    workload = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
                "metadata": {"name": "leaderworkerset-infer-0-abcde", "namespace": "default",
                             "ownerReferences": [{"apiVersion": "leaderworkerset.x-k8s.io/v1",
                                                  "kind": "LeaderWorkerSet", "name": "infer",
                                                  "uid": "u", "controller": True}]},
                "spec": {"queueName": "lq", "podSets": [
                    {"name": "main", "count": 1, "template": lws_template("1")}]}}
    instance, _ = load(tmp_path, workload, lws())
    assert [j.name for j in instance.jobs] == ["leaderworkerset-infer-0-abcde"]


def test_an_lws_without_the_queue_label_is_skipped_with_a_warning(tmp_path):
    body = lws()
    del body["metadata"]["labels"]
    instance, warnings = load(tmp_path, body)
    assert instance.jobs == []
    assert any("LeaderWorkerSet" in w and "not Kueue's" in w for w in warnings)


@pytest.mark.parametrize("path, value, words", [
    ("size", 0, "spec.leaderWorkerTemplate.size: must be at least 1, got 0"),
    ("size", "two", "spec.leaderWorkerTemplate.size: expected an integer"),
    ("workerTemplate", None, "spec.leaderWorkerTemplate.workerTemplate: is required"),
    ("replicas", -1, "spec.replicas: must be at least 0, got -1"),
    ("replicas", 1_000_000, "spec.replicas: 1,000,000 groups of 3 pods: more than 2,000,000"),
])
def test_a_bad_size_or_template_is_one_line_naming_file_object_and_field(
        tmp_path, capsys, path, value, words):
    body = copy.deepcopy(lws(size=3))
    where = body["spec"] if path == "replicas" else body["spec"]["leaderWorkerTemplate"]
    if value is None:
        del where[path]
    else:
        where[path] = value
    with pytest.raises(InputError, match="LeaderWorkerSet") as err:
        load(tmp_path, body)
    message = str(err.value)
    assert words in message and "in.yaml" in message and "default/infer" in message
    assert "\n" not in message
    file = write_docs(tmp_path, kueue_docs(["block", "kubernetes.io/hostname"], body))
    assert main(["show", str(file)]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
