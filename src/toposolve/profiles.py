"""Declarative model/policy profiles (``models/*.yaml``).

A profile carries the network-topology-aware plugin arguments with Volcano's names and defaults,
the heuristic's options, the objective stages and the CP-SAT parameters. Omitted keys take the
defaults below, which equal Volcano's (seed 004 §8.2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import InputError
from .paths import MODELS_DIR

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
    evict_max_hypernodes: int = Field(default=8, ge=1, alias="hypernode.gradient.evict.max-hypernodes")

    @classmethod
    def from_volcano(cls, arguments: dict[str, Any]) -> PluginArgs:
        """Parse a Volcano ``arguments:`` map (``hypernode.binpack.resources: a, b`` plus
        ``hypernode.binpack.resources.a: 2``)."""
        args = dict(arguments)
        listed = args.pop("hypernode.binpack.resources", "") or ""
        names = [n.strip() for n in str(listed).split(",") if n.strip()]
        weights: dict[str, int] = {}
        for name in names:
            weights[name] = int(args.pop(f"hypernode.binpack.resources.{name}", 1))
        stray = [k for k in args if k.startswith("hypernode.binpack.resources.")]
        if stray:
            raise ValueError(f"{stray[0]} is set but not listed in hypernode.binpack.resources")
        return cls.model_validate({**args, "binpack_resources": weights})

    def resource_weights(self) -> dict[str, int]:
        """Bin-packing weight per resource name (cpu, memory, then the listed ones)."""
        return {"cpu": self.binpack_cpu, "memory": self.binpack_memory, **self.binpack_resources}


class HeuristicOptions(_Strict):
    # "deterministic": ties go to the lowest index (HyperNodes by (tier, name), nodes by instance
    # order); "random": Volcano-like random ties drawn from `seed`.
    tie_break: Literal["deterministic", "random"] = "deterministic"
    seed: int = 0
    # "gradient": Volcano's code since 2026-05 rewrites soft into hard-up-to-the-root, so a soft
    # job takes the lowest tier that fits and falls back tier by tier (the default, as the issue
    # asks). "score-only": the design documents' soft mode — no gradients, LCA node scoring only.
    soft_mode: Literal["gradient", "score-only"] = "gradient"


class ObjectiveStage(_Strict):
    name: Literal["placed", "placed_jobs", "spread", "fragmentation", "broken_gangs", "eviction_cost", "evicted_pods"]
    weight: float = 1.0


class ObjectiveSpec(_Strict):
    mode: Literal["lexicographic", "weighted"] = "lexicographic"
    stages: list[ObjectiveStage] = Field(
        default_factory=lambda: [
            ObjectiveStage(name="placed"),
            ObjectiveStage(name="spread"),
            ObjectiveStage(name="fragmentation"),
        ]
    )


class SolverParams(_Strict):
    time_limit: float = Field(default=30.0, gt=0)
    workers: int = Field(default=2, ge=1)
    seed: int = 0
    deterministic: bool = False
    log: bool = False
    parameters: dict[str, Any] = Field(default_factory=dict)  # raw CP-SAT parameter overrides


class Profile(_Strict):
    name: str = DEFAULT_PROFILE
    description: str = ""
    plugin: PluginArgs = Field(default_factory=PluginArgs)
    heuristic: HeuristicOptions = Field(default_factory=HeuristicOptions)
    objective: ObjectiveSpec = Field(default_factory=ObjectiveSpec)
    solver: SolverParams = Field(default_factory=SolverParams)


def _resolve(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return path
    for folder in (Path.cwd() / "models", MODELS_DIR):
        candidate = folder / f"{name_or_path}.yaml"
        if candidate.exists():
            return candidate
    known = sorted(p.stem for p in MODELS_DIR.glob("*.yaml")) if MODELS_DIR.exists() else []
    raise InputError(f"no profile named {name_or_path!r} (known: {', '.join(known) or 'none'})", field="profile")


def load_profile(name_or_path: str | Path | None = None) -> Profile:
    """Load a profile by name (``models/<name>.yaml``) or path; ``None`` gives the defaults."""
    if name_or_path is None:
        return Profile()
    path = _resolve(name_or_path)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {exc}", file=str(path)) from None
    if not isinstance(data, dict):
        raise InputError("a profile must be a mapping", file=str(path))
    try:
        plugin = PluginArgs.from_volcano(data.pop("plugin", None) or {})
        return Profile.model_validate({**data, "plugin": plugin})
    except (ValidationError, ValueError) as exc:
        if isinstance(exc, ValidationError):
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"])
            raise InputError(err["msg"], file=str(path), obj="Profile", field=where) from None
        raise InputError(str(exc), file=str(path), obj="Profile", field="plugin") from None
