"""Where pods may go: classes of identical nodes, tier levels, candidate HyperNodes per job.

Rules and rationale: ``docs/cpsat-formulation.md``, section
``toposolve.engines.cpsat.model.classes``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.common.capacity import fit_in


@dataclass(frozen=True)
class Scope:
    """What to model: the full problem by default; the reason finder narrows it."""

    jobs: tuple[int, ...] | None = None  # None: every job with pending pods
    used: np.ndarray | None = None  # [N, R] used resources instead of problem.used
    queue_used_extra: dict[str, np.ndarray] = field(default_factory=dict)
    ignore_limits: bool = False  # drop every hard limit (jobs and SubJobs)
    ignore_job_limits: bool = False  # drop only the jobs' own hard limits
    ignore_subjob_limits: bool = False  # drop only the SubJobs' hard limits
    ignore_queue: bool = False
    objective: bool = True  # build spread/fragmentation variables
    split_nodes: frozenset[int] = frozenset()
    # coarse model: nodes are grouped by their level-`aggregate_level` domain instead of their
    # home, and everything below that level is relaxed (see the module docstring)
    aggregate_level: int = 0
    # extra class key per node (eviction: the evictable pods it runs, see :mod:`.eviction`):
    # nodes with different keys are never identical
    node_keys: dict[int, tuple] = field(default_factory=dict)
    # exact aggregation of whole-node pods above the leaves (:mod:`.lift`); ignored in a coarse
    # model and with eviction keys
    lift: bool = False


@dataclass
class Levels:
    tiers: np.ndarray  # [L] ascending, root's tier last
    # [L, H] member of D_l holding HyperNode h (itself or an ancestor), -1 if none
    domain: np.ndarray
    _members: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def root_level(self) -> int:
        return len(self.tiers) - 1

    def level_of_limit(self, tier: int) -> int:
        """Highest level whose tier is ≤ ``tier`` (-1 if none: nothing is allowed)."""
        return int(np.searchsorted(self.tiers, tier, side="right")) - 1

    def members(self, level: int) -> np.ndarray:
        cached = self._members.get(level)
        if cached is None:  # the repacking asks once per unit placed
            cached = self._members[level] = np.unique(self.domain[level][self.domain[level] >= 0])
        return cached


_LEVELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def build_levels(problem: Problem) -> Levels:
    """Levels of the problem's tree (cached per topology: the reason finder builds many models)."""
    cached = _LEVELS.get(problem.topology)
    if cached is None:
        cached = _LEVELS[problem.topology] = _compute_levels(problem)
    return cached


def _compute_levels(problem: Problem) -> Levels:
    topo = problem.topology
    tiers = np.unique(topo.tier)
    domain = np.full((len(tiers), len(topo.names)), -1, dtype=np.int64)
    for h in range(len(topo.names)):
        chain = topo.ancestors(h)  # lowest first, tiers strictly increasing
        for lvl, t in enumerate(tiers.tolist()):
            best = -1
            for a in chain:
                if topo.tier[a] > t:
                    break
                best = a
            domain[lvl, h] = best
    return Levels(tiers=tiers, domain=domain)


@dataclass
class NodeClasses:
    nodes: list[np.ndarray]  # class -> node indices, ascending
    home: np.ndarray  # [C] home HyperNode
    idle: np.ndarray  # [C, R] idle of one node of the class (clamped at 0)
    twins: list[list[int]]  # classes split from one class of identical nodes
    # per base class, its key less the home
    keys: list[tuple] = field(default_factory=list, repr=False)
    # lifted classes (:mod:`.lift`) follow the base ones: their level and base classes
    base_count: int = -1  # -1: every class is a base class
    level: np.ndarray | None = None  # [C]
    members: list[np.ndarray] = field(default_factory=list)  # per lifted class, its base classes
    one_node_leaves: np.ndarray | None = None  # [C] lifted class of idle one-node leaves
    # level -> [C_base] class holding each base class
    of_base: dict[int, np.ndarray] = field(default_factory=dict)
    # domain class -> its domains' nodes
    domains: dict[int, list[np.ndarray]] = field(default_factory=dict)

    @cached_property
    def size(self) -> np.ndarray:  # nodes are never reassigned after the classes are built
        return np.array([len(n) for n in self.nodes], dtype=np.int64)

    @property
    def n_base(self) -> int:
        return len(self.nodes) if self.base_count < 0 else self.base_count

    def base_of(self, c: int) -> list[int]:
        """The base classes making up class ``c`` (itself when it is one)."""
        return [c] if c < self.n_base else self.members[c - self.n_base].tolist()

    def __len__(self) -> int:
        return len(self.nodes)


def class_homes(problem: Problem, levels: Levels, aggregate_level: int) -> np.ndarray:
    """[N] the HyperNode a node's class belongs to: its home, or its level-``aggregate_level``
    domain in a coarse model (the home when that is already higher)."""
    home = problem.topology.node_home
    if aggregate_level <= 0:
        return home
    lifted = levels.domain[aggregate_level][home]
    return np.where(lifted >= 0, lifted, home)


def build_classes(problem: Problem, idle: np.ndarray, feasible: np.ndarray, split: frozenset[int],
                  homes: np.ndarray, node_keys: dict[int, tuple] | None = None) -> NodeClasses:
    """Group usable nodes (some modelled group may use them) into classes of identical nodes."""
    usable = feasible.any(axis=0) if feasible.size else np.zeros(problem.n_nodes, dtype=bool)
    keys: dict[tuple, int] = {}
    nodes: list[list[int]] = []
    rest: list[tuple] = []  # per class, its key less the home (split nodes: their own)
    split_of: dict[tuple, list[int]] = {}
    node_keys = node_keys or {}
    for n in np.flatnonzero(usable).tolist():
        key = (int(homes[n]), idle[n].tobytes(), np.packbits(feasible[:, n]).tobytes(),
               node_keys.get(n))
        if n in split:
            nodes.append([n])
            rest.append(("split", n))
            split_of.setdefault(key, []).append(len(nodes) - 1)
            continue
        c = keys.get(key)
        if c is None:
            keys[key] = c = len(nodes)
            nodes.append([])
            rest.append(key[1:])
        nodes[c].append(n)
    arrays = [np.array(ns, dtype=np.int64) for ns in nodes]
    first = np.array([ns[0] for ns in nodes], dtype=np.int64)
    R = idle.shape[1]
    return NodeClasses(
        nodes=arrays,
        home=homes[first] if len(first) else np.zeros(0, dtype=np.int64),
        idle=idle[first] if len(first) else np.zeros((0, R), dtype=np.int64),
        twins=[cs for cs in split_of.values() if len(cs) > 1],
        keys=rest,
    )


def pods_that_fit(request: np.ndarray, idle: np.ndarray) -> np.ndarray:
    """[C] pods of one request that fit on one node of each class."""
    return fit_in(idle, request)


@dataclass
class Unit:
    """A job or a SubJob as the model sees it: its groups and where it may be."""

    groups: list[int]  # pending groups (every one of its groups, for the running side)
    running: int  # running pods
    minimum: int  # gang size (minAvailable / subGroupSize)
    running_nodes: list[int]
    hard_level: int | None = None  # level of its own hard limit; None: none
    hard_domains: list[int] = field(default_factory=list)  # candidates at hard_level
    # lowest level at which its pods are surely under one domain (own or its job's hard limit)
    contained_level: int | None = None
    # level -> candidate domains, for levels below the hard level and the root (spread)
    spread_domains: dict[int, list[int]] = field(default_factory=dict)
    # at most one pod in all, inside a domain of every level: no domain choice (:mod:`.lift`)
    trivial: bool = False
    # a hard limit in a constraint tree (a Topology crossing the main tree): per allowed class
    # (index), its domain of that tree at the limit (:mod:`.crossing`); None: no such limit
    crossing: dict[int, int] | None = None


@dataclass
class Candidates:
    scope: Scope
    levels: Levels
    classes: NodeClasses
    class_domain: np.ndarray  # [L, C]
    idle: np.ndarray  # [N, R] idle under the scope's used resources
    jobs: list[int]  # modelled jobs (pending pods, some allowed class)
    job_units: dict[int, Unit]
    subjob_units: dict[int, Unit]  # policy SubJobs of modelled jobs
    allowed: dict[int, np.ndarray]  # group -> allowed classes
    ub: dict[int, np.ndarray]  # group -> per allowed class upper bound of new pods
    fit: dict[int, np.ndarray]  # group -> pods per node of each allowed class
    unplaceable: dict[int, str] = field(default_factory=dict)  # job -> structural reason
    # lifted group -> its level (:mod:`.lift`)
    lift_level: dict[int, int] = field(default_factory=dict)
    exclusive: frozenset[int] = frozenset()  # groups whose pods hold a node alone (lifted model)
    # GangNodes of modelled jobs (gang_tree.py)
    gang_units: dict[int, Unit] = field(default_factory=dict)


def running_nodes(problem: Problem, groups: list[int]) -> list[int]:
    """Nodes holding running pods of ``groups``, sorted."""
    return sorted({n for g in groups for n, c in problem.group_running[g].items() if c > 0})
