"""Hypothesis strategies: small, valid, self-consistent instances built with the pydantic model.

What :func:`instances` draws (rules chosen so the input is consistent, as a real cluster is):

* 2–24 nodes ``n0…`` with 0/4/8 GPUs, 8–32 cores, 64/256 Gi memory, label ``zone`` a|b; some
  declare a ``pods`` limit, some are unschedulable, some carry a NoSchedule/NoExecute taint
  ``dedicated=infer`` (or a PreferNoSchedule one, which predicates ignore).
* A HyperNode forest of 1–4 real tiers (tier numbers 1..k, sometimes with gaps), built bottom up
  with fan-out 1–4 per HyperNode; sometimes a node or two belongs to no HyperNode; sometimes
  every HyperNode carries a ``tierName``; leaf members are ``exactMatch`` names, sometimes one
  anchored ``regexMatch``.
* 1–8 jobs of five kinds: ``plain`` (no topology), ``hard`` (``highestTierAllowed`` drawn from
  0 to root tier + 1, so sometimes unreachable; or a known ``highestTierName``), ``soft``,
  ``partitioned`` (a Volcano Job task with ``partitionPolicy`` and the subGroupPolicy the job
  controller derives from it, as in ``builders.partitioned``) and ``multitask`` (ps + worker
  with per-task ``minAvailable``). minAvailable is 1..replicas (rarely 0 for plain jobs).
* Running pods: some jobs have some pods already running, each on a node that still has room
  for it (resources and ``pods``), so no node starts over its allocatable.
* Priority classes ``high``/``low`` (sometimes one is the global default); queues ``default``
  and ``batch`` with priority, reclaimable flag, sometimes a capability that is at least what
  their running pods already use, and sometimes an explicit cpu ``deserved`` share.
* nodeSelector ``zone``, toleration of the ``dedicated`` taint, and a required node-affinity
  term, each sometimes.

Requests never list a resource with amount 0 (readers do not keep such entries either).
"""

from __future__ import annotations

from builders import example1, gang, hard, in_queue, partitioned
from hypothesis import strategies as st

from toposolve.core.instance import (
    HyperNode,
    Instance,
    Job,
    LabelRequirement,
    LabelSelector,
    Member,
    MemberSelector,
    NetworkTopology,
    Node,
    PodConstraints,
    PriorityClass,
    Queue,
    SubGroupPolicy,
    Taint,
    Task,
    Toleration,
)
from toposolve.core.quantity import MilliUnits

GPU = "nvidia.com/gpu"
GI = 1024**3  # one Gi of memory in bytes (the model takes whole units)
CORE = 1
TIER_NAMES = ("rack", "spine", "pod", "zone", "region")
DEDICATED = "dedicated"


# ---------------------------------------------------------------- nodes


@st.composite
def node_shapes(draw, index: int) -> Node:
    allocatable = {
        "cpu": draw(st.sampled_from([8, 16, 32])) * CORE,
        "memory": draw(st.sampled_from([64, 256])) * GI,
    }
    gpus = draw(st.sampled_from([0, 4, 8, 8]))
    if gpus:
        allocatable[GPU] = gpus
    if draw(st.integers(0, 4)) == 0:
        allocatable["pods"] = draw(st.integers(1, 6))
    taints: list[Taint] = []
    roll = draw(st.integers(0, 9))
    if roll == 0:
        taints.append(
            Taint(
                key=DEDICATED,
                value="infer",
                effect=draw(st.sampled_from(["NoSchedule", "NoExecute"])),
            )
        )
    elif roll == 1:
        taints.append(Taint(key="spot", effect="PreferNoSchedule"))
    return Node(
        name=f"n{index}",
        labels={"zone": draw(st.sampled_from(["a", "b"]))},
        allocatable=allocatable,
        unschedulable=draw(st.integers(0, 9)) == 0,
        taints=taints,
    )


# ---------------------------------------------------------------- HyperNode tree


def _chunks(draw, items: list[str]) -> list[list[str]]:
    """Split ``items`` (in order) into consecutive runs of 1–4."""
    out: list[list[str]] = []
    i = 0
    while i < len(items):
        size = draw(st.integers(1, 4))
        out.append(items[i : i + size])
        i += size
    return out


def _node_members(draw, names: list[str]) -> list[Member]:
    if len(names) > 1 and draw(st.integers(0, 4)) == 0:
        # one anchored RE2 pattern naming exactly these nodes
        pattern = "^(" + "|".join(names) + ")$"
        return [Member(type="Node", selector=MemberSelector(regex_match=pattern))]
    return [Member.exact(n) for n in names]


@st.composite
def hypernode_trees(draw, node_names: list[str]) -> list[HyperNode]:
    """A forest of HyperNodes over ``node_names`` (see the module doc)."""
    levels = draw(st.integers(1, 4))
    if draw(st.integers(0, 3)) == 0:
        tiers = sorted(draw(st.sets(st.integers(1, 5), min_size=levels, max_size=levels)))
    else:
        tiers = list(range(1, levels + 1))
    named = draw(st.booleans())
    covered = list(node_names)
    if len(covered) > 2 and draw(st.integers(0, 3)) == 0:
        outside = draw(st.sets(st.sampled_from(covered), min_size=1, max_size=2))
        covered = [n for n in covered if n not in outside]

    hypernodes: list[HyperNode] = []
    below: list[str] = []
    for level, tier in enumerate(tiers):
        tier_name = TIER_NAMES[tier - 1] if named else None
        created: list[str] = []
        groups = _chunks(draw, covered if level == 0 else below)
        for k, group in enumerate(groups):
            name = f"t{tier}-{k}"
            if level == 0:
                members = _node_members(draw, group)
            else:
                members = [
                    Member.exact(c, "HyperNode") for c in group
                ]
            hypernodes.append(HyperNode(name=name, tier=tier, tier_name=tier_name, members=members))
            created.append(name)
        below = created
    return hypernodes


# ---------------------------------------------------------------- jobs


def _requests(draw, *, gpu_choices=(0, 1, 2, 4, 8)) -> dict[str, int]:
    requests = {"cpu": draw(st.integers(1, 8)) * CORE}
    gpus = draw(st.sampled_from(gpu_choices))
    if gpus:
        requests[GPU] = gpus
    if draw(st.booleans()):
        requests["memory"] = draw(st.sampled_from([4, 16, 64])) * GI
    return requests


def _constraints(draw) -> PodConstraints:
    node_selector = (
        {"zone": draw(st.sampled_from(["a", "b"]))} if draw(st.integers(0, 5)) == 0 else {}
    )
    tolerations: list[Toleration] = []
    roll = draw(st.integers(0, 5))
    if roll == 0:
        tolerations.append(Toleration(key=DEDICATED, operator="Exists"))
    elif roll == 1:
        tolerations.append(
            Toleration(key=DEDICATED, operator="Equal", value="infer", effect="NoSchedule")
        )
    terms: list[list[LabelRequirement]] = []
    if draw(st.integers(0, 7)) == 0:
        terms.append(
            [
                LabelRequirement(
                    key="zone", operator="In", values=[draw(st.sampled_from(["a", "b"]))]
                )
            ]
        )
    return PodConstraints(
        node_selector=node_selector, affinity_terms=terms, tolerations=tolerations
    )


def _topology(
    draw, root_tier: int, tier_names: dict[int, str], *, allow_none: bool = True
) -> NetworkTopology | None:
    kind = draw(
        st.sampled_from(["none", "hard", "hard", "soft"] if allow_none else ["hard", "soft"])
    )
    if kind == "none":
        return None
    if kind == "soft":
        return NetworkTopology(mode="soft")
    if tier_names and draw(st.integers(0, 3)) == 0:
        return NetworkTopology(
            mode="hard", highest_tier_name=draw(st.sampled_from(sorted(tier_names.values())))
        )
    return NetworkTopology(mode="hard", highest_tier_allowed=draw(st.integers(0, root_tier + 1)))


def _plain_or_topology_job(draw, name: str, topology: NetworkTopology | None) -> Job:
    replicas = draw(st.integers(1, 6))
    low = 0 if topology is None and draw(st.integers(0, 9)) == 0 else 1
    return Job(
        name=name,
        min_available=draw(st.integers(low, replicas)),
        network_topology=topology,
        tasks=[
            Task(
                name="worker",
                replicas=replicas,
                requests=_requests(draw),
                constraints=_constraints(draw),
            )
        ],
    )


def _partitioned_job(draw, name: str, root_tier: int, tier_names: dict[int, str]) -> Job:
    partitions = draw(st.integers(1, 3))
    size = draw(st.integers(1, 3))
    min_partitions = draw(st.integers(0, partitions))
    part_topology = _topology(draw, root_tier, tier_names)
    job_topology = _topology(draw, root_tier, tier_names)
    replicas = partitions * size
    default_min = min_partitions * size if min_partitions else replicas
    min_available = draw(
        st.sampled_from([default_min, draw(st.integers(max(1, min_partitions * size), replicas))])
    )
    return partitioned(
        name,
        partitions=partitions,
        size=size,
        job_topology=job_topology,
        partition_topology=part_topology,
        min_available=min_available,
        min_partitions=min_partitions,
        requests=_requests(draw),
        constraints=_constraints(draw),
    )


def _multitask_job(draw, name: str, root_tier: int, tier_names: dict[int, str]) -> Job:
    ps_replicas = draw(st.integers(1, 2))
    worker_replicas = draw(st.integers(1, 4))
    ps_min = draw(st.one_of(st.none(), st.integers(0, ps_replicas)))
    worker_min = draw(st.one_of(st.none(), st.integers(0, worker_replicas)))
    replicas = ps_replicas + worker_replicas
    floor = max(1, (ps_min or 0) + (worker_min or 0))
    min_available = (
        draw(st.integers(1, replicas))
        if draw(st.integers(0, 4)) == 0
        else draw(st.integers(floor, replicas))
    )
    return Job(
        name=name,
        min_available=min_available,
        network_topology=_topology(draw, root_tier, tier_names),
        tasks=[
            Task(
                name="ps",
                replicas=ps_replicas,
                min_available=ps_min,
                requests=_requests(draw, gpu_choices=(0,)),
                constraints=_constraints(draw),
            ),
            Task(
                name="worker",
                replicas=worker_replicas,
                min_available=worker_min,
                requests=_requests(draw),
                constraints=_constraints(draw),
            ),
        ],
    )


def _podgroup_job(draw, name: str, root_tier: int, tier_names: dict[int, str]) -> Job:
    """A PodGroup with its pods (seed 000's subGroupPolicy form): an optional ``leader`` role
    whose pods match no policy (the job's own SubJob), and ``worker`` pods labelled
    ``sg=<i // size>`` that a policy with ``matchLabelKeys: [sg]`` splits into SubJobs.
    Written the way the manifest reader reads it back: explicit pod names, per-task
    ``min_available`` only as ``min_task_member``, labels all pods of a task share in
    ``Task.labels`` and the others in ``Task.pod_labels``."""
    leaders = draw(st.integers(0, 2))
    workers = draw(st.integers(1, 6))
    size = draw(st.integers(1, 3))
    tasks: list[Task] = []
    if leaders:
        tasks.append(
            Task(
                name="leader",
                replicas=leaders,
                requests=_requests(draw, gpu_choices=(0,)),
                pod_names=[f"{name}-leader-{i}" for i in range(leaders)],
            )
        )
    worker_labels = {i: {"app": name, "sg": str(i // size)} for i in range(workers)}
    shared = {
        k: v
        for k, v in worker_labels[0].items()
        if all(lab.get(k) == v for lab in worker_labels.values())
    }
    per_pod = {
        i: {k: v for k, v in lab.items() if k not in shared} for i, lab in worker_labels.items()
    }
    tasks.append(
        Task(
            name="worker",
            replicas=workers,
            requests=_requests(draw),
            constraints=_constraints(draw),
            labels=shared,
            pod_labels={i: lab for i, lab in per_pod.items() if lab},
            pod_names=[f"{name}-w{i}" for i in range(workers)],
        )
    )
    subgroups = -(-workers // size)
    policy = SubGroupPolicy(
        name="sg",
        sub_group_size=draw(st.sampled_from([size, None])) if size == 1 else size,
        label_selector=draw(
            st.sampled_from(
                [
                    LabelSelector(match_labels={"app": name}),
                    LabelSelector(
                        match_expressions=[LabelRequirement(key="sg", operator="Exists")]
                    ),
                ]
            )
        ),
        match_label_keys=["sg"],
        network_topology=_topology(draw, root_tier, tier_names),
        min_sub_groups=draw(st.integers(0, subgroups)),
    )
    replicas = leaders + workers
    min_task_member = {"leader": leaders} if leaders and draw(st.booleans()) else {}
    floor = max(1, sum(min_task_member.values()))
    return Job(
        name=name,
        min_available=draw(st.integers(floor, replicas)),
        network_topology=_topology(draw, root_tier, tier_names),
        tasks=tasks,
        subgroup_policies=[policy],
        min_task_member=min_task_member,
    )


@st.composite
def jobs_for(draw, root_tier: int, tier_names: dict[int, str]) -> list[Job]:
    jobs: list[Job] = []
    for k in range(draw(st.integers(1, 8))):
        kind = draw(
            st.sampled_from(
                ["plain", "hard", "hard", "soft", "partitioned", "multitask", "podgroup"]
            )
        )
        name = f"j{k}"
        if kind == "plain":
            job = _plain_or_topology_job(draw, name, None)
        elif kind == "hard":
            job = _plain_or_topology_job(
                draw, name, _topology(draw, root_tier, tier_names, allow_none=False)
            )
            if job.network_topology.mode == "soft":
                job.network_topology = NetworkTopology(mode="hard", highest_tier_allowed=1)
        elif kind == "soft":
            job = _plain_or_topology_job(draw, name, NetworkTopology(mode="soft"))
        elif kind == "partitioned":
            job = _partitioned_job(draw, name, root_tier, tier_names)
        elif kind == "podgroup":
            job = _podgroup_job(draw, name, root_tier, tier_names)
        else:
            job = _multitask_job(draw, name, root_tier, tier_names)
        job.creation_index = k
        job.namespace = draw(st.sampled_from(["default", "default", "team-a"]))
        jobs.append(job)
    return jobs


# ---------------------------------------------------------------- running pods


def _fits(node: Node, used: dict[str, int], requests: dict[str, int]) -> bool:
    # the model's attributes (and so ``used``) hold thousandths of a unit
    for resource, amount in requests.items():
        if used.get(resource, 0) + amount > node.allocatable.get(resource, 0):
            return False
    if "pods" in node.allocatable and used.get("pods", 0) + 1000 > node.allocatable["pods"]:
        return False
    return True


def _place_running(
    draw, nodes: list[Node], jobs: list[Job], *, crowded: bool = False
) -> dict[str, dict[str, int]]:
    """Mark some pods running where they fit (``crowded``: every pod of the first half of the
    jobs, where it fits); returns the usage per queue."""
    used: dict[str, dict[str, int]] = {n.name: {} for n in nodes}
    per_queue: dict[str, dict[str, int]] = {}
    for k, job in enumerate(jobs):
        everything = crowded and k < (len(jobs) + 1) // 2
        if not everything and (crowded or draw(st.integers(0, 3)) != 0):
            continue
        for task in job.tasks:
            for i in range(task.replicas):
                if not everything and not draw(st.booleans()):
                    continue
                room = [n for n in nodes if _fits(n, used[n.name], task.requests)]
                if not room:
                    continue
                node = draw(st.sampled_from(room))
                task.running[i] = node.name
                for resource, amount in {**task.requests, "pods": 1000}.items():
                    used[node.name][resource] = used[node.name].get(resource, 0) + amount
                    q = per_queue.setdefault(job.queue, {})
                    q[resource] = q.get(resource, 0) + amount
    return per_queue


# ---------------------------------------------------------------- instances


@st.composite
def instances(draw, *, max_nodes: int = 24, max_jobs: int = 8, crowded: bool = False,
              pools_and_shrunk: bool = False) -> Instance:
    """A small valid instance (see the module doc). ``crowded``: the first half of the jobs run
    (every pod that fits) at low priority and the others wait at high priority, in up to two
    queues: the situation preemption and reclaim are for. ``pools_and_shrunk``: some jobs get a
    node pool (Kueue's ResourceFlavor labels) and a node running pods may have shrunk below
    what they request (over-committed)."""
    count = draw(st.integers(2, max_nodes))
    nodes = [draw(node_shapes(i)) for i in range(count)]
    hypernodes = draw(hypernode_trees([n.name for n in nodes]))
    root_tier = max(h.tier for h in hypernodes) + 1
    tier_names = {h.tier: h.tier_name for h in hypernodes if h.tier_name}
    jobs = draw(jobs_for(root_tier, tier_names))
    del jobs[max_jobs:]

    priority_classes: list[PriorityClass] = []
    if crowded or draw(st.booleans()):
        default = draw(st.sampled_from([None, "high", "low"]))
        priority_classes = [
            PriorityClass(name="high", value=100, global_default=default == "high"),
            PriorityClass(name="low", value=1, global_default=default == "low"),
        ]
        for k, job in enumerate(jobs):
            if crowded:
                job.priority_class = "low" if k < (len(jobs) + 1) // 2 else "high"
            else:
                job.priority_class = draw(st.sampled_from([None, "high", "low"]))

    with_queues = crowded or draw(st.booleans())
    if with_queues:
        for job in jobs:
            job.queue = draw(st.sampled_from(["default", "batch"]))
    per_queue = _place_running(draw, nodes, jobs, crowded=crowded)
    if pools_and_shrunk:
        _pools_and_shrunk_node(draw, nodes, jobs)

    queues: list[Queue] = []
    if with_queues:
        for name in ("default", "batch"):
            capability: dict[str, int] = {}
            if draw(st.integers(0, 2)) == 0:
                running = per_queue.get(name, {})
                for resource in ("cpu", GPU):
                    capability[resource] = (
                        running.get(resource, 0) + draw(st.integers(0, 16)) * 1000
                    )
            # an explicit deserved share (sometimes below what the queue already runs) makes
            # reclaim possible
            deserved = (
                {"cpu": draw(st.integers(0, 32)) * CORE} if draw(st.integers(0, 2)) == 0 else {}
            )
            queues.append(
                Queue(
                    name=name,
                    priority=draw(st.integers(0, 2)),
                    reclaimable=draw(st.booleans()),
                    capability=MilliUnits(capability),  # built from the model's own amounts
                    deserved=deserved,
                )
            )
    return Instance(
        nodes=nodes,
        hypernodes=hypernodes,
        jobs=jobs,
        queues=queues,
        priority_classes=priority_classes,
    )


def _pools_and_shrunk_node(draw, nodes: list[Node], jobs: list[Job]) -> None:
    for job in jobs:
        if draw(st.integers(0, 3)) == 0:
            job.node_pool = {"zone": draw(st.sampled_from(["a", "b"]))}
    busy = sorted({node for job in jobs for task in job.tasks for node in task.running.values()})
    if busy and draw(st.booleans()):
        name = draw(st.sampled_from(busy))
        node = next(n for n in nodes if n.name == name)
        resource = draw(st.sampled_from(sorted(node.allocatable)))
        node.allocatable[resource] //= 4  # below what its running pods may hold


@st.composite
def lone_job_instances(draw, *, kind: str = "gang", max_nodes: int = 16) -> Instance:
    """One single-task job on an otherwise idle cluster (no running pods, queues or priority
    classes). ``kind``:

    * ``gang``: minAvailable = replicas (1–8 pods), any topology (none, hard, soft);
    * ``elastic``: minAvailable 0..replicas (1–10 pods), no topology or soft;
    * ``leaf``: minAvailable = replicas (1–6 pods), hard with the lowest tier present as limit.
    """
    count = draw(st.integers(2, max_nodes))
    nodes = [draw(node_shapes(i)) for i in range(count)]
    hypernodes = draw(hypernode_trees([n.name for n in nodes]))
    root_tier = max(h.tier for h in hypernodes) + 1
    tier_names = {h.tier: h.tier_name for h in hypernodes if h.tier_name}
    if kind == "gang":
        replicas = draw(st.integers(1, 8))
        min_available = replicas
        topology = _topology(draw, root_tier, tier_names)
    elif kind == "elastic":
        replicas = draw(st.integers(1, 10))
        min_available = draw(st.integers(0, replicas))
        topology = draw(st.sampled_from([None, NetworkTopology(mode="soft")]))
    else:
        replicas = draw(st.integers(1, 6))
        min_available = replicas
        topology = NetworkTopology(
            mode="hard", highest_tier_allowed=min(h.tier for h in hypernodes)
        )
    job = Job(
        name="lone",
        min_available=min_available,
        network_topology=topology,
        tasks=[
            Task(
                name="worker",
                replicas=replicas,
                requests=_requests(draw),
                constraints=_constraints(draw),
            )
        ],
    )
    return Instance(nodes=nodes, hypernodes=hypernodes, jobs=[job])


@st.composite
def reclaim_share_instances(draw) -> Instance:
    """Seed 000's Example-1 cluster (eight 8-GPU nodes, racks of two) with queues a, b, c, each
    deserving 0–64 GPUs: up to six running jobs (1–4 pods of 4 or 8 GPUs, each pod alone on a
    node, so nodes are full or half full) and up to three pending ones (1–3 pods, some hard tier
    1), so that a queue may be over or at its share before the plan and also grow in it."""
    order = draw(st.permutations(list(range(8))))
    jobs: list[Job] = []
    used = 0
    for queue in ("a", "a", "b", "c", "a", "c"):
        pods = draw(st.integers(0, 4))
        if not pods or used + pods > 8:
            continue
        running = {i: f"node{order[used + i]}" for i in range(pods)}
        used += pods
        jobs.append(in_queue(gang(f"r{len(jobs)}", pods, gpus=draw(st.sampled_from([4, 8])),
                                  running=running, min_available=draw(st.integers(1, pods))),
                             queue))
    for queue in ("a", "b", "c"):
        if draw(st.booleans()):
            pods = draw(st.integers(1, 3))
            topology = hard(1) if draw(st.booleans()) else None
            jobs.append(in_queue(gang(f"p{len(jobs)}", pods, gpus=draw(st.sampled_from([4, 8])),
                                      topology=topology,
                                      min_available=draw(st.integers(1, pods))), queue))
    shares = st.sampled_from([0, 8, 16, 24, 32, 48, 64])
    return example1(jobs, [Queue(name=q, deserved={GPU: draw(shares)}) for q in ("a", "b", "c")])
