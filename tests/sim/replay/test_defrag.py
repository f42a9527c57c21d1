"""``replay --defrag``: a gang blocked by fragmentation starts earlier, moves are recorded and
checked, restart=lose counts lost work, restart=keep keeps progress, bad policies are one line."""

from __future__ import annotations

import numpy as np
import pytest

from toposolve.check.checker import check_plan
from toposolve.core.errors import InputError
from toposolve.formats.trace.native import load_trace_documents
from toposolve.generate import generate
from toposolve.sim.replay import Replay, ReplayOptions, replay
from toposolve.sim.replay import loop as replay_loop
from toposolve.sim.replay.defrag import DefragPolicy, parse_defrag_policy
from toposolve.sim.replay.engine import cycle_solver

TARGET = "default/target"
PRIORITIES = [{"name": "high", "value": 1000}, {"name": "low", "value": 10}]


@pytest.fixture(scope="module")
def cluster():
    # 32 nodes of 8 GPUs, 4 leaves of 8 nodes under 2 spines
    return generate("superpod", nodes=32, load=0.0, seed=0, leaf_size=8, fanout=(2,))


def job(name, pods, gpus, *, arrival=0, every=0, count=1, duration, tier=None, priority="low"):
    entry = {"name": name, "count": count, "arrival": arrival, "every": every,
             "duration": duration, "priorityClass": priority,
             "tasks": [{"name": "w", "replicas": pods, "requests": {"nvidia.com/gpu": gpus}}]}
    if tier is not None:
        entry["networkTopology"] = {"mode": "hard", "highestTierAllowed": tier}
    return entry


def fragmenting_trace():
    """32 one-pod jobs of 5 GPUs fill the 32 nodes (one each: two do not fit on a node), long
    and short ones alternating; when the short ones end, every leaf has long jobs on some of its
    nodes, so the 8-node gang hard-limited to one leaf (arriving at 6 min) is blocked by
    fragmentation only until the long jobs end, 10 h in, unless some move."""
    return load_trace_documents([{
        "apiVersion": "toposolve/v1", "kind": "Trace", "priorityClasses": PRIORITIES,
        "jobs": [job("long-{i}", 1, 5, count=16, every=2, duration="10h"),
                 job("short-{i}", 1, 5, arrival=1, count=16, every=2, duration="5m"),
                 job("target", 8, 8, arrival="6m", tier=1, duration="1h", priority="high")],
    }], "t")


def checked_replay(cluster, trace, policy, monkeypatch):
    """The replay with every engine plan and every defrag plan checked from outside."""
    checks = []
    solve = cycle_solver("volcano", None, time_limit=None, seed=0, evict=None)

    def engine(problem):
        plan = solve(problem)
        checks.append(check_plan(problem.instance, plan, eviction_mode="none"))
        return plan

    def defrag_checked(policy, instance, targets, seed):
        plan = run_defrag(policy, instance, targets, seed)
        checks.append(check_plan(instance, plan, eviction_mode="none"))
        return plan

    run_defrag = replay_loop.run_defrag
    monkeypatch.setattr(replay_loop, "run_defrag", defrag_checked)
    options = ReplayOptions(cycle=10, defrag=policy)
    record = Replay(cluster, trace, engine, options).run()
    return record, checks


def test_defrag_admits_the_blocked_gang_at_once_and_records_the_moves(cluster, monkeypatch):
    trace = fragmenting_trace()
    plain = replay(cluster, trace, "volcano", cycle=10)
    record, checks = checked_replay(cluster, trace, parse_defrag_policy("every=1"), monkeypatch)
    waits = [{j["job"]: j for j in r.jobs}[TARGET]["wait"] for r in (plain, record)]
    assert waits[1] < waits[0]  # blocked for hours without defrag
    assert all(v == [] for v in checks) and len(checks) > record.summary["cycles"]
    calls = [c["defrag"] for c in record.cycles if "defrag" in c]
    assert calls and TARGET in calls[-1]["admitted"] and calls[-1]["moved_jobs"]
    s = record.summary
    assert s["moved_jobs"] == sum(len(c["moved_jobs"]) for c in calls) > 0
    assert s["moved_pods"] == sum(c["moved_pods"] for c in calls)
    assert s["moves_per_day"] == pytest.approx(s["moved_jobs"] / (s["end_time"] / 86400))
    assert plain.summary["moved_jobs"] == 0 and plain.summary["defrag_calls"] == 0


def test_a_moved_job_restarts_and_its_run_is_lost_work(cluster):
    record = replay(cluster, fragmenting_trace(), "volcano", cycle=10, defrag="every=1")
    moved = [j for j in record.jobs if j["moves"]]
    call = next(c for c in record.cycles if "defrag" in c)
    assert sorted(j["job"] for j in moved) == sorted(call["defrag"]["moved_jobs"])
    for row in moved:  # 5 GPUs each, started by 30 s, moved at the defrag cycle
        assert row["starts"] == 2
        assert row["move_lost_gpu_seconds"] == pytest.approx((call["t"] - row["start"]) * 5)
        assert row["end"] == pytest.approx(call["t"] + 10 * 3600)  # the whole run again
    assert record.summary["lost_gpu_hours_moves"] > 0
    assert record.summary["lost_gpu_hours_moves"] == pytest.approx(
        sum(j["move_lost_gpu_seconds"] for j in moved) / 3600)
    assert record.summary["lost_gpu_hours"] == record.summary["lost_gpu_hours_moves"]


def test_a_moved_job_loses_the_run_since_its_last_checkpoint(cluster):
    lose = replay(cluster, fragmenting_trace(), "volcano", cycle=10, defrag="every=1")
    record = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                    defrag="every=1,restart=checkpoint:2m")
    moved = [j for j in record.jobs if j["moves"]]
    call = next(c for c in record.cycles if "defrag" in c)
    assert moved and sorted(j["job"] for j in moved) == sorted(call["defrag"]["moved_jobs"])
    for row in moved:  # checkpoints every 2 min of run time from the job's start
        progress = call["t"] - row["start"]
        kept = progress // 120 * 120
        assert row["starts"] == 2 and kept > 0
        assert row["move_lost_gpu_seconds"] == pytest.approx((progress - kept) * 5)
        assert row["end"] == pytest.approx(call["t"] + 10 * 3600 - kept)
    s, before = record.summary, lose.summary
    assert s["lost_gpu_hours"] == s["lost_gpu_hours_moves"] > 0
    assert s["lost_gpu_hours_moves"] < before["lost_gpu_hours_moves"]


def test_checkpoint_move_cost_counts_the_run_since_the_last_checkpoint():
    policy = parse_defrag_policy("every=1,restart=checkpoint:30m")
    assert policy.rule.interval == 1800
    # 100 min on 8 GPUs: 10 min since the checkpoint at 90 min, 1.33 GPU-hours lost
    assert policy.move_cost(2, 6000, 8) == 2 + 2
    assert policy.move_cost(2, 5400, 8) == 2  # a checkpoint right now: nothing lost
    assert parse_defrag_policy("every=1").move_cost(2, 6000, 8) == 2 + 14
    pinned = parse_defrag_policy("every=1,restart=checkpoint:30m,max-lost=1")
    assert pinned.move_cost(2, 6000, 8) is None and pinned.move_cost(2, 5700, 8) == 2 + 1


def test_restart_keep_keeps_the_moved_jobs_progress(cluster):
    record = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                    defrag="every=1,restart=keep")
    moved = [j for j in record.jobs if j["moves"]]
    assert moved and record.summary["lost_gpu_hours"] == 0
    assert all(j["starts"] == 1 and j["end"] == j["start"] + 10 * 3600 for j in moved)
    assert {j["job"]: j for j in record.jobs}[TARGET]["wait"] == 0


def test_max_lost_keeps_jobs_that_would_lose_more_in_place(cluster):
    # every long job has run about 6 minutes × 5 GPUs (0.5 GPU-hour) when the target arrives
    record = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                    defrag="every=1,max-lost=0.1")
    plain = replay(cluster, fragmenting_trace(), "volcano", cycle=10)
    assert record.summary["moved_jobs"] == 0 and record.summary["defrag_calls"] > 0
    assert [j["start"] for j in record.jobs] == [j["start"] for j in plain.jobs]


def test_greedy_defrag_and_the_same_record_twice(cluster):
    runs = [replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                   defrag="every=1,engine=greedy,max-moves=4") for _ in range(2)]
    for r in runs:
        for c in r.cycles:
            c.pop("seconds"), c.pop("engine_seconds"), c.get("defrag", {}).pop("seconds", None)
    assert runs[0].cycles == runs[1].cycles and runs[0].jobs == runs[1].jobs
    assert 0 < runs[0].summary["moved_jobs"] <= 4


def test_policy_parsing():
    assert parse_defrag_policy("every=3, max-moves=2 ,engine=greedy,targets=2") == DefragPolicy(
        every=3, max_moves=2, engine="greedy", targets=2)
    policy = parse_defrag_policy("every=1,restart=keep,time-limit=0.5,cost=pods,max-lost=8,"
                                 "wall-factor=30")
    assert (policy.restart, policy.time_limit, policy.cost, policy.max_lost,
            policy.wall_factor) == ("keep", 0.5, "pods", 8.0, 30.0)


def test_a_policy_object_is_checked_too():
    with pytest.raises(InputError, match="every and targets must be ≥ 1"):
        DefragPolicy(every=0)


@pytest.mark.parametrize("text, words", [
    ("", "expected NAME=VALUE"),
    ("max-moves=2", "every=N is required"),
    ("every=0", "every must be an integer ≥ 1"),
    ("every=1,every=2", "every given twice"),
    ("every=1,engine=volcano", "engine must be one of cpsat, greedy"),
    ("every=1,restart=maybe", "restart must be one of lose, keep"),
    ("every=1,restart=checkpoint", "restart must be one of lose, keep, checkpoint:INTERVAL"),
    ("every=1,restart=checkpoint:-5m", "needs a positive interval"),
    ("every=1,restart=checkpoint:0", "needs a positive interval"),
    ("every=1,often=2", "unknown option 'often'"),
    ("every=1,time-limit=x", "time-limit must be seconds"),
    ("every=1,max-lost=-1", "max-lost must be GPU-hours"),
    ("every=1,max-moves=1.5", "max-moves must be an integer ≥ 0"),
    ("every=1,wall-factor=0.5", "wall-factor must be a number ≥ 1"),
])
def test_bad_policies_are_one_line(text, words):
    with pytest.raises(InputError) as err:
        parse_defrag_policy(text)
    assert words in str(err.value) and "\n" not in str(err.value)
    assert err.value.field == "--defrag"


def test_the_policy_reaches_defrag_and_a_bad_wall_factor_is_refused(cluster, monkeypatch):
    from toposolve.defrag import defrag
    from toposolve.sim.replay import defrag as replay_defrag

    seen = []
    monkeypatch.setattr(replay_defrag, "defrag",
                        lambda *args, **kw: seen.append(kw) or defrag(*args, **kw))
    replay(cluster, fragmenting_trace(), "volcano", cycle=10,
           defrag="every=1,max-moves=6,time-limit=1,wall-factor=20")
    assert seen and all(kw["wall_factor"] == 20 and kw["max_moves"] == 6
                        and kw["time_limit"] == 1 and kw["engine"] == "cpsat" for kw in seen)
    with pytest.raises(InputError, match="wall_factor: must be at least 1"):
        defrag(cluster, ["default/none"], wall_factor=0.5)


def tree_trace():
    """:func:`fragmenting_trace` with the target as a gang tree: two GangGroups of three 2-pod
    SubGroups each, every GangGroup hard within one leaf (6 of its 8 nodes, where the long jobs
    leave 4 idle), the job within one spine."""
    from tests.builders import hard, nested
    from toposolve.formats.trace.model import Trace, TraceJob

    base = fragmenting_trace()
    tree = nested("target", {"g0": ["a", "b", "c"], "g1": ["d", "e", "f"]}, group_topology=hard(1),
                  job_topology=hard(2), pods=2, gpus=8)
    tree = tree.model_copy(update={"priority_class": "high"})
    jobs = [tj for tj in base.jobs if tj.key != TARGET]
    return Trace([*jobs, TraceJob(tree, 360.0, 3600.0)], base.source, base.queues,
                 base.priority_classes).sorted()


def test_a_gang_tree_blocked_by_fragmentation_is_a_target_too(cluster, monkeypatch):
    trace = tree_trace()
    assert {j.key: j for j in (tj.job for tj in trace.jobs)}[TARGET].gang_groups
    plain = replay(cluster, trace, "volcano", cycle=10)
    record, checks = checked_replay(cluster, trace, parse_defrag_policy("every=1,restart=keep"),
                                    monkeypatch)
    assert all(v == [] for v in checks)
    calls = [c["defrag"] for c in record.cycles if "defrag" in c]
    assert any(TARGET in c["targets"] for c in calls)
    assert TARGET in calls[-1]["admitted"] and calls[-1]["moved_jobs"]
    waits = [{j["job"]: j for j in r.jobs}[TARGET]["wait"] for r in (plain, record)]
    # the mirror's two-level stand-in wants all 12 pods in one 8-node leaf: never placed
    assert waits[0] is None and waits[1] < 3600


def test_horizon_skips_a_target_the_projected_departures_would_start(cluster):
    """The long jobs end 10 h in: with an 11-h horizon the projected cycle starts the target
    without moves, so no defrag call is made; with a 1-h horizon it is admitted at once."""
    plain = replay(cluster, fragmenting_trace(), "volcano", cycle=10)
    far = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                 defrag="every=1,restart=keep,horizon=11h")
    near = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                  defrag="every=1,restart=keep,horizon=1h")
    assert far.summary["defrag_calls"] == 0 and far.jobs == plain.jobs
    waits = [{j["job"]: j for j in r.jobs}[TARGET]["wait"] for r in (plain, near)]
    assert near.summary["defrag_admitted"] == 1 and waits[1] < 3600 < waits[0]


def test_max_cost_per_gpu_rejects_a_dear_plan(cluster):
    # the 64-GPU target needs some 1-pod jobs moved (move cost ≥ 1 each with restart=keep)
    cheap = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                   defrag="every=1,restart=keep,max-cost-per-gpu=1")
    dear = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                  defrag="every=1,restart=keep,max-cost-per-gpu=0.01")
    call = next(c["defrag"] for c in cheap.cycles if "defrag" in c)
    assert call["admitted"] == [TARGET] and 0 < call["move_cost"] <= 64
    rejected = [c["defrag"] for c in dear.cycles if "defrag" in c]
    assert rejected and all(d["rejected"]["accelerators"] == 64 and d["moved_jobs"] == []
                            and d["rejected"]["move_cost"] > 0.01 * 64 for d in rejected)
    assert dear.summary["moved_jobs"] == dear.summary["defrag_admitted"] == 0
    assert {j["job"]: j for j in dear.jobs}[TARGET]["wait"] > 3600


def test_named_policy_and_new_options_parse():
    assert parse_defrag_policy("waiting") == parse_defrag_policy(
        "every=1,restart=keep,horizon=1h")
    policy = parse_defrag_policy("every=2,horizon=30m,max-cost-per-gpu=0.5")
    assert (policy.every, policy.horizon, policy.max_cost_per_gpu) == (2, 1800.0, 0.5)
    for text, words in (("every=1,horizon=soon", "horizon must be seconds"),
                        ("every=1,max-cost-per-gpu=-1", "max-cost-per-gpu must be a number"),
                        ("wanting", "expected NAME=VALUE")):
        with pytest.raises(InputError, match=words):
            parse_defrag_policy(text)


def _decisions(record):
    """What a replay decided: job rows and each defrag call, timings left out."""
    calls = [{k: v for k, v in c["defrag"].items() if k != "seconds"}
             for c in record.cycles if "defrag" in c]
    return record.jobs, calls


def test_region_lists_fewer_jobs_and_decides_the_same(cluster, monkeypatch):
    seen = []
    run_defrag = replay_loop.run_defrag

    def counting(policy, instance, targets, seed):
        seen.append(len(instance.jobs))
        return run_defrag(policy, instance, targets, seed)

    monkeypatch.setattr(replay_loop, "run_defrag", counting)
    full = replay(cluster, fragmenting_trace(), "volcano", cycle=10, defrag="every=1")
    listed_full = list(seen)
    seen.clear()
    every = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                   defrag="every=1,region=all")
    assert _decisions(every) == _decisions(full) and full.summary["defrag_admitted"] == 1
    seen.clear()
    near = replay(cluster, fragmenting_trace(), "volcano", cycle=10, defrag="every=1,region=1")
    # one leaf's 4 long jobs and the usage pods instead of all 16 running jobs
    assert seen and listed_full and max(seen) < min(listed_full)
    # every leaf ties (4 one-pod jobs to move): the same cost, the first leaf's jobs
    calls = [_decisions(r)[1] for r in (full, near)]
    assert [[(c["admitted"], c["move_cost"]) for c in call] for call in calls] == [
        [([TARGET], 8)]] * 2


def test_region_skips_a_target_no_move_can_admit(cluster):
    # max-lost=0.1 pins every long job (4 in each leaf): no leaf can hold the 8-node target
    pinned = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                    defrag="every=1,max-lost=0.1")
    skipped = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                     defrag="every=1,max-lost=0.1,region=all")
    assert pinned.summary["defrag_calls"] > 0 and pinned.summary["defrag_admitted"] == 0
    assert skipped.summary["defrag_calls"] == 0 and skipped.jobs == pinned.jobs


def vain_trace():
    """32 one-pod jobs of 5 GPUs fill the 32 nodes for 10 h; the 8-node target (hard within one
    leaf) is blocked by fragmentation only, and no move admits it (a moved job fits nowhere).
    Big jobs too large for the idle total arrive every 30 min (cycles that change no node); a
    1-GPU job arrives at 1 h 10 min and runs 5 min (a pod arrives on a node, then leaves)."""
    return load_trace_documents([{
        "apiVersion": "toposolve/v1", "kind": "Trace", "priorityClasses": PRIORITIES,
        "jobs": [job("long-{i}", 1, 5, count=32, duration="10h"),
                 job("target", 8, 8, arrival="6m", tier=1, duration="1h", priority="high"),
                 job("big-{i}", 40, 8, arrival="30m", every="30m", count=4, duration="1h"),
                 job("tiny", 1, 1, arrival="70m", duration="5m")],
    }], "t")


def test_retry_changed_skips_a_vain_target_until_a_pod_changes_near_it(cluster):
    always = replay(cluster, vain_trace(), "volcano", cycle=10, defrag="every=1,restart=keep")
    changed = replay(cluster, vain_trace(), "volcano", cycle=10,
                     defrag="every=1,restart=keep,retry=changed")
    calls = [[c["t"] for c in r.cycles if "defrag" in c] for r in (always, changed)]
    skipped = [c["t"] for c in changed.cycles if "defrag_skipped" in c]
    assert always.summary["defrag_admitted"] == 0 and calls[0][0] == 360
    # offered at 6 min, again when the tiny job starts (70 min) and ends (75 min);
    # skipped when only big jobs arrived, and in the cycle after the tiny job started (at 10 h
    # the long jobs end: the engine starts it)
    assert calls[1] == [360, 4200, 4500]
    assert skipped == [1800, 3600, 4210, 5400, 7200]
    assert sorted(calls[1] + skipped) == calls[0]
    assert changed.summary["defrag_calls_skipped"] == 5
    assert changed.jobs == always.jobs  # the same outcome
    assert all(c["defrag_skipped"] == [TARGET] for c in changed.cycles if "defrag_skipped" in c)


def test_vain_targets_are_forgotten_when_their_nodes_change():
    from toposolve.sim.replay.vain import VainTargets

    vain = VainTargets(6)
    region = np.array([True, True, False, False, False, False])
    vain.touch([3, -1])
    vain.remember("a", region)
    assert vain.unchanged("a") and not vain.unchanged("b")
    vain.touch([4, 5])  # elsewhere
    assert vain.unchanged("a")
    vain.touch([1])
    assert not vain.unchanged("a") and not vain.unchanged("a")  # forgotten
    with pytest.raises(InputError, match="retry must be one of always, changed"):
        parse_defrag_policy("every=1,retry=sometimes")


def head_and_target_trace():
    """On the 32 nodes, each leaf holds two 10-h, two 40-min and four 5-min one-pod jobs. At
    6 min a 24-pod high-priority ``head`` (any nodes) waits for the 40-min jobs (16 nodes are
    idle, 24 will be); a leaf-hard 8-pod low-priority 10-h target is blocked by fragmentation
    only. Admitting it by moves takes 8 of the 24 nodes the head needs at 40 min."""
    return load_trace_documents([{
        "apiVersion": "toposolve/v1", "kind": "Trace", "priorityClasses": PRIORITIES,
        "jobs": [job("long-{i}", 1, 5, count=8, every=4, duration="10h"),
                 job("short-{i}", 1, 5, arrival=1, count=16, every=2, duration="5m"),
                 job("medium-{i}", 1, 5, arrival=2, count=8, every=4, duration="40m"),
                 job("head", 24, 8, arrival="6m", duration="1h", priority="high"),
                 job("target", 8, 8, arrival="6m", tier=1, duration="10h")],
    }], "t")


@pytest.mark.parametrize("reserve", ["head", "ahead"])
def test_reserve_rejects_an_admission_that_delays_the_head(cluster, reserve):
    waits = {}
    for policy in ("every=1,restart=keep", f"every=1,restart=keep,reserve={reserve}"):
        record = replay(cluster, head_and_target_trace(), "volcano", cycle=10, defrag=policy)
        waits[policy] = {j["job"]: j["wait"] for j in record.jobs}
        calls = [c["defrag"] for c in record.cycles if "defrag" in c]
    free, reserved = waits.values()
    # without the rule the target jumps the queue at once and the head waits for the 10-h jobs
    assert free[TARGET] == 0 and free["default/head"] > 9 * 3600
    # with it the head starts when the last 40-min job ends (it arrived at 30 s): its
    # projected start
    assert reserved["default/head"] == 2430 - 360 and reserved[TARGET] > 0
    first = calls[0]
    assert first["admitted"] == [] and first["moved_jobs"] == []
    assert first["rejected"] == {"delays": {"default/head": 2430.0}}


def test_gain_offers_only_a_target_that_would_wait_long_enough(cluster):
    """The 1-h target would wait ~10 h for the long jobs: ten times its run time."""
    worth = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                   defrag="every=1,restart=keep,gain=1")
    not_worth = replay(cluster, fragmenting_trace(), "volcano", cycle=10,
                       defrag="every=1,restart=keep,gain=20")
    plain = replay(cluster, fragmenting_trace(), "volcano", cycle=10)
    assert worth.summary["defrag_admitted"] == 1
    assert {j["job"]: j for j in worth.jobs}[TARGET]["wait"] < 3600
    assert not_worth.summary["defrag_calls"] == 0 and not_worth.jobs == plain.jobs


def test_reserve_gain_and_jump_parse():
    policy = parse_defrag_policy("every=1,reserve=ahead,gain=0.5")
    assert (policy.reserve, policy.gain) == ("ahead", 0.5)
    assert parse_defrag_policy("every=1").reserve == "none"
    assert parse_defrag_policy("every=1").jump and not parse_defrag_policy("every=1,jump=no").jump
    for text, words in (("every=1,reserve=tail", "reserve must be one of none, head, ahead"),
                        ("every=1,gain=-1", "gain must be a number ≥ 0"),
                        ("every=1,jump=maybe", "jump must be one of yes, no")):
        with pytest.raises(InputError, match=words):
            parse_defrag_policy(text)


def test_jump_no_offers_no_job_behind_one_the_horizon_expects_to_start(cluster, monkeypatch):
    """The projection (stubbed) starts the high-priority target within the horizon: with
    jump=yes the low-priority gang behind it is offered instead, with jump=no nobody is."""
    trace = fragmenting_trace()
    documents = [{"apiVersion": "toposolve/v1", "kind": "Trace", "priorityClasses": PRIORITIES,
                  "jobs": [job("behind", 8, 8, arrival="6m", tier=1, duration="1h")]}]
    trace.jobs.extend(load_trace_documents(documents, "t").jobs)
    trace.jobs.sort(key=lambda tj: tj.arrival)
    monkeypatch.setattr(replay_loop.Replay, "_projected_starts",
                        lambda self, until, t: {TARGET})
    offered = {}
    for jump in ("yes", "no"):
        record = replay(cluster, trace, "volcano", cycle=10,
                        defrag=f"every=1,restart=keep,horizon=1h,jump={jump}")
        start = {j["job"]: j for j in record.jobs}[TARGET]["start"]
        # the targets offered while the target waited
        offered[jump] = {k for c in record.cycles if "defrag" in c and c["t"] < start
                         for k in c["defrag"]["targets"]}
    assert offered == {"yes": {"default/behind"}, "no": set()}
