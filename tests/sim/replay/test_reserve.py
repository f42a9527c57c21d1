"""``reserve=head|ahead``: which queued jobs an admission by defrag must not delay."""

from __future__ import annotations

from types import SimpleNamespace

from toposolve.sim.replay.reserve import queued_ahead


def run(key, index, bound=0):
    return SimpleNamespace(key=key, index=index, bound_count=lambda: bound)


def test_jobs_ahead_in_queue_order_by_priority_then_arrival():
    problem = SimpleNamespace(jobs=[SimpleNamespace(key=k, priority=p) for k, p in (
        ("a", 10), ("b", 100), ("c", 100), ("d", 1000), ("e", 10), ("f", 100))])
    # d (1000) first, then b, c, f (100) by arrival, then a, e (10)
    pending = [run("a", 0), run("b", 1), run("c", 2), run("d", 3), run("e", 4),
               run("f", 5, bound=1)]
    assert queued_ahead(problem, pending, {"c"}, "ahead") == ["d", "b"]
    assert queued_ahead(problem, pending, {"c"}, "head") == ["d"]
    assert queued_ahead(problem, pending, {"c"}, "none") == []
    # f has a pod bound (it runs in part): not waiting for room; e is behind c
    assert queued_ahead(problem, pending, {"e"}, "ahead") == ["d", "b", "c", "a"]
    assert queued_ahead(problem, pending, {"d"}, "ahead") == []  # the head itself
