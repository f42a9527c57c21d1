"""Declarative model/policy profiles (``models/*.yaml``).

A profile carries the network-topology-aware plugin arguments with Volcano's names and defaults,
the heuristic's options, the objective stages and the CP-SAT parameters. Omitted keys take the
defaults below, which equal Volcano's (its network-topology-aware plugin's arguments).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toposolve.core.errors import InputError
from toposolve.core.paths import MODELS_DIR
from toposolve.core.yaml_guard import check_expansion, read_text

LOG = logging.getLogger("toposolve")

DEFAULT_PROFILE = "volcano-default"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class PluginArgs(_Strict):
    """``network-topology-aware`` plugin arguments (Volcano names as aliases)."""

    weight: int = Field(default=1, alias="weight")
    binpack_cpu: int = Field(default=1, alias="hypernode.binpack.cpu")
    binpack_memory: int = Field(default=1, alias="hypernode.binpack.memory")
    binpack_resources: dict[str, int] = Field(default_factory=dict)
    normal_pod_enable: bool = Field(default=True, alias="hypernode.binpack.normal-pod.enable")
    normal_pod_fading: float = Field(default=0.8, ge=0, alias="hypernode.binpack.normal-pod.fading")
    evict_max_hypernodes: int = Field(default=8, ge=1,
                                      alias="hypernode.gradient.evict.max-hypernodes")

    @classmethod
    def from_volcano(cls, arguments: dict[str, Any],
                     warn: Callable[[str], None] | None = None) -> PluginArgs:
        """Parse a Volcano ``arguments:`` map (``hypernode.binpack.resources: a, b`` plus
        ``hypernode.binpack.resources.a: 2``) as the plugin's ``New`` does: a value of the wrong
        type keeps the default, negative weights and a negative fading take the default, an
        evict cap ≤ 0 takes 8, a weight key for a resource not listed and unknown keys are
        ignored. ``warn`` gets one line for each value dropped or replaced."""
        say = warn or (lambda line: None)
        args = dict(arguments)
        out: dict[str, Any] = {}
        for key, default, floor in (
            ("weight", 1, 0),
            ("hypernode.binpack.cpu", 1, 0),
            ("hypernode.binpack.memory", 1, 0),
            ("hypernode.gradient.evict.max-hypernodes", 8, 1),
        ):
            if key in args:
                out[key] = _volcano_int(key, args.pop(key), default, floor, say)
        listed = args.pop("hypernode.binpack.resources", "")
        if not isinstance(listed, str):
            say(f"plugin argument hypernode.binpack.resources: {listed!r} is not a string; ignored")
            listed = ""
        weights: dict[str, int] = {}
        for name in (n.strip() for n in listed.split(",")):
            if name:
                key = f"hypernode.binpack.resources.{name}"
                weights[name] = _volcano_int(key, args.pop(key, 1), 1, 0, say)
        if "hypernode.binpack.normal-pod.enable" in args:
            out["hypernode.binpack.normal-pod.enable"] = _volcano_bool(
                "hypernode.binpack.normal-pod.enable",
                args.pop("hypernode.binpack.normal-pod.enable"), say
            )
        if "hypernode.binpack.normal-pod.fading" in args:
            fading = args.pop("hypernode.binpack.normal-pod.fading")
            if isinstance(fading, bool) or not isinstance(fading, (int, float)) or fading < 0:
                say(f"plugin argument hypernode.binpack.normal-pod.fading: {fading!r} is not a "
                    "number >= 0; using 0.8")
                fading = 0.8
            out["hypernode.binpack.normal-pod.fading"] = float(fading)
        for key in args:
            say(f"plugin argument {key}: not used by the network-topology-aware plugin; ignored")
        return cls.model_validate({**out, "binpack_resources": weights})

    def resource_weights(self) -> dict[str, int]:
        """Bin-packing weight per resource name (cpu, memory, then the listed ones)."""
        return {"cpu": self.binpack_cpu, "memory": self.binpack_memory, **self.binpack_resources}


def _volcano_int(key: str, value: Any, default: int, floor: int, say: Callable[[str], None]) -> int:
    """Volcano's ``Arguments.GetInt`` plus the plugin's fallback for values below ``floor``."""
    if isinstance(value, bool) or not isinstance(value, int):
        say(f"plugin argument {key}: {value!r} is not an integer; using {default}")
        return default
    if value < floor:
        say(f"plugin argument {key}: {value} is below {floor}; using {default}")
        return default
    return value


_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
             "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def _volcano_bool(key: str, value: Any, say: Callable[[str], None]) -> bool:
    """Volcano's ``Arguments.GetBool``: a bool, or a string ``strconv.ParseBool`` reads."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in _GO_BOOLS:
        return _GO_BOOLS[value]
    say(f"plugin argument {key}: {value!r} is not a boolean; using true")
    return True


class HeuristicOptions(_Strict):
    # "deterministic": ties go to the lowest index (HyperNodes by (tier, name), nodes by instance
    # order); "random": Volcano-like random ties drawn from `seed`.
    tie_break: Literal["deterministic", "random"] = "deterministic"
    seed: int = 0
    # "gradient": Volcano's code since 2026-05 rewrites soft into hard-up-to-the-root, so a soft
    # job takes the lowest tier that fits and falls back tier by tier (the default, as the issue
    # asks). "score-only": the design documents' soft mode — no gradients, LCA node scoring only.
    soft_mode: Literal["gradient", "score-only"] = "gradient"


KueueGate = Literal["TASProfileMixed", "TASBalancedPlacement", "TASRespectNodeAffinityPreferred",
                    "ElasticJobsViaWorkloadSlicesWithTAS"]


class KueueOptions(_Strict):
    """Kueue feature gates the ``kueue`` engine honours, by Kueue's names; unset gates keep
    Kueue's defaults (``TASProfileMixed`` on, ``TASBalancedPlacement``,
    ``TASRespectNodeAffinityPreferred`` and ``ElasticJobsViaWorkloadSlicesWithTAS`` off)."""

    feature_gates: dict[KueueGate, bool] = Field(default_factory=dict)

    def gate(self, name: KueueGate) -> bool:
        return self.feature_gates.get(name, name == "TASProfileMixed")


class ObjectiveStage(_Strict):
    name: Literal[
        "placed", "placed_jobs", "spread", "fragmentation", "broken_gangs", "eviction_cost",
        "evicted_pods", "comm", "dp_span", "pp_span", "edge_floor", "span_floor",
        "gpu_fragmentation", "node_order",
    ]
    weight: float = 1.0


class ObjectiveSpec(_Strict):
    mode: Literal["lexicographic", "weighted"] = "lexicographic"
    stages: list[ObjectiveStage] = Field(default_factory=lambda: [ObjectiveStage(name="placed"),
            ObjectiveStage(name="spread"), ObjectiveStage(name="fragmentation")])


class SolverParams(_Strict):
    time_limit: float = Field(default=30.0, gt=0)
    workers: int = Field(default=2, ge=1)
    seed: int = 0
    deterministic: bool = True  # reproducible by default; False: CP-SAT's parallel portfolio
    log: bool = False
    parameters: dict[str, Any] = Field(default_factory=dict)  # raw CP-SAT parameter overrides


class CommWeights(_Strict):
    """The communication cost model of docs/ranks.md: an edge of class ``tp``/``pp``/``dp``
    between pods whose nodes' lowest common HyperNode has tier ``s`` costs
    ``weight × tier_factor ** (s - lowest tier)``; an edge inside one node costs 0."""

    tp: float = Field(default=16.0, ge=0)
    pp: float = Field(default=4.0, ge=0)
    dp: float = Field(default=1.0, ge=0)
    tier_factor: float = Field(default=2.0, ge=1)
    # the rank assignment takes the plan's smallest largest DP span first, then the cost
    # (Arnold's objective; docs/ranks.md, section 6c)
    dp_span_first: bool = False
    # the dp_span stage and dp_span_first count domains from this level up (0: leaves; 1: one
    # level above, so DP groups may cross leaves inside a spine at no price)
    dp_span_from_level: int = Field(default=0, ge=0)


class Profile(_Strict):
    name: str = DEFAULT_PROFILE
    description: str = ""
    plugin: PluginArgs = Field(default_factory=PluginArgs)
    heuristic: HeuristicOptions = Field(default_factory=HeuristicOptions)
    kueue: KueueOptions = Field(default_factory=KueueOptions)
    objective: ObjectiveSpec = Field(default_factory=ObjectiveSpec)
    solver: SolverParams = Field(default_factory=SolverParams)
    comm: CommWeights = Field(default_factory=CommWeights)


PLACEMENT_STAGES = ("placed_jobs", "placed")
DISRUPTION_STAGES = ("broken_gangs", "eviction_cost", "evicted_pods")


def for_eviction(profile: Profile, evict: str | None) -> Profile:
    """The profile a run with evictions uses: its placement stages (``placed_jobs``,
    ``placed``) first, then disruption — ``broken_gangs``, ``eviction_cost``,
    ``evicted_pods`` — then its other stages, each group in profile order. No engine may trade
    disruption for spread or fragmentation. Without ``evict`` the profile is returned as is.

    Raises :class:`InputError` for a weighted objective: one weighted sum cannot rank
    disruption right after placement."""
    if evict is None:
        return profile
    spec = profile.objective
    if spec.mode == "weighted":
        raise InputError(
            f"profile {profile.name!r} weighs its stages into one sum, which cannot put disruption "
            "right after "
            "placement; use a lexicographic profile (e.g. --profile preemption) with --evict",
            obj="Profile", field="objective.mode",
        )
    listed = {s.name: s for s in spec.stages}
    placement = [s for s in spec.stages if s.name in PLACEMENT_STAGES]
    disruption = [listed.get(name) or ObjectiveStage(name=name) for name in DISRUPTION_STAGES]
    rest = [s for s in spec.stages if s.name not in PLACEMENT_STAGES + DISRUPTION_STAGES]
    stages = placement + disruption + rest
    if [s.name for s in stages] == [s.name for s in spec.stages]:
        return profile
    return profile.model_copy(update={"objective": spec.model_copy(update={"stages": stages})})



def _resolve(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return path
    for folder in (Path.cwd() / "models", MODELS_DIR):
        candidate = folder / f"{name_or_path}.yaml"
        if candidate.exists():
            return candidate
    known = sorted(p.stem for p in MODELS_DIR.glob("*.yaml")) if MODELS_DIR.exists() else []
    raise InputError(f"no profile named {name_or_path!r} (known: {', '.join(known) or 'none'})",
                     field="profile")


def load_profile(name_or_path: str | Path | None = None) -> Profile:
    """Load a profile.

    Parameters
    ----------
    name_or_path
        A bundled profile's name (``models/<name>.yaml``), a path, or None for the defaults.

    Returns
    -------
    Profile
    """
    if name_or_path is None:
        return Profile()
    path = _resolve(name_or_path)
    text = read_text(path)
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {' '.join(str(exc).split())}", file=str(path)) from None
    check_expansion([data], str(path))
    if not isinstance(data, dict):
        raise InputError("a profile must be a mapping", file=str(path))
    if not isinstance(data.get("plugin") or {}, dict):
        raise InputError("must be a mapping of plugin arguments", file=str(path), obj="Profile",
                         field="plugin")
    try:
        plugin = PluginArgs.from_volcano(data.pop("plugin", None) or {},
                warn=lambda line: LOG.warning(f"{path}: {line}"))
        return Profile.model_validate({**data, "plugin": plugin})
    except (ValidationError, ValueError) as exc:
        if isinstance(exc, ValidationError):
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"])
            raise InputError(err["msg"], file=str(path), obj="Profile", field=where) from None
        raise InputError(str(exc), file=str(path), obj="Profile", field="plugin") from None
