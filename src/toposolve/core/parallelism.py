"""A job's communication layout: ``toposolve.io/parallelism: "tp=8,pp=4,dp=8"`` (docs/ranks.md).

The text lists axes ``tp`` (tensor parallel), ``pp`` (pipeline stages) and ``dp`` (data-parallel
replicas), each at most once, as ``name=size``; an axis left out has size 1. The order is the
rank order, fastest axis first: ``tp=8,pp=4,dp=8`` numbers rank ``r = tp + 8·(pp + 4·dp)``, so
the 8 ranks of a TP group are consecutive, a pipeline (its 4 stages) is one run of 32 ranks and
the DP groups stride across pipelines. ``tp=8,dp=8,pp=4`` is Megatron's default order.

The world size ``tp·pp·dp`` must equal the job's accelerator count (every pod holding
accelerators holds the same number of them and a consecutive block of that many ranks), or its
pod count (one rank per pod).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PARALLELISM_ANNOTATION = "toposolve.io/parallelism"
AXES = ("tp", "pp", "dp")
ACCELERATOR_MARKERS = ("gpu", "npu", "ascend")


def is_accelerator(resource: str) -> bool:
    """Whether a resource name counts as an accelerator (GPU, NPU, Ascend)."""
    return any(marker in resource.lower() for marker in ACCELERATOR_MARKERS)


def accelerator_indices(resources: Sequence[str]) -> list[int]:
    """Indices of the resources in ``resources`` that count as accelerators."""
    return [r for r, name in enumerate(resources) if is_accelerator(name)]


@dataclass(frozen=True)
class Layout:
    """A parsed parallelism text: the axes in rank order (fastest first) and their sizes."""

    order: tuple[str, ...]  # all three axes, fastest first (the ones left out go last)
    sizes: Mapping[str, int]

    @property
    def world(self) -> int:
        return self.sizes["tp"] * self.sizes["pp"] * self.sizes["dp"]

    @property
    def text(self) -> str:
        """The canonical text: the given axes in order (``tp=8,pp=4,dp=8``)."""
        return ",".join(f"{a}={self.sizes[a]}" for a in self.order if self.sizes[a] > 1) or "dp=1"

    def stride(self, axis: str) -> int:
        """Rank distance between neighbours along ``axis``."""
        out = 1
        for a in self.order:
            if a == axis:
                return out
            out *= self.sizes[a]
        raise KeyError(axis)  # pragma: no cover - AXES only


def ring_layout(ranks: int) -> Layout:
    """The layout of a job without the annotation: one ring (a DP group) over ``ranks`` ranks."""
    return Layout(AXES, {"tp": 1, "pp": 1, "dp": max(1, ranks)})


def parse_parallelism(text: str) -> Layout:
    """Parse ``tp=8,pp=4,dp=8`` (see the module docstring).

    Raises
    ------
    ValueError
        Unknown or repeated axis, a size that is not a whole number ≥ 1, or no axis at all.
    """
    sizes: dict[str, int] = {}
    for part in (p.strip() for p in str(text).split(",")):
        name, eq, value = part.partition("=")
        name = name.strip().lower()
        if not eq or name not in AXES:
            raise ValueError(f"{part!r} is not tp=N, pp=N or dp=N (in {text!r})")
        if name in sizes:
            raise ValueError(f"axis {name} is given twice (in {text!r})")
        if not value.strip().isdigit() or int(value) < 1 or int(value) > 1 << 20:
            raise ValueError(f"{part!r}: the size must be a whole number from 1 to 2^20")
        sizes[name] = int(value)
    order = tuple(sizes) + tuple(a for a in AXES if a not in sizes)
    return Layout(order, {a: sizes.get(a, 1) for a in AXES})


def canonical_parallelism(text: str | None) -> str | None:
    """The canonical form of a parallelism text (None stays None); ValueError if malformed."""
    return None if text is None else parse_parallelism(text).text


def ranks_per_pod(layout: Layout, pod_units: Sequence[int]) -> int:
    """Ranks each ranked pod holds: its accelerator units, or 1 when the world is the pod count.

    Parameters
    ----------
    layout
        The job's layout.
    pod_units
        Accelerator units of each of the job's pods (0 for a pod without any).

    Raises
    ------
    ValueError
        The world size matches neither the accelerators nor the pods.
    """
    gpu_pods = [u for u in pod_units if u > 0]
    if layout.world == len(pod_units):
        return 1
    if gpu_pods and len(set(gpu_pods)) == 1 and layout.world == sum(gpu_pods):
        return gpu_pods[0]
    per_pod = "/".join(str(u) for u in sorted(set(gpu_pods))) or "0"
    raise ValueError(
        f"{PARALLELISM_ANNOTATION} {layout.text}: tp×pp×dp = {layout.world:,} equals neither "
        f"the job's {len(pod_units):,} pods nor its {sum(gpu_pods):,} accelerators "
        f"({len(gpu_pods):,} pods × {per_pod}, equal per pod)")
