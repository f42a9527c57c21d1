"""The kueue mirror with per-device sharing: TAS admits by pooled per-node counts, then the pods
take devices on their assigned nodes by the share extender's rule (the fullest device that
fits); a workload with a pod no device holds is admitted but not bound."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.device_cases import (
    checked_device_plan,
    device_instances,
    gpu_nodes,
    racked,
    share,
    whole,
)
from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment
from toposolve.core.instance import Queue
from toposolve.core.problem import compile_problem
from toposolve.engines.kueue import run_kueue
from toposolve.engines.kueue.devices import bind_on_devices, device_room
from toposolve.solve import solve_problem

NO_DEVICE = "Kueue admitted it by pooled per-node counts, but {} of its {} pods fit no device"


def solved(instance, engine="kueue"):
    plan = solve_problem(compile_problem(instance), engine)
    assert check_plan(instance, plan, eviction_mode="none") == []
    return plan


def devices_of(plan):
    return {b.pod: (b.node, b.devices) for b in plan.bindings}


def fragmented():
    """n0: two devices with 600m used each (800m free pooled, no device holds 700m)."""
    return [share(f"r{d}", 600, running={0: "n0"}, device_use={0: {d: 600}}) for d in (0, 1)]


def test_a_pod_that_fits_pooled_but_no_device_leaves_the_workload_unbound():
    plan = solved(racked(gpu_nodes(2, 1), [*fragmented(), share("a", 700, replicas=2)]))
    job = plan.job("default/a")
    assert plan.bindings == [] and not job.placed
    assert job.reason.startswith(NO_DEVICE.format(1, 2))
    assert job.scheduler_reason is None  # Kueue itself reports the workload admitted
    # TAS took n0 (800m pooled) and n1 (1000m) for the two pods; n1's idle device holds both
    # pods of a one-pod-per-node gang in kube-scheduler with the device plugin's filter
    kube = solved(racked(gpu_nodes(2, 2), [*fragmented(), share("a", 700, replicas=2)]), "kube")
    assert {node for node, _ in devices_of(kube).values()} == {"n1"}


def test_the_unbound_workload_keeps_its_topology_usage():
    jobs = [*fragmented(), share("a", 700, replicas=2), share("b", 400)]
    plan = solved(racked(gpu_nodes(2, 1), jobs))
    # a's pooled usage (700m on each node) stays reserved: 100m and 300m left, b does not fit
    assert not plan.job("default/b").placed
    assert plan.job("default/b").scheduler_reason.startswith(
        "couldn't assign flavors to pod set w: topology doesn't allow to fit any of 1 pod(s)")
    without_a = solved(racked(gpu_nodes(2, 1), [*fragmented(), share("b", 400)]))
    assert without_a.job("default/b").placed


def test_the_unbound_workload_keeps_its_quota():
    def queued(job):
        job.queue = "q"
        return job

    jobs = [*fragmented(), queued(share("a", 700, replicas=2)), queued(share("b", 200))]
    queues = [Queue(name="default"), Queue(name="q", capability={"nvidia.com/gpu": "1500m"})]
    plan = solved(racked(gpu_nodes(2, 1), jobs, queues=queues))
    assert plan.job("default/a").reason.startswith(NO_DEVICE.format(1, 2))
    assert plan.job("default/b").reason == ("ClusterQueue 'q' nominal quota exceeded for "
                                            "nvidia.com/gpu")  # 1400m + 200m held against 1500m
    alone = solved(racked(gpu_nodes(2, 1), [*fragmented(), queued(share("b", 200))],
                          queues=queues))
    assert alone.job("default/b").placed


def test_tas_chooses_by_pooled_counts_blind_to_devices():
    # a fills n1's two devices to 700m each; b (400m) then best-fits n1 by its pooled 600m,
    # where no device holds it, although each device of n0 has 400m free
    jobs = [*fragmented(), share("a", 700, replicas=2), share("b", 400)]
    plan = solved(racked(gpu_nodes(2, 2), jobs))
    assert devices_of(plan) == {"default/a-w-0": ("n1", [0]), "default/a-w-1": ("n1", [1])}
    assert plan.job("default/b").reason.startswith(NO_DEVICE.format(1, 1))
    kube = solved(racked(gpu_nodes(2, 2), jobs), "kube")  # the device plugin's node filter
    assert devices_of(kube)["default/b-w-0"][0] == "n0"


def test_a_share_takes_the_fullest_device_that_fits():
    running = share("r", 300, running={0: "n0"}, device_use={0: {1: 300}})
    plan = solved(racked(gpu_nodes(2), [running, share("a", 200), share("b", 800)]))
    # a: device 1 (700m free) before the idle device 0; b then fits only device 0
    assert devices_of(plan) == {"default/a-w-0": ("n0", [1]), "default/b-w-0": ("n0", [0])}


def test_a_whole_gpu_needs_an_idle_device():
    running = [share(f"r{d}", 500, running={0: "n0"}, device_use={0: {d: 500}}) for d in (0, 1)]
    plan = solved(racked(gpu_nodes(2), [*running, whole("w", 1)]))
    assert plan.bindings == []
    assert plan.job("default/w").reason.startswith(NO_DEVICE.format(1, 1))


def test_the_pods_that_fit_keep_their_devices():
    problem = compile_problem(racked(gpu_nodes(2, 1), [*fragmented(), share("a", 700, 2)]))
    room = device_room(problem)
    assignment = Assignment()
    job = next(cj for cj in problem.jobs if cj.key == "default/a")
    assignment.add(job.groups[0], 0, 1)  # TAS's choice: one pod on each node
    assignment.add(job.groups[0], 1, 1)
    why = bind_on_devices(problem, room, assignment, job.index, {})
    assert why.startswith(NO_DEVICE.format(1, 2))
    assert assignment.counts == {} and assignment.devices == {}  # not bound
    assert room.free[1, 0] == 300  # the pod on n1 runs on its device (n1 has one)
    assert room.free[0].tolist() == [400, 400]


def test_no_device_sharing_keeps_the_pooled_engine():
    problem = compile_problem(racked(gpu_nodes(2), [whole("w", 1)]))
    assert device_room(problem) is None
    assert all(b.devices is None for b in solve_problem(problem, "kueue").bindings)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(device_instances())
def test_random_device_instances_give_checked_plans(instance):
    checked_device_plan(instance, "kueue", run_kueue)
