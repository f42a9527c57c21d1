"""``replay --fail-rate``: failures drawn from the seed, a failure repaired in place (the job
keeps running, no lost work), one that cannot be (the job is evicted whole), one-line errors."""

from __future__ import annotations

import heapq
import json

import pytest

from toposolve.core.errors import InputError
from toposolve.formats.trace.native import load_trace_documents
from toposolve.generate import generate
from toposolve.sim.replay import Replay, ReplayOptions, replay
from toposolve.sim.replay.engine import cycle_solver
from toposolve.sim.replay.failures import FailureClock, FailurePolicy, parse_failure_policy

GANG = "default/gang"


@pytest.fixture(scope="module")
def cluster():
    # 8 nodes of 8 GPUs, 2 leaves of 4 nodes
    return generate("superpod", nodes=8, load=0.0, seed=0, leaf_size=4, fanout=(2,))


def leaf_job(name, pods, duration):
    return {"name": name, "arrival": 0, "duration": duration,
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
            "tasks": [{"name": "w", "replicas": pods, "requests": {"nvidia.com/gpu": 8}}]}


def gang_trace(pods, *, filler=False):
    """One gang of ``pods`` 8-GPU pods, hard-limited to one leaf, running 10 h; with
    ``filler``, a 20-h job fills the other leaf."""
    jobs = [leaf_job("gang", pods, "10h")]
    if filler:
        jobs.append(leaf_job("filler", 4, "20h"))
    return load_trace_documents([{"apiVersion": "toposolve/v1", "kind": "Trace",
                                  "jobs": jobs}], "t")


def replay_with_one_failure(cluster, trace, repair, restart="keep"):
    """The replay in which the node of the gang's first pod fails at 1 h (and stays down)."""
    solve = cycle_solver("volcano", None, time_limit=None, seed=0, evict=None)
    probe = Replay(cluster, trace, solve, ReplayOptions(cycle=60, until=600))
    probe.run()
    node = int(probe.by_key[GANG].bound_nodes()[0])
    policy = FailurePolicy(rate=0.0, repair=repair, down=86400.0, restart=restart)
    rp = Replay(cluster, trace, solve, ReplayOptions(cycle=60, failures=policy))
    heapq.heappush(rp.clock.events, (3600.0, 1, node))
    return rp.run(), node, rp


def test_failure_in_a_leaf_with_a_spare_is_repaired_in_place(cluster):
    record, node, rp = replay_with_one_failure(cluster, gang_trace(3), "defrag")
    row = {j["job"]: j for j in record.jobs}[GANG]
    assert record.failures[0]["repaired"] == [GANG] and record.failures[0]["evicted"] == []
    assert row["starts"] == 1 and row["lost_gpu_seconds"] == 0  # it kept running
    assert row["end"] == pytest.approx(10 * 3600 + 60, abs=60)  # no restart
    assert record.summary["failure_jobs_repaired"] == 1
    assert record.summary["failure_jobs_evicted"] == 0


def test_a_gang_with_no_spare_anywhere_is_evicted_whole(cluster):
    record, node, rp = replay_with_one_failure(cluster, gang_trace(4, filler=True), "defrag")
    row = {j["job"]: j for j in record.jobs}[GANG]
    assert record.failures[0]["evicted"] == [GANG] and record.failures[0]["repaired"] == []
    assert "no spare" in record.failures[0]["unrepaired"][GANG]
    # an hour of 32 GPUs lost; it restarts when the filler's leaf is free
    assert row["lost_gpu_seconds"] == pytest.approx(3600 * 32, rel=0.05)
    assert row["starts"] == 2 and row["status"] == "done"
    assert record.summary["failure_lost_gpu_hours"] == pytest.approx(32, rel=0.05)


def test_a_repaired_job_loses_the_run_since_its_last_checkpoint(cluster):
    record, _, _ = replay_with_one_failure(cluster, gang_trace(3), "defrag", "checkpoint:25m")
    row = {j["job"]: j for j in record.jobs}[GANG]
    failure = record.failures[0]
    assert failure["repaired"] == [GANG]
    progress = failure["t"] - row["start"]  # about an hour: checkpoints at 25 and 50 min
    kept = 2 * 1500
    assert 0 < progress - kept < 1500
    assert row["lost_gpu_seconds"] == pytest.approx((progress - kept) * 24)
    assert failure["lost_gpu_seconds"] == failure["repair_lost_gpu_seconds"] == pytest.approx(
        row["lost_gpu_seconds"])
    assert row["starts"] == 2 and row["end"] == pytest.approx(failure["t"] + 10 * 3600 - kept)
    assert record.summary["failure_lost_gpu_hours"] == pytest.approx(
        row["lost_gpu_seconds"] / 3600)
    assert record.summary["failure_lost_gpu_hours_repairs"] == pytest.approx(
        row["lost_gpu_seconds"] / 3600)


def test_an_evicted_job_resumes_from_its_last_checkpoint(cluster):
    whole, _, _ = replay_with_one_failure(cluster, gang_trace(4, filler=True), "defrag")
    record, _, _ = replay_with_one_failure(cluster, gang_trace(4, filler=True), "defrag",
                                           "checkpoint:25m")
    rows = [{j["job"]: j for j in r.jobs}[GANG] for r in (whole, record)]
    failure = record.failures[0]
    assert failure["evicted"] == [GANG] and failure["repair_lost_gpu_seconds"] == 0
    progress, kept = failure["t"] - rows[1]["start"], 2 * 1500
    assert rows[1]["lost_gpu_seconds"] == pytest.approx((progress - kept) * 32)
    assert rows[1]["lost_gpu_seconds"] < rows[0]["lost_gpu_seconds"]  # not all of it
    # it waits for the filler's leaf (20 h) as before, then runs only what the checkpoint lacks
    assert rows[1]["starts"] == rows[0]["starts"] == 2
    assert rows[1]["end"] == pytest.approx(rows[0]["end"] - kept)


def test_checkpoint_saves_lengthen_the_run_and_the_checkpoint_period(cluster):
    record, _, _ = replay_with_one_failure(cluster, gang_trace(3), "defrag",
                                           "checkpoint:25m:save=1m")
    row = {j["job"]: j for j in record.jobs}[GANG]
    failure = record.failures[0]
    assert failure["repaired"] == [GANG]
    # a checkpoint is complete every 26 min of run: at 26 and 52 min of the ~1 h run
    progress, kept = failure["t"] - row["start"], 2 * 1560
    assert 0 < progress - kept < 1560
    assert row["lost_gpu_seconds"] == pytest.approx((progress - kept) * 24)
    # 10 h of work plus 23 one-minute saves, less the run kept
    assert row["end"] == pytest.approx(failure["t"] + 36000 + 23 * 60 - kept)


def test_a_job_restored_from_a_checkpoint_spends_the_restore_time_first(cluster):
    record, _, _ = replay_with_one_failure(cluster, gang_trace(3), "defrag",
                                           "checkpoint:25m:restore=5m")
    row = {j["job"]: j for j in record.jobs}[GANG]
    failure = record.failures[0]
    progress, kept = failure["t"] - row["start"], 2 * 1500
    assert row["lost_gpu_seconds"] == pytest.approx((progress - kept) * 24)
    assert row["end"] == pytest.approx(failure["t"] + 300 + 36000 - kept)


def test_zero_checkpoint_costs_change_nothing(cluster):
    def digest(restart):
        record = replay(cluster, gang_trace(4, filler=True), "volcano", cycle=60, seed=3,
                        failures=f"6,down=2h,restart={restart}",
                        defrag=f"every=1,restart={restart}")
        for row in record.failures:
            row.pop("seconds")
        return json.dumps([record.jobs, record.failures, record.timeline], sort_keys=True)

    plain = digest("checkpoint:30m")
    assert json.loads(plain)[1]  # failures happened
    assert digest("checkpoint:30m:save=0:restore=0") == plain
    assert digest("checkpoint:30m:save=1m:restore=5m") != plain


def test_restart_lose_restarts_a_repaired_job_from_scratch(cluster):
    record, _, _ = replay_with_one_failure(cluster, gang_trace(3), "defrag", "lose")
    row = {j["job"]: j for j in record.jobs}[GANG]
    failure = record.failures[0]
    assert failure["repaired"] == [GANG] and row["starts"] == 2
    assert row["lost_gpu_seconds"] == pytest.approx((failure["t"] - row["start"]) * 24)
    assert row["end"] == pytest.approx(failure["t"] + 10 * 3600)


def test_repair_evict_evicts_even_a_repairable_gang(cluster):
    record, _, _ = replay_with_one_failure(cluster, gang_trace(3), "evict")
    assert record.failures[0]["evicted"] == [GANG]
    assert {j["job"]: j for j in record.jobs}[GANG]["starts"] == 2


def test_failures_are_drawn_from_the_seed():
    def draws(seed):
        clock = FailureClock(50, FailurePolicy(rate=2.0, down=600), seed)
        return [clock.due(t)[0] for t in range(3600, 5 * 86400, 3600)]
    assert draws(1) == draws(1)
    assert draws(1) != draws(2)
    total = sum(len(f) for f in draws(1))
    assert 0.5 * 50 * 2 * 5 < total < 1.5 * 50 * 2 * 5  # about R per node per day


def rack_gangs_trace():
    """Twelve rack-hard 2-pod gangs of 8 GPUs each, one every 10 minutes, 3 hours long."""
    return load_trace_documents([{
        "apiVersion": "toposolve/v1", "kind": "Trace",
        "jobs": [{"name": "j-{i}", "count": 12, "arrival": 0, "every": 600, "duration": "3h",
                  "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                  "tasks": [{"name": "w", "replicas": 2, "requests": {"nvidia.com/gpu": 8}}]}],
    }], "t")


def test_replay_with_failures_is_deterministic(cluster):
    trace = rack_gangs_trace()
    runs = [replay(cluster, trace, "volcano", cycle=60, seed=3, failures="4,down=1h")
            for _ in range(2)]
    assert runs[0].failures == [{**r, "seconds": f["seconds"]} for r, f in
                                zip(runs[1].failures, runs[0].failures, strict=True)]
    assert runs[0].summary["node_failures"] > 0
    assert runs[0].jobs == runs[1].jobs


@pytest.mark.parametrize("text, words", [
    ("x", "the rate must be a number"), ("1,repair=maybe", "repair must be one of"),
    ("1,down=0", "down must be positive"), ("1,down=soon", "down must be positive"),
    ("1,speed=2", "unknown option 'speed'"), ("1,down=1,down=2", "down given twice"),
    ("1,down", "expected NAME=VALUE"), ("-1", "the rate must be a number"),
    ("1,restart=sometimes", "restart must be one of lose, keep, checkpoint:INTERVAL"),
    ("1,restart=checkpoint:0", "needs a positive interval"),
    ("1,restart=checkpoint:soon", "needs a positive interval"),
])
def test_bad_fail_rate_is_one_line(text, words):
    with pytest.raises(InputError) as err:
        parse_failure_policy(text)
    message = str(err.value)
    assert words in message and "--fail-rate" in message and "\n" not in message


def test_failure_units_by_scope(cluster):
    from toposolve.core.topology import build_topology
    from toposolve.sim.replay.failures import failure_units

    topo = build_topology(cluster.nodes, cluster.hypernodes)
    assert failure_units(topo, "node") == [[n] for n in range(8)]
    leaves = failure_units(topo, "1")
    assert sorted(map(sorted, leaves)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    name = next(k for k, v in topo.tier_name_to_tier.items() if v == 1)
    assert failure_units(topo, name) == leaves
    with pytest.raises(InputError) as err:
        failure_units(topo, "7")
    assert "scope must be node or a HyperNode tier" in str(err.value)
    assert "\n" not in str(err.value) and err.value.field == "--fail-rate"


def test_a_rack_failure_takes_its_nodes_down_together(cluster):
    """scope=1: the gang's whole leaf fails at once; no spare is left in it, so defrag moves
    the gang whole to the other (idle) leaf, where it keeps running."""
    solve = cycle_solver("volcano", None, time_limit=None, seed=0, evict=None)
    policy = parse_failure_policy("0,down=1d,scope=1")
    assert policy.scope == "1"
    probe = Replay(cluster, gang_trace(3), solve, ReplayOptions(cycle=60, until=600))
    probe.run()
    node = int(probe.by_key[GANG].bound_nodes()[0])
    rp = Replay(cluster, gang_trace(3), solve, ReplayOptions(cycle=60, failures=policy))
    leaf = next(u for u, nodes in enumerate(rp.clock.units) if node in nodes)
    heapq.heappush(rp.clock.events, (3600.0, 1, leaf))
    record = rp.run()
    row = record.failures[0]
    assert sorted(row["failed"]) == sorted(cluster.nodes[n].name for n in rp.clock.units[leaf])
    assert len(row["failed"]) == 4 and record.summary["node_failures"] == 4
    assert row["hit"] == row["repaired"] == [GANG] and row["evicted"] == []
    assert {j["job"]: j for j in record.jobs}[GANG]["starts"] == 1


def test_rack_failures_are_drawn_per_rack(cluster):
    from toposolve.core.topology import build_topology
    from toposolve.sim.replay.failures import failure_units

    units = failure_units(build_topology(cluster.nodes, cluster.hypernodes), "1")
    clock = FailureClock(units, FailurePolicy(rate=3.0, down=600, scope="1"), 5)
    draws = [clock.due(t)[0] for t in range(600, 20 * 86400, 600)]
    assert sum(map(len, draws)) > 0
    assert all(sorted(f) in ([0, 1, 2, 3], [4, 5, 6, 7], list(range(8))) for f in draws if f)


def topology_of(cluster):
    from toposolve.core.topology import build_topology

    return build_topology(cluster.nodes, cluster.hypernodes)


def test_two_scopes_fail_independently_at_the_rate_each(cluster):
    from collections import Counter

    from toposolve.sim.replay.failures import failure_clock

    policy = parse_failure_policy("2,down=10m,scope=node+1")
    assert policy.scopes == ("node", "1")
    clock = failure_clock(topology_of(cluster), policy, 5)
    counts, nodes = Counter(), 0
    for t in range(600, 30 * 86400, 600):
        failed, _ = clock.due(t)
        counts.update(clock.failed_units)
        nodes += len(failed)
    # 8 nodes and 2 leaves, each failing about twice a day for 30 days
    assert 0.7 * 8 * 60 < counts["node"] < 1.3 * 8 * 60
    assert 0.6 * 2 * 60 < counts["1"] < 1.4 * 2 * 60
    assert counts["node"] + counts["1"] < nodes  # a leaf takes 4 nodes down at once
    # the first scope draws what it would draw alone; the second its own process
    alone = failure_clock(topology_of(cluster), parse_failure_policy("2,scope=node"), 5)
    both = failure_clock(topology_of(cluster), policy, 5)
    assert sorted(e for e in both.events if e[2] < 8) == sorted(alone.events)
    assert len(both.events) == 10


def test_a_node_is_down_while_any_unit_holding_it_is(cluster):
    from toposolve.sim.replay.failures import failure_clock

    clock = failure_clock(topology_of(cluster), parse_failure_policy("0,down=600,scope=node+1"),
                          0)
    leaf = next(u for u, nodes in enumerate(clock.units) if len(nodes) == 4 and 0 in nodes)
    heapq.heappush(clock.events, (100.0, 1, leaf))
    heapq.heappush(clock.events, (150.0, 1, 0))  # node 0 fails alone while its leaf is down
    failed, _ = clock.due(200)
    assert failed == sorted(clock.units[leaf]) and dict(clock.failed_units) == {"1": 1}
    clock.due(720)  # the leaf is back at 700, node 0 only at 750
    assert clock.down == {0}
    clock.due(760)
    assert clock.down == set()


def test_replay_with_two_scopes_is_deterministic_and_counts_each(cluster):
    trace = rack_gangs_trace()
    runs = [replay(cluster, trace, "volcano", cycle=60, seed=3,
                   failures="3,down=1h,scope=node+1,restart=checkpoint:30m") for _ in range(2)]
    for r in runs:
        for row in r.failures:
            row.pop("seconds")
    assert runs[0].failures == runs[1].failures and runs[0].jobs == runs[1].jobs
    s = runs[0].summary
    assert s["unit_failures_by_scope"] == {
        scope: sum(row["scopes"].get(scope, 0) for row in runs[0].failures)
        for scope in ("node", "1")}
    assert all(v > 0 for v in s["unit_failures_by_scope"].values())


@pytest.mark.parametrize("scope, words", [
    ("node+node", "scope must name each failure scope once"),
    ("node+", "scope must name each failure scope once"),
    ("node+9", "scope must be node or a HyperNode tier"),
    ("1+LEAF", "scope names the same failure units twice"),
])
def test_bad_scopes_are_one_line(cluster, scope, words):
    from toposolve.sim.replay.failures import failure_clock

    topo = topology_of(cluster)
    scope = scope.replace("LEAF", next(k for k, v in topo.tier_name_to_tier.items() if v == 1))
    with pytest.raises(InputError) as err:
        failure_clock(topo, parse_failure_policy(f"1,scope={scope}"), 0)
    assert words in str(err.value) and "\n" not in str(err.value)
    assert err.value.field == "--fail-rate"


def test_each_scope_fails_at_its_own_rate(cluster):
    from collections import Counter

    from toposolve.sim.replay.failures import failure_clock

    policy = parse_failure_policy("1,down=10m,scope=node:4+1")
    assert policy.scopes == ("node", "1") and policy.scope_rates == (4.0, 1.0)
    clock = failure_clock(topology_of(cluster), policy, 5)
    counts = Counter()
    for t in range(600, 30 * 86400, 600):
        clock.due(t)
        counts.update(clock.failed_units)
    # 8 nodes about 4 times a day, 2 leaves about once a day (R), for 30 days
    assert 0.7 * 8 * 120 < counts["node"] < 1.3 * 8 * 120
    assert 0.5 * 2 * 30 < counts["1"] < 1.5 * 2 * 30
    # a scope at rate 0 never fails; the other still does
    quiet = failure_clock(topology_of(cluster), parse_failure_policy("2,scope=node:0+1"), 5)
    assert quiet.events and all(quiet.process[u] == 1 for _, _, u in quiet.events)


def test_scope_rates_equal_to_r_draw_exactly_what_r_draws(cluster):
    """Determinism: no per-scope rate keeps the draws of before (the first scope's from
    ``seed`` at R, re-derived here), and ``:RATE`` equal to R changes nothing."""
    import numpy as np

    from toposolve.sim.replay.failures import DAY, failure_clock

    plain = failure_clock(topology_of(cluster), parse_failure_policy("2,scope=node+1"), 7)
    same = failure_clock(topology_of(cluster), parse_failure_policy("2,scope=node:2+1:2.0"), 7)
    assert sorted(plain.events) == sorted(same.events)
    rng = np.random.default_rng(7)
    assert sorted(e for e in plain.events if e[2] < 8) == sorted(
        (float(rng.exponential(DAY / 2)), 1, n) for n in range(8))
    for t in range(3600, 10 * 86400, 3600):
        assert plain.due(t) == same.due(t) and plain.failed_units == same.failed_units


def test_a_seeded_replay_is_unchanged_by_rates_equal_to_r(cluster):
    trace = rack_gangs_trace()
    runs = [replay(cluster, trace, "volcano", cycle=60, seed=3,
                   failures=f"3,down=1h,scope={scope}") for scope in ("node+1", "node:3+1:3")]
    for r in runs:
        for row in r.failures:
            row.pop("seconds")
    assert runs[0].failures and runs[0].failures == runs[1].failures
    assert runs[0].jobs == runs[1].jobs


@pytest.mark.parametrize("scope, words", [
    ("node:x", "the rate of scope 'node' must be a number ≥ 0, not 'x'"),
    ("node+1:-1", "the rate of scope '1' must be a number ≥ 0, not '-1'"),
    ("node:", "the rate of scope 'node' must be a number ≥ 0, not ''"),
    ("node:inf", "the rate of scope 'node' must be a number ≥ 0, not 'inf'"),
    (":2", "scope must name each failure scope once"),
    ("node:1+node:2", "scope must name each failure scope once"),
])
def test_bad_scope_rates_are_one_line(scope, words):
    with pytest.raises(InputError) as err:
        parse_failure_policy(f"1,scope={scope}")
    assert words in str(err.value) and "\n" not in str(err.value)
    assert err.value.field == "--fail-rate"
