"""Seeded synthetic instances: ``generate(preset, nodes=, load=, seed=, **options)``.

Every preset builds a native document (:mod:`toposolve.formats.native.reader`) with
``numpy.random.default_rng(seed)``, so the same arguments give the same instance. ``nodes`` is
rounded up to whole tier-1 units; ``load`` is the pending accelerator demand as a fraction of
the cluster's accelerators (the use-case presets, which hold one given job, ignore it).
:func:`generate_document` returns the compact document itself (what ``instances/*.yaml`` hold);
:func:`generate` reads it into an :class:`~toposolve.core.instance.Instance`. :data:`PRESETS`
describes each preset; ``docs/generate.md`` lists their options.

The kubectl-style dump ``instances/h100-dump*.yaml`` is a test fixture, written by
``benchmarks/fixtures/h100_dump.py``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from toposolve.core.errors import InputError
from toposolve.core.instance import Instance
from toposolve.core.limits import MAX_NODES, count_problem
from toposolve.formats.native.reader import load_native
from toposolve.generate import alibaba, fattree, lingjun, meta, nvl72, superpod, usecases

_BUILDERS: dict[str, Callable[..., dict[str, Any]]] = {
    "superpod": superpod.superpod,
    "scale-6k": superpod.scale_6k,
    "nvl72": nvl72.nvl72,
    "meta-roce": meta.meta_roce,
    "fattree": fattree.fattree,
    "alibaba": alibaba.alibaba,
    "lingjun": lingjun.lingjun,
    "usecase-gpu": usecases.usecase_gpu,
    "usecase-npu": usecases.usecase_npu,
}

PRESETS: dict[str, str] = {
    "superpod": "DGX SuperPOD-like: 32-node SUs, spine groups, cores, top; 8-GPU nodes; gang queue",
    "scale-6k": "6,144 DGX nodes, 9,457 HyperNodes in 5 tiers (per-node leaves), 200 pending jobs",
    "nvl72": "GB200 NVL72-like: 18-tray NVLink racks (4 GPUs per tray), leaf groups, spine",
    "meta-roce": "Meta-like 24k-GPU RoCE cluster: 3,072 nodes, racks of 2 hosts, 12 AI zones",
    "fattree": "fat tree of configurable arity and depth, 8-GPU nodes",
    "alibaba": "Alibaba GPU trace: real node mix and pod requests, synthesised racks and gangs",
    "lingjun": "Alibaba Lingjun: the real 847-host three-tier Clos (119 leaves of 2-8 hosts), "
    "8-GPU hosts",
    "usecase-gpu": "use case 1: one 3,000-pod x 8-GPU job, hard tier 2, spine-leaf",
    "usecase-npu": "use case 2: 3,000 pods x 16 NPUs in HCCS partitions (hard tier 1)",
}


def generate(preset: str, *, nodes: int | None = None, load: float = 0.9, seed: int = 0,
             **options: Any) -> Instance:
    """The instance of ``preset`` (see the module docstring).

    Parameters
    ----------
    preset
        A name of :data:`PRESETS`.
    nodes
        Cluster size (rounded up to whole tier-1 units); None: the preset's default.
    load
        Pending accelerator demand as a fraction of the cluster's accelerators, in [0, 10].
    seed
        Seed of ``numpy.random.default_rng``.
    **options
        The preset's options (module docstring).

    Returns
    -------
    Instance
        The instance read from :func:`generate_document`; bad arguments raise InputError.
    """
    source = f"<generate {preset} seed={seed}>"
    doc = generate_document(preset, nodes=nodes, load=load, seed=seed, **options)
    return load_native([doc], source=source)


def generate_document(preset: str, *, nodes: int | None = None, load: float = 0.9, seed: int = 0,
                      **options: Any) -> dict[str, Any]:
    """The compact native document of ``preset`` (arguments as :func:`generate`).

    Returns
    -------
    dict
        The native document, as ``instances/*.yaml`` hold it.
    """
    where = f"preset/{preset}"
    builders = _BUILDERS
    if preset not in builders:
        raise InputError(f"unknown preset (choose from {', '.join(builders)})", obj=where)
    if nodes is not None and (why := count_problem(nodes, 1, MAX_NODES)):
        raise InputError(why, obj=where, field="nodes")
    if isinstance(load, bool) or not isinstance(load, int | float) or not 0 <= load <= 10:
        raise InputError(f"expected a number in [0, 10], got {load!r}", obj=where, field="load")
    builder = builders[preset]
    values = _options(builder, options, where)
    try:
        return builder(np.random.default_rng(seed), nodes, float(load), **values)
    except ValueError as exc:
        raise InputError(str(exc), obj=where) from None


def _options(builder: Callable[..., Any], options: dict[str, Any], where: str) -> dict[str, Any]:
    """Check option names and coerce values to the type of the option's default."""
    params = {
        name: p for name, p in inspect.signature(builder).parameters.items()
        if p.kind is p.KEYWORD_ONLY
    }
    values: dict[str, Any] = {}
    for name, value in options.items():
        if name not in params:
            known = ", ".join(params) or "none"
            raise InputError(f"unknown option (options: {known})", obj=where, field=name)
        try:
            values[name] = _coerce(value, params[name])
        except (TypeError, ValueError) as exc:
            raise InputError(str(exc), obj=where, field=name) from None
    return values


def _coerce(value: Any, param: inspect.Parameter) -> Any:
    default = param.default
    annotation = str(param.annotation)
    if value is None and "None" in annotation:
        return None
    if isinstance(default, tuple) or annotation.startswith("tuple"):
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            raise TypeError(f"expected a list, got {value!r}")
        kind = str if "str" in annotation else int
        out = tuple(kind(x.strip() if isinstance(x, str) else x) for x in items)
        if kind is int and any(x < 1 or x > MAX_NODES for x in out):
            raise ValueError(f"expected integers in [1, {MAX_NODES:,}], got {value!r}")
        return out
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise TypeError(f"expected true or false, got {value!r}")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValueError(f"expected a fraction in [0, 1], got {value!r}")
        return float(value)
    if isinstance(default, int) or "int" in annotation:
        why = count_problem(value, 1, MAX_NODES)  # sizes and counts: no preset needs more
        if why:
            raise ValueError(why)
        return value
    if isinstance(default, str):
        if not isinstance(value, str):
            raise TypeError(f"expected a string, got {value!r}")
        return value
    return value


__all__ = ["PRESETS", "generate", "generate_document"]
