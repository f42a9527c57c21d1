"""Per-device sharing in the model and the compiled problem (docs/formats.md)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from toposolve.core.errors import InputError
from toposolve.core.instance import Instance, Job, Node, Task
from toposolve.core.problem import compile_problem

GPU = "nvidia.com/gpu"


def nodes(gpus=(2, 4)):
    return [Node(name=f"n{i}", allocatable={"cpu": 16, GPU: g}) for i, g in enumerate(gpus)]


def shared(name, milli, replicas=1, count=1, **extra):
    task = Task(name="w", replicas=replicas, requests={GPU: f"{milli * count}m"},
                device_share={"milli": milli, "count": count}, **extra)
    return Job(name=name, min_available=replicas, tasks=[task])


def test_share_must_match_the_pooled_request():
    with pytest.raises(ValidationError, match="milli × count"):
        Task(name="w", replicas=1, requests={GPU: "500m"}, device_share={"milli": 300})
    with pytest.raises(ValidationError):
        Task(name="w", replicas=1, requests={GPU: "1100m"}, device_share={"milli": 1100})


def test_device_use_only_for_running_pods():
    with pytest.raises(ValidationError, match="not running"):
        Task(name="w", replicas=2, requests={GPU: "300m"}, device_share={"milli": 300},
             running={0: "n0"}, device_use={1: {0: 300}})


def test_instance_takes_the_shared_resource():
    instance = Instance(nodes=nodes(), jobs=[shared("a", 300)])
    assert instance.device_resource == GPU
    assert Instance(nodes=nodes()).device_resource is None


def test_two_shared_resources_are_refused():
    other = Task(name="w", replicas=1, requests={"example.com/npu": "500m"},
                 device_share={"resource": "example.com/npu", "milli": 500})
    with pytest.raises(ValidationError, match="one resource per instance"):
        Instance(nodes=nodes(), jobs=[shared("a", 300), Job(name="b", tasks=[other])])


def test_problem_arrays():
    running = shared("r", 300, running={0: "n1"}, device_use={0: {2: 300}})
    whole = Job(name="w", tasks=[Task(name="w", replicas=1, requests={GPU: 2})])
    cpu = Job(name="c", tasks=[Task(name="w", replicas=1, requests={"cpu": 1})])
    problem = compile_problem(Instance(nodes=nodes(), jobs=[shared("a", 250), running, whole,
                                                            cpu]))
    assert problem.has_devices and problem.resources[problem.device_resource] == GPU
    assert problem.node_devices.tolist() == [2, 4]
    # slots past a node's devices count as full; the running pod holds 300m of device 2 on n1
    assert problem.device_used.tolist() == [[0, 0, 1000, 1000], [0, 0, 300, 0]]
    assert problem.group_device_milli.tolist() == [250, 300, 1000, 0]
    assert problem.group_device_count.tolist() == [1, 1, 2, 0]
    # what evicting each running pod frees, by its full name
    assert problem.running_device_use == {"default/r-w-0": {2: 300}}


def test_without_shares_the_problem_has_no_devices():
    whole = Job(name="w", tasks=[Task(name="w", replicas=1, requests={GPU: 2})])
    problem = compile_problem(Instance(nodes=nodes(), jobs=[whole]))
    assert not problem.has_devices and problem.device_used.shape == (0, 0)
    assert problem.group_device_count.shape == (0,)


def test_fraction_without_share_is_refused_one_line():
    fraction = Job(name="f", tasks=[Task(name="w", replicas=1, requests={GPU: "500m"})])
    with pytest.raises(InputError, match="needs a deviceShare") as err:
        compile_problem(Instance(nodes=nodes(), jobs=[shared("a", 300), fraction]))
    assert "Job/default/f" in str(err.value) and "\n" not in str(err.value)


def test_running_pod_must_say_its_devices():
    silent = Job(name="s", tasks=[Task(name="w", replicas=1, requests={GPU: 1},
                                       running={0: "n0"})])
    with pytest.raises(InputError, match="deviceUse") as err:
        compile_problem(Instance(nodes=nodes(), jobs=[shared("a", 300), silent]))
    assert "Pod/default/s-w-0" in str(err.value)
    beyond = shared("b", 300, running={0: "n0"}, device_use={0: {3: 300}})
    with pytest.raises(InputError, match="device 3 on a node of 2"):
        compile_problem(Instance(nodes=nodes(), jobs=[beyond]))


def test_whole_running_pod_with_devices():
    whole = Job(name="w", tasks=[Task(name="w", replicas=1, requests={GPU: 2},
                                      running={0: "n1"}, device_use={0: {0: 1000, 3: 1000}})])
    problem = compile_problem(Instance(nodes=nodes(), jobs=[shared("a", 300), whole]))
    assert np.array_equal(problem.device_used[1], [1000, 0, 0, 1000])
