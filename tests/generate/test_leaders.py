"""The ``leaders`` option: LeaderWorkerSet-style jobs, written as Kueue podset groups."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.formats.load import load_instance
from toposolve.formats.write import write_scheduler_form
from toposolve.generate import generate, generate_document

OPTIONS = {"nodes": 64, "seed": 3, "jobs": 12}


def _pods(doc) -> dict[str, int]:
    return {j["name"]: sum(t["replicas"] for t in j["tasks"]) for j in doc["jobs"]}


def test_leaders_split_jobs_without_changing_the_draws():
    plain = generate_document("superpod", **OPTIONS)
    lws = generate_document("superpod", **OPTIONS, leaders=2)
    grouped = [j for j in lws["jobs"] if len(j["tasks"]) == 2]
    assert len(grouped) == 2
    for job in grouped:
        leader, workers = job["tasks"]
        assert (leader["name"], leader["replicas"]) == ("leader", 1)
        assert leader["requests"] == workers["requests"] and "networkTopology" in job
    assert _pods(lws) == _pods(plain)  # same pods, same demand
    assert [j for j in lws["jobs"] if len(j["tasks"]) == 1] == [
        j for j in plain["jobs"] if j["name"] not in {g["name"] for g in grouped}
    ]


def test_negative_leaders_is_an_input_error():
    with pytest.raises(InputError, match="leaders: expected an integer"):
        generate_document("superpod", **OPTIONS, leaders=-1)


def test_kueue_form_writes_a_podset_group_and_reads_it_back(tmp_path):
    inst = generate("superpod", **OPTIONS, leaders=1)
    path = tmp_path / "kueue.yaml"
    write_scheduler_form(inst, "kueue", str(path), warn=lambda _: None)
    text = path.read_text()
    assert text.count("podSetGroupName: job") == 2  # the leader's and the workers' podsets
    back = load_instance(path, warn=lambda _: None)
    group = [j for j in back.jobs if len(j.tasks) == 2]
    assert len(group) == 1 and {
        t.labels["toposolve.io/podset-group"] for t in group[0].tasks
    } == {"job"}


def test_a_topology_over_tasks_kueue_cannot_group_is_written_per_podset(tmp_path):
    inst = generate("superpod", **OPTIONS, leaders=1)
    job = next(j for j in inst.jobs if len(j.tasks) == 2)
    three = job.model_copy(
        update={"tasks": [*job.tasks, job.tasks[1].model_copy(update={"name": "extra"})]}
    )
    inst = inst.model_copy(update={"jobs": [three if j is job else j for j in inst.jobs]})
    warnings: list[str] = []
    path = tmp_path / "kueue.yaml"
    write_scheduler_form(inst, "kueue", str(path), warn=warnings.append)
    assert "podSetGroupName" not in path.read_text()
    assert any("written per podset" in w and job.key in w for w in warnings)
    back = load_instance(path, warn=lambda _: None)  # loads: every podset has its own level
    assert len(next(j for j in back.jobs if j.key == job.key).tasks) == 3
