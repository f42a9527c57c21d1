"""The comparison table names the unit of its accelerator rows (milli for shared GPUs)."""

from __future__ import annotations

from builders import GPU, gang, instance, nodes

from toposolve.analysis.compare import compare
from toposolve.core.instance import Job, Node, Task
from toposolve.report.comparison import format_comparison


def test_shared_gpus_are_counted_in_milli_accelerators():
    node = Node(name="n0", allocatable={"cpu": 16, GPU: 1})
    jobs = [Job(name=f"s{k}", creation_index=k,
                tasks=[Task(name="t", replicas=1, requests={"cpu": 1, GPU: "300m"})])
            for k in range(2)]
    text = format_comparison(compare(instance([node], [], jobs), ("volcano",)))
    row = next(line for line in text.splitlines() if line.startswith("milli-accelerators placed"))
    assert row.split()[-1] == "600"


def test_whole_gpus_keep_the_plain_label():
    text = format_comparison(compare(instance(nodes(1), [], [gang("a", 1, gpus=2)]),
                                     ("volcano",)))
    row = next(line for line in text.splitlines() if line.startswith("accelerators placed"))
    assert row.split()[-1] == "2"
