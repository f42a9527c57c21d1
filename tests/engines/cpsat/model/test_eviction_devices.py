"""CP-SAT evicts with per-device sharing: an evicted pod gives its own devices back."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.device_cases import gpu_nodes, share, whole
from tests.engines.volcano.test_devices import CLASSES, crowded_device_instances, prioritised
from toposolve.check.checker import check_plan
from toposolve.core.assignment import from_plan
from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.engines.contract import SolveOptions
from toposolve.engines.cpsat.model.eviction import build_eviction_spec
from toposolve.engines.cpsat.model.hint import hint_from_assignment, hint_is_feasible
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.solve.parameters import resolve_settings
from toposolve.engines.volcano import run_heuristic
from toposolve.policy.objective import stage_values
from toposolve.policy.profiles import for_eviction, load_profile
from toposolve.solve import solve_problem


def options(mode: str) -> SolveOptions:
    return SolveOptions(evict=mode, time_limit=5, deterministic=True)


def test_evicting_the_shared_pod_on_a_device_lets_a_whole_gpu_in():
    # device 0: one low-priority 500m pod; device 1: two low-priority 300m pods. A whole GPU
    # fits only once a device is emptied: evicting the one pod on device 0 is the cheaper way
    running = [prioritised(share("r0", 500, running={0: "n0"}, device_use={0: {0: 500}}), "low")]
    running += [prioritised(share(f"r{k}", 300, running={0: "n0"}, device_use={0: {1: 300}}),
                            "low") for k in (1, 2)]
    instance = Instance(nodes=gpu_nodes(2), jobs=[*running, prioritised(whole("w", 1), "high")],
                        priority_classes=CLASSES)
    plan = solve_problem(compile_problem(instance), "cpsat", options=options("preempt"))
    assert check_plan(instance, plan, eviction_mode="preempt") == []
    assert [e.pod for e in plan.evictions] == ["default/r0-w-0"]
    assert [(b.pod, b.node, b.devices) for b in plan.bindings] == [("default/w-w-0", "n0", [0])]


def test_evicting_a_pod_of_two_device_shares_frees_both_devices():
    # v holds 500m of devices 0 and 1 (one pod, count 2); w needs both devices whole
    v = prioritised(share("v", 500, count=2, running={0: "n0"}, device_use={0: {0: 500, 1: 500}}),
                    "low")
    instance = Instance(nodes=gpu_nodes(2), jobs=[v, prioritised(whole("w", 2), "high")],
                        priority_classes=CLASSES)
    plan = solve_problem(compile_problem(instance), "cpsat", options=options("preempt"))
    assert check_plan(instance, plan, eviction_mode="preempt") == []
    assert [e.pod for e in plan.evictions] == ["default/v-w-0"]
    assert [(b.pod, b.devices) for b in plan.bindings] == [("default/w-w-0", [0, 1])]


def gang_on_two_devices():
    """Low-priority gang v: its youngest pod shares device 0 with a high-priority pod, its
    older pod is alone on device 1; a high-priority whole GPU w is pending."""
    v = prioritised(share("v", 500, replicas=2, running={0: "n0", 1: "n0"},
                          device_use={0: {1: 500}, 1: {0: 500}}), "low")
    keep = prioritised(share("keep", 500, running={0: "n0"}, device_use={0: {0: 500}}), "high")
    return Instance(nodes=gpu_nodes(2), jobs=[v, keep, prioritised(whole("w", 1), "high")],
                    priority_classes=CLASSES)


def test_the_model_chooses_which_pod_of_a_group_to_evict_by_its_devices():
    # evicting the youngest pod of v (slot order) frees device 0 only down to 500m: the model
    # must pick v's older pod, the one alone on device 1
    instance = gang_on_two_devices()
    problem = compile_problem(instance)
    spec = build_eviction_spec(problem, "preempt")
    (slot,) = spec.slots
    assert slot.pods[0] == "default/v-w-1"  # the youngest goes first when pods are alike
    plan = solve_problem(problem, "cpsat", options=options("preempt"))
    assert check_plan(instance, plan, eviction_mode="preempt") == []
    assert [e.pod for e in plan.evictions] == ["default/v-w-0"]
    assert [(b.pod, b.devices) for b in plan.bindings] == [("default/w-w-0", [1])]
    # the mirror's gang-aware preemption evicts the whole gang for the same binding
    mirror = solve_problem(problem, "volcano", options=SolveOptions(evict="preempt"))
    assert len(mirror.evictions) == 2 and len(mirror.bindings) == 1


def test_slot_nodes_with_different_devices_under_victims_are_not_twins():
    # the same pods by group and count on two nodes, on different devices: their keys differ
    jobs = [prioritised(share(f"r{n}", 500, running={0: f"n{n}"}, device_use={0: {n: 500}}),
                        "low") for n in (0, 1)]
    instance = Instance(nodes=gpu_nodes(2, 2), jobs=[*jobs, prioritised(whole("w", 1), "high")],
                        priority_classes=CLASSES)
    spec = build_eviction_spec(compile_problem(instance), "preempt")
    assert spec.node_keys[0] != spec.node_keys[1]
    assert spec.device_used is not None and not spec.device_used.any()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded_device_instances(), st.sampled_from(["preempt", "reclaim", "both"]))
def test_the_mirrors_evicting_plan_is_a_feasible_hint(instance, mode):
    problem = compile_problem(instance)
    pm = PlacementModel(problem, eviction=build_eviction_spec(problem, mode))
    mirror = run_heuristic(problem, evict=mode)
    hint = hint_from_assignment(pm, mirror)
    assert hint.complete and hint.fits_nodes
    assert len(hint.values) == len(pm.model.proto.variables)
    settings_ = resolve_settings(for_eviction(load_profile(None), mode), options(mode))
    assert hint_is_feasible(pm.model, hint.values, settings_, 5.0) is True


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded_device_instances(), st.sampled_from(["preempt", "reclaim", "both"]))
def test_random_device_evictions_give_checked_plans_placing_at_least_the_mirror(instance, mode):
    problem = compile_problem(instance)
    mirror = solve_problem(problem, "volcano", options=SolveOptions(evict=mode))
    plan = solve_problem(problem, "cpsat", options=options(mode))
    assert check_plan(instance, plan, eviction_mode=mode) == []
    assert all(b.devices is not None for b in plan.bindings)
    placed = stage_values(problem, from_plan(problem, plan))["placed"]
    assert placed >= stage_values(problem, from_plan(problem, mirror))["placed"]


def test_the_same_evicting_device_instance_gives_the_same_plan_bytes():
    instance = gang_on_two_devices()
    plans = [solve_problem(compile_problem(instance), "cpsat", options=options("both"))
             for _ in range(2)]
    assert plans[0].evictions and plans[0].bindings
    assert plans[0].to_json(timings=False) == plans[1].to_json(timings=False)
