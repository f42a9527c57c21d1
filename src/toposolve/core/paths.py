"""Where the bundled profiles and instances live.

``_data/models`` and ``_data/instances`` are symlinks to the repository's ``models/`` and
``instances/`` in a checkout, and copies of them in an installed wheel, so one path works in both.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "_data"
MODELS_DIR = DATA / "models"
INSTANCES_DIR = DATA / "instances"
DEFAULT_INSTANCE = INSTANCES_DIR / "default.yaml"
TRACE_DIR = INSTANCES_DIR / "data"
