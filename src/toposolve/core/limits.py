"""Documented size limits: input beyond them is rejected with one line, before any work.

Real clusters are far inside every limit (Kubernetes supports 5,000 nodes per cluster, the
largest run to tens of thousands; Volcano's HyperNode tiers go to 5 or so). The limits exist so
that a typo or a hostile file (``replicas: 99999999999``, a node group of a billion, a 1 GB name,
a YAML alias bomb) fails in well under a second instead of exhausting memory or time.
"""

from __future__ import annotations

MAX_NODES = 200_000
"""Nodes per instance (all node groups, all manifests, every generator)."""

MAX_PODS = 2_000_000
"""Pods per instance (running and pending, all jobs)."""

MAX_PODS_PER_JOB = 200_000
"""Pods (replicas over all tasks) of one job."""

MAX_HYPERNODES = 500_000
"""HyperNodes per instance."""

MAX_TIER = 100
"""Highest HyperNode tier (Volcano's CRD only says >= 0; the tree arrays are sized by tier)."""

MAX_NAME_LENGTH = 253
"""Longest object name, as Kubernetes (a DNS subdomain); also every name a pattern makes."""

MAX_QUANTITY = 10**15
"""Largest resource amount in Kubernetes units (10^15 cores, or about 909 TiB of memory)."""

MAX_BYTES = (2**63 - 1) // 1000
"""Largest amount of a memory-like resource, in bytes (about 8 PiB: its milli-units fit int64)."""

MAX_INTEGER = 2**63 - 1
"""Largest integer field (Go's int64; what Kubernetes' API server takes)."""

MAX_YAML_NODES = 20_000_000
"""YAML nodes one input file may expand to, aliases expanded."""

MAX_ALIAS_EXPANSION = 1_000_000
"""YAML nodes that aliases may add to a file beyond the nodes it writes out."""

MAX_WORKERS = 1024
"""Most CP-SAT search workers (``--workers``); also most sweep worker processes."""

MAX_TIME_LIMIT = 7 * 24 * 3600.0
"""Longest time limit, seconds (``--time-limit``)."""

MAX_SEED = 2**31 - 1
"""Largest random seed (CP-SAT's ``random_seed`` is an int32)."""


def time_limit_problem(value: object) -> str | None:
    """Why ``value`` is no time limit (seconds, finite, in ``(0, MAX_TIME_LIMIT]``), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"expected a number of seconds, got {value!r}"
    if not 0 < value <= MAX_TIME_LIMIT:  # also false for nan
        return f"expected seconds in (0, {MAX_TIME_LIMIT:g}], got {value!r}"
    return None


def count_problem(value: object, low: int, high: int) -> str | None:
    """Why ``value`` is not an integer in ``[low, high]``, or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"expected an integer, got {value!r}"
    if not low <= value <= high:
        return f"expected an integer in [{low}, {high:,}], got {value:,}"
    return None

UNLIMITED = 1 << 40
"""Stands for "no limit": a pod count or amount no real input reaches (a node without a pod
limit, the pods of a request of nothing fit on a node). Sums over ``MAX_NODES`` nodes of values
clipped at it stay within int64 (:func:`toposolve.core.topology.subtree_sums`)."""

MAX_PLAN_BYTES = 1 << 30
"""Largest plan file, bytes (1 GiB; ``MAX_PODS`` bindings and as many jobs take ~0.3 GiB)."""

MAX_PLAN_NESTING = 64
"""Deepest nesting of lists and mappings in a plan's free-form ``metrics`` and ``stats``."""

MAX_TRACE_JOBS = 250_000
"""Jobs of one workload trace (lines of a CSV trace, openb pods, inflated copies, ``jobs=``)."""

MAX_CSV_CELL = 131_072
"""Longest cell of a CSV trace, characters (the ``csv`` module's default field limit)."""

MAX_TRACE_LOAD = 10.0
"""Largest trace load, in multiples of the cluster's GPUs (openb ``inflate``, ``load=``)."""

MAX_GANG_DEPTH = 64
"""Levels of sub-gangs nested in one job: GangGroups in the model, KAI SubGroups in a PodGroup."""

MAX_SCENARIOS = 10_000
"""Scenarios of one sweep (the product of the grid's list lengths, counted before expanding)."""

RAY_CONNECT_TIMEOUT = 30.0
"""Seconds a sweep waits for a Ray cluster's address to answer (``--ray HOST:PORT``)."""
