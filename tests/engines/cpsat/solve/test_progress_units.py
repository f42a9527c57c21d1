"""Progress lines name milli-GPUs when ``placed`` counts them (shared GPUs)."""

from __future__ import annotations

from builders import GPU, gang, instance, nodes

from toposolve.core.instance import Job, Node, Task
from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.solve.progress import StageReader


def test_shared_gpus_read_in_milli_gpus():
    node = Node(name="n0", allocatable={"cpu": 8, GPU: 1})
    job = Job(name="s", tasks=[Task(name="t", replicas=2, requests={"cpu": 1, GPU: "300m"})])
    text, gap = StageReader(compile_problem(instance([node], [], [job]))).read("placed", 300, 600)
    assert text.startswith("300 milli-GPUs placed") and gap == 1.0


def test_whole_gpus_read_in_gpus():
    reader = StageReader(compile_problem(instance(nodes(1), [], [gang("a", 1, gpus=2)])))
    assert reader.read("placed", 2, 2)[0].startswith("2 GPUs placed")
