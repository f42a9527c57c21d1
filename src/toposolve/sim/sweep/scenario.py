"""One scenario of a sweep: build its cluster and workload, solve or replay, return one table row.

Cluster variants (``cluster.variant``): ``none``; ``{drain: NAME}`` — the nodes under HyperNode
NAME are cordoned (unschedulable); ``{remove: NAME}`` — HyperNode NAME, the HyperNodes under it
and their nodes leave the cluster (a leaf or a spine taken out); ``{allocatable: {res: qty}}`` —
every node's allocatable amounts replaced (a node shape change). A row holds the scenario's grid
values (non-scalar ones as JSON), then the replay summary's scalar figures (or the plan metrics
in ``solve`` mode); figures that are wall-clock times end in ``seconds`` or ``_s``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toposolve.core.errors import InputError
from toposolve.core.instance import Instance
from toposolve.core.quantity import MilliUnits, QuantityError, parse_resource_amount
from toposolve.formats.trace.model import Trace, parse_duration

TIMING_SUFFIXES = ("seconds", "_s", "seconds_median", "seconds_median_after_first", "seconds_max",
                   "seconds_total")


def build_cluster(spec: dict[str, Any], root: str) -> Instance:
    spec = dict(spec)
    variant = spec.pop("variant", "none")
    if "file" in spec:
        from toposolve.formats.load import load_instance

        cluster = load_instance(str(Path(root) / spec["file"]))
    else:
        from toposolve.generate import generate

        preset = spec.get("preset", "superpod")
        cluster = generate(preset, nodes=spec.get("nodes"), load=spec.get("load", 0.0),
                           seed=spec.get("seed", 0),
                           **(spec.get("options") or {}))
    return apply_variant(cluster, variant)


def _under(cluster: Instance, name: str) -> tuple[set[str], set[str]]:
    """(HyperNodes, nodes) at and under HyperNode ``name``."""
    from toposolve.core.topology import build_topology

    topo = build_topology(cluster.nodes, cluster.hypernodes, source=cluster.source)
    if name not in topo.index:
        raise InputError(f"no HyperNode {name!r}", obj="cluster.variant", field=name)
    h = topo.index[name]
    nodes = {topo.node_names[n] for n in topo.members[h].indices}
    below = {topo.names[k] for k in range(len(topo.names)) if h in topo.ancestors(k)}
    return below, nodes


VARIANTS = "none, {drain: NAME}, {remove: NAME} or {allocatable: {RESOURCE: AMOUNT, ...}}"


def variant_problem(variant: Any) -> str | None:
    """Why ``variant`` is not a cluster variant (see the module docstring), or None."""
    if variant is None or variant == "none":
        return None
    if not isinstance(variant, dict) or len(variant) != 1:
        return f"expected {VARIANTS}, got {variant!r}"
    (kind, value), = variant.items()
    if kind in ("drain", "remove") and not isinstance(value, str):
        return f"{kind}: expected a HyperNode name, got {value!r}"
    if kind == "allocatable" and not (isinstance(value, dict) and value):
        return f"allocatable: expected a mapping of resource to amount, got {value!r}"
    if kind not in ("drain", "remove", "allocatable"):
        return f"unknown variant {kind!r}: expected {VARIANTS}"
    return None


def apply_variant(cluster: Instance, variant: Any) -> Instance:
    """A copy of ``cluster`` changed by ``variant`` (``cluster`` itself for none)."""
    if why := variant_problem(variant):
        raise InputError(why, obj="cluster.variant")
    if variant is None or variant == "none":
        return cluster
    (kind, value), = variant.items()
    cluster = cluster.model_copy(deep=True)
    if kind == "drain":
        _, nodes = _under(cluster, value)
        for node in cluster.nodes:
            node.unschedulable = node.unschedulable or node.name in nodes
    elif kind == "remove":
        gone, nodes = _under(cluster, value)
        cluster.nodes = [n for n in cluster.nodes if n.name not in nodes]
        cluster.hypernodes = [h for h in cluster.hypernodes if h.name not in gone]
        for h in cluster.hypernodes:
            h.members = [m for m in h.members if m.selector.exact_match not in gone]
        cluster.jobs = [j for j in cluster.jobs
                        if not any(set(t.running.values()) & nodes for t in j.tasks)]
    elif kind == "allocatable":
        try:
            amounts = {name: parse_resource_amount(v) for name, v in value.items()}
        except (QuantityError, TypeError, ValueError) as exc:
            raise InputError(str(exc), obj="cluster.variant", field="allocatable") from None
        for node in cluster.nodes:
            node.allocatable = MilliUnits({**node.allocatable, **amounts})
    return cluster


def build_trace(spec: dict[str, Any], cluster: Instance, root: str) -> Trace:
    """The trace of a scenario's ``trace`` section (one of ``synthetic``, ``openb``, ``file``).

    ``file`` is a path or ``{path: PATH, OPTION: VALUE…}`` (an openb pod-list CSV's options).
    """
    from toposolve.sim.replay.traces import make_trace

    (kind, options), = spec.items()
    if kind == "file":  # as `toposolve replay CLUSTER FILE --trace-option …` reads it
        options = {"path": options} if isinstance(options, str) else dict(options)
        path = str(Path(root) / options.pop("path"))
        return make_trace(path, cluster, options)
    if kind in ("synthetic", "openb"):
        return make_trace(kind, cluster, dict(options or {}))
    raise InputError(f"unknown trace kind {kind!r} (synthetic, openb, file)", obj="trace")


def check_solver(spec: dict[str, Any], mode: str) -> None:
    """Resolve what a scenario's solves need (engine, profile, options) without solving.

    An InputError's ``field`` is the scenario path at fault (``replay.time_limit``).
    """
    from toposolve.policy.profiles import load_profile
    from toposolve.policy.rules import EVICT_MODES
    from toposolve.sim.replay.engine import cycle_solver, engine_name

    engine, profile = spec.get("engine", "volcano"), spec.get("profile")
    options = dict(spec.get(mode) or {})
    if options.get("evict") not in (None, *EVICT_MODES):
        raise InputError(f"must be one of {', '.join(EVICT_MODES)}, not {options['evict']!r}",
                         field=f"{mode}.evict")
    with _at("engine"):
        engine_name(engine)
    with _at("profile"):
        load_profile(profile)
    if mode == "solve":
        from toposolve.engines.cpsat import sat_overrides
        from toposolve.solve import SolveOptions

        with _at("solve"):
            SolveOptions(**options)
        for name, value in (options.get("parameters") or {}).items():
            with _at(f"solve.parameters.{name}"):
                sat_overrides({name: value})
        return
    for key in ("cycle", "max_wait", "until"):
        if options.get(key) is not None:
            try:
                parse_duration(options[key])
            except ValueError as exc:
                raise InputError(str(exc), field=f"replay.{key}") from None
    with _at("replay"):
        cycle_solver(engine, profile, time_limit=options.get("time_limit"),
                     seed=options.get("seed", 0), evict=options.get("evict"),
                     wall_factor=options.get("wall_factor", 1.0))


@contextmanager
def _at(path: str) -> Iterator[None]:
    """Re-raise an InputError as one whose field is ``path`` (plus its own field, for a section
    of options); one naming a file (a profile's) keeps it in the message."""
    try:
        yield
    except InputError as exc:
        if exc.file:
            raise InputError(str(exc), field=path) from None
        section = path in ("solve", "replay") and exc.field
        raise InputError(exc.message, field=f"{path}.{exc.field}" if section else path) from None


def _cell(value: Any) -> Any:
    return value if value is None or isinstance(value,
            bool | int | float | str) else json.dumps(value, sort_keys=True)


def run_scenario(scenario: dict[str, Any]) -> dict[str, Any]:
    """The table row of one scenario (see the module docstring)."""
    spec, root = scenario["spec"], scenario["root"]
    cluster = build_cluster(spec["cluster"], root)
    engine = spec.get("engine", "volcano")
    row: dict[str, Any] = {"scenario": scenario["index"],
                           **{k: _cell(v) for k, v in scenario["params"].items()}}
    if scenario["mode"] == "solve":
        from toposolve.core.problem import compile_problem
        from toposolve.policy.metrics import plan_metrics
        from toposolve.solve import SolveOptions, solve_problem

        problem = compile_problem(cluster)
        plan = solve_problem(problem, engine, spec.get("profile"),
                             SolveOptions(**(spec.get("solve") or {})))
        metrics = plan_metrics(problem, plan).to_dict()
        figures = {k: v for k, v in metrics.items() if k not in ("jobs", "objective_stages")}
    else:
        from toposolve.sim.replay import replay

        trace = build_trace(spec["trace"], cluster, root)
        record = replay(cluster, trace, engine, profile=spec.get("profile"),
                        **(spec.get("replay") or {}))
        figures = record.summary
    row["engine"] = engine
    row.update({k: _cell(v) for k, v in figures.items()})
    return row
