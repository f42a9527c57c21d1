"""Seeded generators: sizes, tiers and HyperNode counts derived by hand from each preset's
documented shape, demand ≈ load, occupancy, reproducibility, compilation, and the bundled
instances."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from toposolve.core.errors import InputError
from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.formats.load import load_instance
from toposolve.generate import PRESETS, generate, generate_document

GPU = "nvidia.com/gpu"
NPU = "huawei.com/ascend-1980"
INSTANCES = Path(__file__).resolve().parents[2] / "instances"


def tier_counts(inst: Instance) -> dict[int, int]:
    return dict(sorted(Counter(h.tier for h in inst.hypernodes).items()))


def capacity(inst: Instance, resource: str = GPU) -> int:
    return sum(n.allocatable.get(resource, 0) for n in inst.nodes) // 1000


def pending(inst: Instance, resource: str = GPU) -> int:
    return (
        sum(
            t.requests.get(resource, 0) * (t.replicas - len(t.running))
            for j in inst.jobs
            for t in j.tasks
        )
        // 1000
    )


def busy_nodes(inst: Instance) -> set[str]:
    return {node for j in inst.jobs for t in j.tasks for node in t.running.values()}


def pending_jobs(inst: Instance) -> list:
    return [j for j in inst.jobs if not any(t.running for t in j.tasks)]


def test_presets_are_listed_with_descriptions():
    assert set(PRESETS) >= {
        "superpod",
        "nvl72",
        "fattree",
        "alibaba",
        "usecase-gpu",
        "usecase-npu",
        "scale-6k",
    }
    assert all(PRESETS.values())


def test_superpod_rounds_up_to_whole_sus_and_builds_four_tiers():
    inst = generate("superpod", nodes=200, seed=3)
    # 200 nodes → 7 SUs of 32 = 224; spine groups of 4 SUs: 2; core groups of 4: 1; one top
    assert len(inst.nodes) == 224
    assert tier_counts(inst) == {1: 7, 2: 2, 3: 1, 4: 1}
    assert inst.nodes[0].name == "dgx-0000" and inst.nodes[-1].name == "dgx-0223"
    assert inst.nodes[0].allocatable == {
        "cpu": 224_000,
        "memory": 2 * 1024**4 * 1000,
        GPU: 8000,
        "pods": 110_000,
    }
    sus = [h for h in inst.hypernodes if h.tier == 1]
    assert [h.name for h in sus] == [f"su-{i:02d}" for i in range(7)]
    assert all(len(h.members) == 32 for h in sus)
    spines = [h for h in inst.hypernodes if h.tier == 2]
    assert [len(h.members) for h in spines] == [4, 3]
    problem = compile_problem(inst)
    assert problem.topology.max_tier == 5


def test_superpod_demand_constraints_and_priorities():
    inst = generate("superpod", nodes=512, load=0.7, jobs=40, seed=1)
    assert len(inst.jobs) == 40
    assert abs(pending(inst) / capacity(inst) - 0.7) <= 0.7 * 0.03 + 1e-9
    modes = Counter(j.network_topology.mode if j.network_topology else "none" for j in inst.jobs)
    assert modes["hard"] and modes["soft"] and modes["none"]
    assert {j.priority_class for j in inst.jobs} >= {"high", "normal", "low"}
    for job in inst.jobs:
        for task in job.tasks:
            assert task.requests[GPU] in (1000, 2000, 4000, 8000)
            if task.partition is not None:
                assert task.partition.network_topology.mode == "hard"
                assert job.subgroup_policies[0].sub_group_size == task.partition.partition_size
    compile_problem(inst)


def test_superpod_without_job_count_draws_until_the_load_is_met():
    inst = generate("superpod", nodes=1024, load=0.5, seed=2)
    assert abs(pending(inst) / capacity(inst) - 0.5) <= 0.5 * 0.03 + 1e-9


def test_occupancy_keeps_that_fraction_of_nodes_busy_with_running_gangs():
    inst = generate("superpod", nodes=512, occupancy=0.5, load=0.3, seed=4)
    busy = busy_nodes(inst)
    # churn stops at the first state at or below the target; one gang is at most 32 nodes
    assert 0.5 - 32 / 512 <= len(busy) / 512 <= 0.5
    running = [j for j in inst.jobs if any(t.running for t in j.tasks)]
    assert running and all(len(t.running) == t.replicas for j in running for t in j.tasks)
    problem = compile_problem(inst)
    assert (problem.used <= problem.allocatable).all()
    # a running gang never straddles the SU boundary when it fits one SU
    su_of = {f"dgx-{i:04d}": i // 32 for i in range(512)}
    for job in running:
        nodes = set(job.tasks[0].running.values())
        if len(nodes) <= 32:
            assert len({su_of[n] for n in nodes}) == 1


def test_same_seed_same_instance_other_seed_other_instance():
    a = generate("superpod", nodes=256, occupancy=0.3, jobs=20, seed=7)
    b = generate("superpod", nodes=256, occupancy=0.3, jobs=20, seed=7)
    c = generate("superpod", nodes=256, occupancy=0.3, jobs=20, seed=8)
    assert a.model_dump() == b.model_dump()
    assert a.model_dump() != c.model_dump()
    for preset, options in [("nvl72", {}), ("alibaba", {"nodes": 64}), ("fattree", {})]:
        assert (
            generate(preset, seed=1, **options).model_dump()
            == generate(preset, seed=1, **options).model_dump()
        )
        assert (
            generate(preset, seed=1, **options).model_dump()
            != generate(preset, seed=2, **options).model_dump()
        )


def test_scale_6k_reaches_volcanos_hypernode_density():
    inst = generate("scale-6k")
    assert len(inst.nodes) == 6144
    # node, pair, SU (32), spine group (4 SUs), top
    assert tier_counts(inst) == {1: 6144, 2: 3072, 3: 192, 4: 48, 5: 1}
    assert len(inst.hypernodes) >= 9000
    assert len(inst.jobs) == 200
    assert abs(pending(inst) / capacity(inst) - 0.9) <= 0.9 * 0.03 + 1e-9
    compile_problem(inst)


def test_nvl72_racks_of_18_four_gpu_trays():
    inst = generate("nvl72", nodes=150, seed=1)
    # 150 trays → 9 racks of 18 = 162; 8 racks per leaf → 2 leaves; one spine
    assert len(inst.nodes) == 162
    assert tier_counts(inst) == {1: 9, 2: 2, 3: 1}
    assert all(len(h.members) == 18 for h in inst.hypernodes if h.tier == 1)
    assert {n.allocatable[GPU] for n in inst.nodes} == {4000}
    assert all(t.requests[GPU] <= 4000 for j in inst.jobs for t in j.tasks)
    compile_problem(inst)


@pytest.mark.parametrize(
    ("arity", "depth", "counts"), [(4, 3, {1: 16, 2: 4, 3: 1}), (2, 4, {1: 8, 2: 4, 3: 2, 4: 1})]
)
def test_fattree_arity_and_depth(arity, depth, counts):
    inst = generate("fattree", arity=arity, depth=depth, seed=0)
    assert len(inst.nodes) == arity**depth
    assert tier_counts(inst) == counts
    assert all(len(h.members) == arity for h in inst.hypernodes if h.tier < depth)
    compile_problem(inst)


def test_alibaba_uses_the_trace_nodes_and_pods():
    inst = generate("alibaba", seed=0, load=0.5)
    # the trace: 1,213 GPU nodes with 6,212 GPUs (instances/data, ATTRIBUTION.md)
    assert len(inst.nodes) == 1213
    assert capacity(inst) == 6212
    models = Counter(n.labels["alibaba.com/gpu-model"] for n in inst.nodes)
    assert models["G2"] == 549 and models["T4"] == 387 + 17
    assert {h.tier_name for h in inst.hypernodes} == {"rack", "pool", "cluster"}
    for rack in (h for h in inst.hypernodes if h.tier == 1):
        model = {n.split("-")[0] for n in (m.selector.exact_match for m in rack.members)}
        assert len(model) == 1 and len(rack.members) <= 32
    assert abs(pending(inst) / capacity(inst) - 0.5) <= 0.5 * 0.03 + 1e-9
    sizes = {t.replicas for j in inst.jobs for t in j.tasks}
    assert sizes <= {1, 2, 4, 8, 16, 32, 64} and len(sizes) > 3
    compile_problem(inst)


def test_alibaba_samples_a_given_node_count_with_occupancy():
    inst = generate("alibaba", nodes=100, occupancy=0.4, load=0.3, seed=5)
    assert len(inst.nodes) == 100
    assert 0.4 <= len(busy_nodes(inst)) / 100
    problem = compile_problem(inst)
    assert (problem.used <= problem.allocatable).all()


def test_alibaba_without_its_data_is_an_input_error(monkeypatch, tmp_path):
    from toposolve.generate import alibaba

    monkeypatch.setattr(alibaba, "DATA_DIR", tmp_path)
    alibaba.trace_nodes.cache_clear()
    try:
        with pytest.raises(InputError) as info:
            generate("alibaba", nodes=10)
        assert info.value.file == str(tmp_path / "openb_gpu_nodes.csv")
    finally:
        alibaba.trace_nodes.cache_clear()


def test_usecase_gpu_is_one_3000_pod_job_hard_at_tier_2():
    inst = generate("usecase-gpu")
    assert len(inst.nodes) == 4096 and tier_counts(inst) == {1: 128, 2: 1}
    (job,) = inst.jobs
    assert job.replicas == 3000 and job.min_available == 3000
    assert job.tasks[0].requests[GPU] == 8000
    assert (job.network_topology.mode, job.network_topology.highest_tier_allowed) == ("hard", 2)
    compile_problem(inst)


def test_usecase_npu_partitions_within_hccs_domains():
    inst = generate("usecase-npu")
    # 125 partitions of 24, two per 48-node HCCS domain → 63 domains + 1 spare = 64 → 3,072 nodes
    assert len(inst.nodes) == 3072 and tier_counts(inst) == {1: 64, 2: 4, 3: 1}
    assert {h.tier_name for h in inst.hypernodes} == {"hccs", "roce", "vpc"}
    (job,) = inst.jobs
    task = job.tasks[0]
    assert (task.replicas, task.requests[NPU]) == (3000, 16000)
    assert (task.partition.total_partitions, task.partition.partition_size) == (125, 24)
    assert task.partition.network_topology.highest_tier_allowed == 1
    assert (job.network_topology.mode, job.network_topology.highest_tier_allowed) == ("hard", 3)
    problem = compile_problem(inst)
    assert len(problem.subjobs) == 125
    soft = generate("usecase-npu", job_mode="soft", pods=96, nodes=96)
    assert soft.jobs[0].network_topology.mode == "soft" and len(soft.nodes) == 96


@pytest.mark.parametrize(
    ("preset", "options", "field"),
    [
        ("superpod", {"colour": 1}, "colour"),
        ("superpod", {"occupancy": 1.5}, "occupancy"),
        ("superpod", {"fanout": "2,x"}, "fanout"),
        ("superpod", {"nodes": 0}, "nodes"),
        ("fattree", {"depth": 1}, None),
        ("usecase-npu", {"pods": 100}, None),
        ("nope", {}, None),
    ],
)
def test_bad_options_are_input_errors(preset, options, field):
    with pytest.raises(InputError) as info:
        generate(preset, **options)
    assert info.value.obj == f"preset/{preset}"
    assert info.value.field == field


def test_options_accept_command_line_spellings():
    doc = generate_document("superpod", nodes=64, fanout="2", leaf_size=16)
    assert [lv["tier"] for lv in doc["topology"]["levels"]] == [3, 2, 1]


# -- bundled instances ------------------------------------------------------------------------


def test_default_instance_loads_compiles_and_has_what_the_demo_needs():
    inst = load_instance(INSTANCES / "default.yaml")
    assert 256 <= len(inst.nodes) <= 512
    assert max(h.tier for h in inst.hypernodes) == 4
    waiting = pending_jobs(inst)
    assert 25 <= len(waiting) <= 40
    assert busy_nodes(inst)
    assert any(j.network_topology and j.network_topology.mode == "hard" for j in waiting)
    assert any(j.network_topology and j.network_topology.mode == "soft" for j in waiting)
    assert any(t.partition for j in waiting for t in j.tasks)
    assert len({j.priority_class for j in waiting}) >= 2
    compile_problem(inst)
    assert len((INSTANCES / "default.yaml").read_text().splitlines()) < 150


def test_superpod_1k_instance():
    inst = load_instance(INSTANCES / "superpod-1k.yaml")
    assert len(inst.nodes) == 1024
    assert len(inst.jobs) == 60
    assert math.isclose(pending(inst) / capacity(inst), 0.9, rel_tol=0.03)
    compile_problem(inst)


def test_nvl72_tier0_racks_number_tiers_from_zero():
    inst = generate("nvl72", nodes=150, seed=1, tier0_racks=True)
    assert tier_counts(inst) == {0: 9, 1: 2, 2: 1}
    limits = {j.network_topology.highest_tier_allowed for j in inst.jobs if j.network_topology}
    assert limits <= {0, 1, 2} and 0 in limits
    assert compile_problem(inst).topology.min_tier == 0


def test_meta_roce_is_racks_of_two_hosts_in_ai_zones():
    inst = generate("meta-roce", load=0.5, seed=1)
    # 3,072 nodes / 2 per rack = 1,536 racks; 128 racks per AI zone = 12 zones; one cluster top
    assert len(inst.nodes) == 3072
    assert tier_counts(inst) == {1: 1536, 2: 12, 3: 1}
    racks = [h for h in inst.hypernodes if h.tier == 1]
    assert all(len(h.members) == 2 for h in racks)
    assert capacity(inst) == 24_576
    assert 0.45 * 24_576 <= pending(inst) <= 0.55 * 24_576 + 8 * 512


def test_nvl72_spine_groups_reach_100k_gpus():
    inst = generate("nvl72", nodes=25_002, load=0.1, seed=0, leaves_per_spine=16)
    # 25,002 trays = 1,389 racks of 18; 8 racks per leaf: 174 leaves; 16 leaves per spine: 11; a
    # core
    assert capacity(inst) == 100_008
    assert tier_counts(inst) == {1: 1389, 2: 174, 3: 11, 4: 1}
