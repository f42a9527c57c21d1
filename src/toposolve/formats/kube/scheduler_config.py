"""kube-scheduler's ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``) →
:class:`~toposolve.core.kube_scoring.KubeScoring`: what the ``kube`` engine mirrors of the
profile named ``default-scheduler`` (the one the Workload API's pods use unless they name
another): the score weights of PlacementBinPacking (also accepted under its v1.36 name
NodeResourcesFit in ``plugins.placementScore``), PodGroupPodsCount, NodeResourcesFit and
NodeResourcesBalancedAllocation (``plugins.score`` / ``multiPoint``, disabled plugins weigh 0),
and the arguments of PlacementBinPacking, NodeResourcesFit (``scoringStrategy``) and
NodeResourcesBalancedAllocation (``resources``), checked as upstream's argument validation does.
What else the configuration sets is not mirrored: one warning line per field or plugin that
could change a placement. Rules and upstream references: ``docs/kube-fidelity.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from toposolve.core.errors import InputError
from toposolve.core.kube_scoring import (
    RATIO,
    KubeScoring,
    ScoringStrategy,
    resource_weight_problem,
    shape_problem,
    strategy_type_problem,
)
from toposolve.formats.k8s.fields import Document, Field

CONFIG_KIND = ("kubescheduler.config.k8s.io", "KubeSchedulerConfiguration")
DEFAULT_PROFILE = "default-scheduler"
FIT, BALANCED = "NodeResourcesFit", "NodeResourcesBalancedAllocation"
BIN_PACKING, PODS_COUNT = "PlacementBinPacking", "PodGroupPodsCount"
# top-level fields that do not change where pods go
INERT = {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
         "healthzBindAddress", "metricsBindAddress", "enableProfiling",
         "enableContentionProfiling", "podInitialBackoffSeconds", "podMaxBackoffSeconds",
         "delayCacheUntilActive", "profiles"}
# extension points whose plugin choices the engine reads
READ_POINTS = ("placementScore", "score", "multiPoint")


@dataclass
class _Weights:
    """Plugin weights as the profile's plugin sets leave them (None: the default, 1)."""

    weights: dict[str, int] = field(default_factory=dict)
    disabled: set[str] = field(default_factory=set)

    def of(self, *names: str) -> int:
        """The weight of the plugin known by ``names``: 0 when disabled and not re-enabled."""
        if any(n in self.disabled for n in names) or "*" in self.disabled:
            enabled = [n for n in names if n in self.weights]
            return self.weights[enabled[0]] if enabled else 0
        return next((self.weights[n] for n in names if n in self.weights), 1)


def read_scheduler_config(docs: Sequence[Document],
                          warn: Callable[[str], None]) -> KubeScoring | None:
    """The score configuration of the input's KubeSchedulerConfiguration, None without one.

    Parameters
    ----------
    docs
        The KubeSchedulerConfiguration documents of the input (at most one).
    warn
        Called with one line per field or plugin setting that is not mirrored.

    Returns
    -------
    KubeScoring or None

    Raises
    ------
    InputError
        Several configurations, or a value upstream's validation refuses.
    """
    if not docs:
        return None
    if len(docs) > 1:
        raise InputError("only one KubeSchedulerConfiguration may be given",
                         file=docs[1].file, obj=_name(docs[1]))
    doc = docs[0]
    root = Field.root(doc, _name(doc))
    for key, _ in root.entries():
        if key not in INERT and key != "metadata":
            warn(f"{doc.file}: {_name(doc)}: {key}: not mirrored by the kube engine (ignored)")
    profile = _profile(root, warn)
    return None if profile is None else read_profile(profile, warn)


def _name(doc: Document) -> str:
    return f"{doc.kind}/{doc.name}" if doc.metadata.get("name") else doc.kind


def _profile(root: Field, warn: Callable[[str], None]) -> Field | None:
    profiles = root["profiles"].elements()
    names = [p["schedulerName"].text(DEFAULT_PROFILE) for p in profiles]
    if len(profiles) > 1:
        warn(f"{root.file}: {root.obj}: profiles: only profile {DEFAULT_PROFILE!r} is read "
             f"(of {', '.join(map(repr, names))})")
    chosen = [p for p, n in zip(profiles, names, strict=True) if n == DEFAULT_PROFILE]
    return chosen[0] if chosen else None


def read_profile(profile: Field, warn: Callable[[str], None]) -> KubeScoring:
    """The :class:`KubeScoring` of one ``profiles[i]`` (see the module doc)."""
    weights = _plugin_weights(profile["plugins"], warn)
    args = _plugin_args(profile["pluginConfig"], warn)
    defaults = KubeScoring()
    node = defaults.node if FIT not in args else _strategy(args[FIT], False)
    balanced = args.get(BALANCED)
    if BIN_PACKING in args:
        placement = _strategy(args[BIN_PACKING], True)
    else:  # v1.36: the placement score is MostAllocated over NodeResourcesFit's resources
        placement = ScoringStrategy(type="MostAllocated", resources=node.resources)
    return KubeScoring(
        placement=placement,
        placement_fit_weight=_weight(weights, "placementScore", BIN_PACKING, FIT),
        pods_count_weight=_weight(weights, "placementScore", PODS_COUNT),
        node=node,
        node_fit_weight=_weight(weights, "score", FIT),
        balanced_weight=_weight(weights, "score", BALANCED),
        balanced_resources=(defaults.balanced_resources if balanced is None
                            else _balanced_resources(balanced)),
    )


def _weight(weights: dict[str, _Weights], point: str, *names: str) -> int:
    """A plugin's weight at ``point``, where the point's own set names it (or disables all),
    else as ``multiPoint`` leaves it (upstream merges each point's set over MultiPoint's)."""
    own = weights[point]
    if any(n in own.weights or n in own.disabled for n in names) or "*" in own.disabled:
        return own.of(*names)
    return weights["multiPoint"].of(*names)


def _plugin_weights(plugins: Field, warn: Callable[[str], None]) -> dict[str, _Weights]:
    out = {point: _Weights() for point in READ_POINTS}
    for point, pset in plugins.entries():
        if point not in READ_POINTS:
            if pset["enabled"].elements() or pset["disabled"].elements():
                warn(f"{plugins.file}: {plugins.obj}: {pset.path}: not mirrored by the kube "
                     "engine (ignored)")
            continue
        for item in pset["enabled"].elements():
            name = item["name"].required_text()
            weight = item["weight"].integer(0, minimum=0)
            out[point].weights[name] = weight or 1  # upstream: weight 0 or unset counts as 1
        for item in pset["disabled"].elements():
            out[point].disabled.add(item["name"].required_text())
        known = {BIN_PACKING, FIT, PODS_COUNT, BALANCED, "*"}
        for name in sorted((set(out[point].weights) | out[point].disabled) - known):
            warn(f"{plugins.file}: {plugins.obj}: {pset.path}: plugin {name}: not mirrored by "
                 "the kube engine (ignored)")
    return out


def _plugin_args(config: Field, warn: Callable[[str], None]) -> dict[str, Field]:
    out: dict[str, Field] = {}
    for item in config.elements():
        name = item["name"].required_text()
        if name in out:
            raise item["name"].fail(f"plugin {name!r} is configured twice")
        if name in (BIN_PACKING, FIT, BALANCED):
            out[name] = item["args"]
        elif item["args"].present:
            warn(f"{config.file}: {config.obj}: {item.path}: arguments of plugin {name}: not "
                 "mirrored by the kube engine (ignored)")
    fit = out.get(FIT)
    for key in ("ignoredResources", "ignoredResourceGroups"):
        if fit is not None and fit[key].present:
            warn(f"{config.file}: {config.obj}: {fit[key].path}: not mirrored by the kube "
                 "engine (ignored)")
    return out


def _strategy(args: Field, placement: bool) -> ScoringStrategy:
    """``args.scoringStrategy`` checked as ValidateNodeResourcesFitArgs (and, for
    PlacementBinPacking, ValidatePlacementBinPackingArgs) do."""
    given = args["scoringStrategy"]
    if not given.present:
        return KubeScoring().placement if placement else KubeScoring().node  # v1 defaulting
    kind = given["type"].required_text()
    if (why := strategy_type_problem(kind)) is not None:
        raise given["type"].fail(why)
    resources = []
    for i, item in enumerate(given["resources"].elements()):
        name = item["name"].required_text()
        weight = item["weight"].integer(required=True, minimum=-(2**31))
        assert weight is not None
        if (why := resource_weight_problem(name, weight)) is not None:
            raise given.fail(why, suffix=f".resources[{i}].weight")
        resources.append((name, weight))
    ratio = given["requestedToCapacityRatio"]
    shape = _shape(ratio) if kind == RATIO else ()
    if kind != RATIO and ratio.present:
        raise ratio.fail("must be nil when type is not RequestedToCapacityRatio")
    return ScoringStrategy(type=kind, shape=shape,
                           **({"resources": tuple(resources)} if resources else {}))


def _shape(ratio: Field) -> tuple[tuple[int, int], ...]:
    if not ratio.present:
        raise ratio.fail("must be specified when type is RequestedToCapacityRatio")
    points = tuple((p["utilization"].integer(required=True, minimum=-(2**31)),
                    p["score"].integer(required=True, minimum=-(2**31)))
                   for p in ratio["shape"].elements())
    if (bad := shape_problem(points)) is not None:  # type: ignore[arg-type]
        raise ratio.fail(bad[1], suffix=f".shape[{bad[0]}]")
    return points  # type: ignore[return-value]


def _balanced_resources(args: Field) -> tuple[str, ...]:
    """NodeResourcesBalancedAllocation's ``resources``: names, each weight 1, no duplicate
    (ValidateNodeResourcesBalancedAllocationArgs)."""
    names: list[str] = []
    for item in args["resources"].elements():
        name = item["name"].required_text()
        if name in names:
            raise item["name"].fail(f"duplicate value {name!r}")
        if item["weight"].integer(1, minimum=-(2**31)) != 1:
            raise item["weight"].fail("must be 1")
        names.append(name)
    return tuple(names) if names else KubeScoring().balanced_resources

