"""``required``, ``preferred`` and ``unconstrained`` set together (issue 23): accepted on a
Workload object with one warning line, as Kueue does; refused on job annotations, as Kueue's job
webhooks do (``ValidateTASPodSetRequest``)."""

from __future__ import annotations

import pytest
import yaml
from scheduler_docs import kueue_docs, podset, workload, write_docs

from toposolve.core.errors import InputError
from toposolve.core.podset_groups import UNCONSTRAINED_LABEL
from toposolve.formats.load import load_instance
from toposolve.formats.write import write_scheduler_form

LEVELS = ["block", "kubernetes.io/hostname"]


def load(tmp_path, *docs):
    warnings: list[str] = []
    inst = load_instance(write_docs(tmp_path, kueue_docs(LEVELS, *docs)), warn=warnings.append)
    return inst, warnings


@pytest.mark.parametrize(("request_", "hard", "marked", "said"), [
    ({"required": "block", "preferred": "kubernetes.io/hostname"}, True, False,
     "required and preferred set together: Kueue's TAS takes the required level"),
    ({"preferred": "block", "unconstrained": True}, False, True,
     "preferred and unconstrained set together: Kueue's TAS takes the preferred level with its "
     "unconstrained algorithm"),
    ({"required": "block", "preferred": "block", "unconstrained": True}, True, True,
     "required and preferred and unconstrained set together: Kueue's TAS takes the required "
     "level with its unconstrained algorithm"),
])
def test_a_workload_keeps_the_level_kueue_takes_and_warns(tmp_path, request_, hard, marked, said):
    inst, warnings = load(tmp_path, workload([podset("main", 2, request_)]))
    (job,) = inst.jobs
    assert job.network_topology.highest_tier_allowed == 2
    assert (job.network_topology.mode == "hard") == hard
    assert (job.tasks[0].labels.get(UNCONSTRAINED_LABEL) == "true") == marked
    assert len(warnings) == 1
    assert warnings[0].endswith(f"Workload/default/w: podset 'main': {said}")


def test_the_kueue_writer_keeps_unconstrained_beside_the_level(tmp_path):
    inst, _ = load(tmp_path, workload([podset("main", 2, {"required": "block",
                                                            "unconstrained": True})]))
    path = tmp_path / "out.yaml"
    write_scheduler_form(inst, "kueue", str(path), warn=lambda _: None)
    (wl,) = [d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "Workload"]
    request = wl["spec"]["podSets"][0]["topologyRequest"]
    assert request["unconstrained"] is True and "required" in request
    (back,) = load_instance(path, warn=lambda _: None).jobs
    assert back.tasks[0].labels == inst.jobs[0].tasks[0].labels


def test_job_annotations_with_two_kinds_are_refused_as_the_job_webhooks_do(tmp_path):
    job = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "train", "namespace": "default",
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"parallelism": 2, "suspend": True, "template": {
            "metadata": {"annotations": {
                "kueue.x-k8s.io/podset-required-topology": "block",
                "kueue.x-k8s.io/podset-unconstrained-topology": "true"}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}},
    }
    with pytest.raises(InputError, match="must not contain more than one topology annotation: "
                                         r"\[\"kueue.x-k8s.io/podset-required-topology\", ") as err:
        load(tmp_path, job)
    assert "\n" not in str(err.value)
