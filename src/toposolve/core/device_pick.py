"""Which devices of a node one pod takes: the device rules (docs/formats.md, "Per-device GPU
sharing"). ``FIRST_FIT`` is Volcano's ``gpushare`` allocation (the lowest-index devices with
room); ``PACK`` is KAI's ``gpupack`` (the most-used devices that fit first,
docs/kai-fidelity.md, "GPU sharing"). The engines' kernel (``engines/common/devices.py``) and the
readers placing running pods on devices (``formats/k8s/running_devices.py``) share it.
"""

from __future__ import annotations

import numpy as np

FIRST_FIT = "first"  # Volcano gpushare: the lowest-index devices with room
PACK = "pack"  # KAI gpupack: the most-used devices with room first, ties by lowest index
DEVICE_RULES = (FIRST_FIT, PACK)


def pick_devices(free: np.ndarray, milli: int, count: int,
                 rule: str = FIRST_FIT) -> tuple[int, ...] | None:
    """The devices one pod takes under ``rule``, or None if it does not fit.

    Parameters
    ----------
    free
        [D] free thousandths of each device of the node.
    milli, count
        The pod's shape: thousandths of each device, and how many devices.
    rule
        :data:`FIRST_FIT` (lowest index first) or :data:`PACK` (least free first, then index).

    Returns
    -------
    tuple of int or None
        ``count`` device indexes, ascending.
    """
    fits = np.flatnonzero(free >= milli)
    if len(fits) < count:
        return None
    if rule == PACK:  # stable sort: equal room keeps the lower index first
        fits = fits[np.argsort(free[fits], kind="stable")]
    return tuple(sorted(int(d) for d in fits[:count]))
