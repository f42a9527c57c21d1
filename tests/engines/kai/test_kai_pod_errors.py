"""KAI's words for a pod that found no node (engines/kai/reasons.py, the engine's
``scheduler_reason``): the gang and single-pod shapes, each node's reasons in KAI's check order,
and where toposolve leaves KAI's words out."""

from __future__ import annotations

from builders import GPU, gang, hard, leaf, nodes
from scheduler_docs import kai_docs, write_docs

import toposolve
from tests.device_cases import gpu_nodes, share, whole
from toposolve.core.instance import (
    Instance,
    Job,
    LabelRequirement,
    Node,
    PodConstraints,
    Taint,
    Task,
)
from toposolve.formats.load import load_instance


def _message(inst: Instance, job: str) -> str | None:
    entry = toposolve.solve(inst, "kai").job(f"default/{job}")
    assert entry is not None and not entry.placed and entry.reason
    return entry.scheduler_reason


def _constrained(job: Job, constraints: PodConstraints) -> Job:
    task = job.tasks[0].model_copy(update={"constraints": constraints})
    return job.model_copy(update={"tasks": [task]})


def test_a_gang_counts_the_pods_found_before_the_failed_one():
    inst = Instance(nodes=nodes(2), hypernodes=[], jobs=[gang("a", 3)])
    assert _message(inst, "a") == (
        "\nPodSchedulingErrors.\nResources were found for 2 pods while 3 are required for gang "
        "scheduling. Additional pods cannot be scheduled due to: no nodes with enough resources "
        "were found: 2 node(s) didn't have enough resources: GPUs..")


def test_a_single_pod_job_names_the_pod_and_every_short_resource():
    inst = Instance(nodes=nodes(2), hypernodes=[], jobs=[gang("b", 1, gpus=16, cpu=100)])
    assert _message(inst, "b") == (
        "\nPodSchedulingErrors.\nResources were not found for pod default/b-worker-0 due to: no "
        "nodes with enough resources were found: 2 node(s) didn't have enough resources: CPU "
        "cores. \n2 node(s) didn't have enough resources: GPUs..")


def test_node_reasons_in_kais_check_order():
    taint = Taint(key="k", value="v", effect="NoSchedule")
    fleet = [Node(name="n0", allocatable={"cpu": 64, GPU: 8}, unschedulable=True),
             Node(name="n1", allocatable={"cpu": 64, GPU: 8}, taints=[taint]),
             Node(name="n2", allocatable={"cpu": 64, GPU: 8}),
             Node(name="n3", allocatable={"cpu": 64, GPU: 8, "pods": 0}, labels={"zone": "z1"}),
             Node(name="n4", allocatable={"cpu": 64, GPU: 4}, taints=[taint])]
    affinity = PodConstraints(affinity_terms=[[LabelRequirement(key="zone", operator="In",
                                                                values=["z1"])]])
    inst = Instance(nodes=fleet, hypernodes=[], jobs=[_constrained(gang("c", 1), affinity)])
    assert _message(inst, "c") == (
        "\nPodSchedulingErrors.\nResources were not found for pod default/c-worker-0 due to: no "
        "nodes with enough resources were found: 1 node is unschedulable. \n1 node(s) didn't "
        "have enough resources: GPUs. \n1 node(s) didn't match Pod's node affinity/selector. \n"
        "1 node(s) had untolerated taint {k: v}. \n1 node(s) pod number exceeded..")


TAINT = [Taint(key="k", effect="NoSchedule")]


def _two_racks(size: int, tainted: set[int], pods: int) -> Instance:
    fleet = [Node(name=f"node{i}", allocatable={"cpu": 64, GPU: 8},
                  taints=TAINT if i in tainted else []) for i in range(2 * size)]
    racks = [leaf(f"s{r}", [f"node{r * size + i}" for i in range(size)]) for r in range(2)]
    return Instance(nodes=fleet, hypernodes=racks, jobs=[gang("t", pods, topology=hard(1))])


def test_each_topology_domain_tried_adds_its_error_and_the_pods_reasons_add_up():
    # both racks pass KAI's domain check (it counts resources only), then t-worker-1 finds no
    # node in either: one job fit error per attempt, the second with the pod's reasons of both
    assert _message(_two_racks(2, {1, 3}, 2), "t") == (
        "\nUnable to schedule podgroup."
        "\nResources were found for 1 pods while 2 are required for gang scheduling. Additional "
        "pods cannot be scheduled due to: no nodes with enough resources were found: 1 node(s) "
        "didn't have enough resources: GPUs. \n1 node(s) had untolerated taint {k: }.."
        "\nResources were found for 1 pods while 2 are required for gang scheduling. Additional "
        "pods cannot be scheduled due to: no nodes with enough resources were found: 2 node(s) "
        "didn't have enough resources: GPUs. \n2 node(s) had untolerated taint {k: }..")


def test_a_later_attempt_failing_further_on_counts_only_its_own_nodes():
    # s0 fails at t-worker-1 (node0 full, node1 and node2 tainted), s1 at t-worker-2, which s0
    # never reached
    assert _message(_two_racks(3, {1, 2, 5}, 3), "t") == (
        "\nUnable to schedule podgroup."
        "\nResources were found for 1 pods while 3 are required for gang scheduling. Additional "
        "pods cannot be scheduled due to: no nodes with enough resources were found: 1 node(s) "
        "didn't have enough resources: GPUs. \n2 node(s) had untolerated taint {k: }.."
        "\nResources were found for 2 pods while 3 are required for gang scheduling. Additional "
        "pods cannot be scheduled due to: no nodes with enough resources were found: 1 node(s) "
        "had untolerated taint {k: }. \n2 node(s) didn't have enough resources: GPUs..")


def test_left_out_where_the_failed_pod_was_placed_in_an_earlier_attempt():
    # s0 places t-worker-1 and fails at t-worker-2; s1 fails at t-worker-1, whose reasons in
    # KAI also hold the nodes it passed over before its pick in s0 (not replayed)
    assert _message(_two_racks(3, {2, 4, 5}, 3), "t") is None


def _on_two_gpus(pending: Job) -> Instance:
    # the node's two devices hold 1.8 GPUs (a whole GPU and 0.8 of the other): 0.2 is free,
    # KAI's pod_errors_test "used 1.8, capacity 2"
    running = [whole("r0", 1, running={0: "n0"}, device_use={0: {0: 1000}}),
               share("r1", 800, running={0: "n0"}, device_use={0: {1: 800}})]
    return Instance(nodes=gpu_nodes(2), hypernodes=[], jobs=[*running, pending])


def test_a_fraction_beyond_the_nodes_free_gpus():
    # NewFitErrorInsufficientResource compares the fraction with the node's free GPUs, pooled
    assert _message(_on_two_gpus(share("p", 500)), "p") == (
        "\nPodSchedulingErrors.\nResources were not found for pod default/p-w-0 due to: no nodes "
        "with enough resources were found: 1 node(s) didn't have enough resources: GPUs..")


def test_a_fraction_of_several_devices_counts_them_all():
    # 2 × 0.5 GPUs requested (KAI's GPUs() is portion × count) against 0.2 free
    assert _message(_on_two_gpus(share("p", 500, count=2)), "p") == (
        "\nPodSchedulingErrors.\nResources were not found for pod default/p-w-0 due to: no nodes "
        "with enough resources were found: 1 node(s) didn't have enough resources: GPUs..")


def test_left_out_where_the_pooled_gpus_suffice_but_no_device_holds_the_fraction():
    # 0.6 free in all, 0.3 on each device: KAI's resource check passes, its GPU-sharing
    # filter refuses the node, in words toposolve does not give
    running = [share(f"r{d}", 700, running={0: "n0"}, device_use={0: {d: 700}}) for d in (0, 1)]
    inst = Instance(nodes=gpu_nodes(2), hypernodes=[], jobs=[*running, share("p", 500)])
    assert _message(inst, "p") is None


def _memory_pod(mib: int, cpu: int = 1) -> Instance:
    # g0, g1: one GPU of 16000 MiB each, taken by whole-GPU pods; c0: no GPU, no memory label
    # (KAI assumes 100 MiB per GPU there). The pending pod asks ``mib`` MiB of one GPU.
    label = {"nvidia.com/gpu.memory": "16000"}
    fleet = [Node(name="g0", allocatable={"cpu": 64, GPU: 1}, labels=label),
             Node(name="g1", allocatable={"cpu": 64, GPU: 1}, labels=label),
             Node(name="c0", allocatable={"cpu": 64})]
    running = [whole(f"r{i}", 1, running={0: f"g{i}"}, device_use={0: {0: 1000}})
               for i in range(2)]
    milli = -(-mib * 1000 // 16000)
    task = Task(name="w", replicas=1, requests={"cpu": cpu, GPU: f"{milli}m"},
                device_share={"milli": milli, "memory": mib})
    return Instance(nodes=fleet, hypernodes=[],
                    jobs=[*running, Job(name="m", min_available=1, tasks=[task])])


def test_a_gpu_memory_pod_is_refused_in_kais_words():
    # full GPU nodes give no reason (the pod's resource vector holds no GPUs and its cpu fits);
    # on c0 2050 MiB is 20.5 GPUs of 100 MiB, not a valid portion: GPUs and GPU memory
    assert _message(_memory_pod(2050), "m") == (
        "\nPodSchedulingErrors.\nResources were not found for pod default/m-w-0 due to: no nodes "
        "with enough resources were found: 1 node(s) didn't have enough resources: GPU memory. "
        "\n1 node(s) didn't have enough resources: GPUs..")


def test_a_gpu_memory_pod_no_node_gives_a_reason_for_gets_kais_default():
    # 2000 MiB is 20 whole GPUs of 100 MiB on c0, a valid portion: no node adds a fit error
    assert _message(_memory_pod(2000), "m") == (
        "\nPodSchedulingErrors.\nResources were not found for pod default/m-w-0 due to: Unable "
        "to schedule pod.")


def test_a_gpu_memory_pod_short_of_cpu_counts_every_node():
    # cpu short everywhere: every node words the pod; 0.13 GPU (2050 / 16000) exceeds the
    # full nodes' idle GPUs, GPU memory only on c0
    assert _message(_memory_pod(2050, cpu=100), "m") == (
        "\nPodSchedulingErrors.\nResources were not found for pod default/m-w-0 due to: no nodes "
        "with enough resources were found: 1 node(s) didn't have enough resources: GPU memory. "
        "\n3 node(s) didn't have enough resources: CPU cores. \n3 node(s) didn't have enough "
        "resources: GPUs..")


def _subgroups(tmp_path, b_pods: int, a_running: bool = True,
               tainted: tuple[str, ...] = ("n1",)) -> str | None:
    # racks r0 (n0, n1) and r1 (n2, n3) of two 8-GPU nodes, the PodGroup required at a rack;
    # SubGroup a (1 pod of 4 GPUs, running on n0 when ``a_running``), SubGroup b (all its pods),
    # the ``tainted`` nodes refusing them
    docs = kai_docs([{"name": "a", "minMember": 1}, {"name": "b", "minMember": b_pods}],
                    ["a"] + ["b"] * b_pods)
    if a_running:
        pod = next(d for d in docs if d["kind"] == "Pod")
        pod["spec"]["nodeName"] = "n0"
        pod["status"] = {"phase": "Running"}
    for node in (d for d in docs if d["kind"] == "Node" and d["metadata"]["name"] in tainted):
        node["spec"] = {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}
    plan = toposolve.solve(load_instance(write_docs(tmp_path, docs)), "kai")
    entry = plan.job("default/pg")
    assert entry is not None and not entry.placed and entry.reason
    return entry.scheduler_reason


def test_one_subgroup_short_is_worded_in_the_subgroup_shape(tmp_path):
    # a runs: b alone has pods in the gang step, so which SubGroup fails is not Go's map order.
    # b is kept to r0 (a's pod pins the required rack), whose 12 free GPUs pass KAI's domain
    # check (resources only); n1's taint leaves n0's 4 GPUs: 1 of b's 3 pods fits
    assert _subgroups(tmp_path, 3) == (
        "\nPodSchedulingErrors.\nResources were found for 1 pods from all sub-groups while "
        "sub-group b requires 3 pods for gang scheduling. Additional pods cannot be scheduled in "
        "this sub-group due to: no nodes with enough resources were found: 1 node(s) didn't have "
        "enough resources: GPUs. \n1 node(s) had untolerated taint {k: v}..")


def test_several_subgroups_short_are_left_unworded(tmp_path):
    # a and b both have pods in the step (each rack passes the domain check, one node of each
    # is tainted): KAI orders the SubGroups by a Go map (random)
    assert _subgroups(tmp_path, 3, a_running=False, tainted=("n1", "n3")) is None
