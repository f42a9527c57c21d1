"""The instance model reads resource maps as Kubernetes quantities and never rescales a number
silently."""

from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

import toposolve
from toposolve.core.instance import Instance, Job, Member, MemberSelector, Node, Queue, Task
from toposolve.core.quantity import MilliUnits
from toposolve.formats import load_instance, write_manifests
from toposolve.formats.native.writer import write_native

GPU = "nvidia.com/gpu"


def test_numbers_are_whole_units_and_strings_are_quantities():
    node = Node(name="n", allocatable={"cpu": "192", GPU: 8, "memory": "2Ti", "pods": 110})
    assert node.allocatable == {
        "cpu": 192_000,
        GPU: 8_000,
        "memory": 2 * 1024**4 * 1000,
        "pods": 110_000,
    }
    task = Task(name="t", replicas=1, requests={"cpu": "500m", GPU: 1.5, "memory": 1})
    assert task.requests == {"cpu": 500, GPU: 1500, "memory": 1000}


@pytest.mark.parametrize("field", ["capability", "deserved", "guarantee"])
def test_queue_resources_take_quantities(field):
    assert getattr(Queue(name="q", **{field: {GPU: 16, "cpu": "1k"}}), field) == {
        GPU: 16_000,
        "cpu": 1_000_000,
    }


def test_min_resources_and_assignment_read_quantities_too():
    job = Job(name="j", min_resources={GPU: "16"})
    assert job.min_resources == {GPU: 16_000}
    job.min_resources = {GPU: 32}
    assert job.min_resources == {GPU: 32_000}


def test_a_map_taken_from_another_model_is_not_rescaled():
    first = Node(name="a", allocatable={"cpu": 64, GPU: 8})
    assert Node(name="b", allocatable=first.allocatable).allocatable == first.allocatable
    assert Node(name="c", allocatable=MilliUnits({"cpu": 64_000})).allocatable == {"cpu": 64_000}


@pytest.mark.parametrize(
    ("amount", "words"),
    [
        ("12q", "not a Kubernetes quantity"),
        (True, "booleans"),
        (-1, "must not be negative"),
        (float("nan"), "finite"),
    ],
)
def test_a_bad_amount_names_the_resource(amount, words):
    with pytest.raises(ValidationError, match=rf"cpu: .*{words}"):
        Node(name="n", allocatable={"cpu": amount})


def test_dump_gives_quantities_that_validate_back_to_an_equal_model():
    inst = Instance(
        nodes=[Node(name="n", allocatable={"cpu": "1500m", GPU: 8, "memory": "512Gi"})],
        jobs=[
            Job(
                name="j",
                min_resources={GPU: 8},
                tasks=[Task(name="t", replicas=2, requests={GPU: 4})],
            )
        ],
        queues=[Queue(name="q", deserved={GPU: 8})],
    )
    dumped = inst.model_dump()
    assert dumped["nodes"][0]["allocatable"] == {"cpu": "1500m", GPU: "8", "memory": "512Gi"}
    assert Instance.model_validate(dumped) == inst
    assert Instance.model_validate_json(inst.model_dump_json()) == inst
    assert pickle.loads(pickle.dumps(inst)) == inst
    assert inst.model_copy(deep=True) == inst


def test_an_instance_built_in_python_solves_and_round_trips_through_files(tmp_path):
    """The README's way to build an instance without YAML: 192 cores and 8 GPUs mean what they
    say."""
    inst = Instance(
        nodes=[Node(name=f"n{i}", allocatable={"cpu": "192", GPU: 8}) for i in range(2)],
        jobs=[
            Job(
                name="train",
                min_available=2,
                tasks=[Task(name="w", replicas=2, requests={"cpu": 96, GPU: 8})],
            )
        ],
    )
    plan = toposolve.solve(inst)
    assert plan.job("default/train").placed
    assert sorted(b.node for b in plan.bindings) == ["n0", "n1"]
    for write in (write_native, write_manifests):
        path = tmp_path / f"{write.__name__}.yaml"
        write(inst, path)
        again = load_instance(path)
        assert again.nodes[0].allocatable == inst.nodes[0].allocatable
        assert again.jobs[0].tasks[0].requests == inst.jobs[0].tasks[0].requests


def test_an_exact_member_names_one_node_or_hypernode():
    assert Member.exact("n0") == Member(type="Node", selector=MemberSelector(exact_match="n0"))
    rack = Member.exact("rack-a", "HyperNode")
    assert (rack.type, rack.selector.exact_match, rack.selector.regex_match) == (
        "HyperNode", "rack-a", None)
