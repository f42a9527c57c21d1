"""The memory of each GPU of a node as KAI reads it from the node's ``nvidia.com/gpu.memory``
label (GPU Feature Discovery; KAI's ``getNodeGpuMemory``, docs/kai-fidelity.md "GPU sharing").
"""

from __future__ import annotations

from collections.abc import Mapping

from toposolve.core.quantity import atoi

GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"  # MiB of each GPU
TIB_IN_MIB = 1024 * 1024  # a larger label value is bytes (KAI's fix for a GFD bug)
DEFAULT_GPU_MEMORY = 100  # MiB KAI assumes for a node without a readable label


def gpu_memory_mib(labels: Mapping[str, str]) -> int | None:
    """MiB of each GPU of a node with ``labels``: the label's integer (a value of 1 TiB or more
    is bytes), floored to a multiple of 100; None without a label Go's ``ParseInt`` reads
    (KAI then assumes :data:`DEFAULT_GPU_MEMORY`)."""
    value = atoi(labels.get(GPU_MEMORY_LABEL, "").strip())
    if value is None:
        return None
    if value >= TIB_IN_MIB:
        value //= 1024 * 1024
    return value - value % 100
