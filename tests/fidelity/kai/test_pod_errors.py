"""The per-pod fit error strings KAI's tests assert (data/pod_errors.yaml), reproduced word for
word by toposolve's formatter of KAI's words (engines/kai/reasons.py); the cases marked
``reproduced: false`` need what toposolve does not model and are counted, not run."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml

from toposolve.engines.kai.reasons import short_resources, tasks_fit_errors

DATA = yaml.safe_load((Path(__file__).parent / "data" / "pod_errors.yaml").read_text())


def _run(section: str) -> list[dict]:
    return [c for c in DATA[section] if c.get("reproduced", True)]


@pytest.mark.parametrize("case", _run("tasks_fit_errors"), ids=lambda c: c["name"])
def test_tasks_fit_errors(case):
    counts = Counter(r for node in case["node_reasons"] for r in node)
    assert tasks_fit_errors(counts, case.get("base")) == case["want"]


@pytest.mark.parametrize("case", _run("short_resources"), ids=lambda c: c["name"])
def test_short_resources(case):
    names = list(case["request"])
    memory = case.get("gpu_memory")
    got = short_resources(names, np.array([case["request"][n] for n in names]),
                          np.array([case["free"][n] for n in names]),
                          gpu_memory=None if memory is None else tuple(memory))
    assert got == case["want"]


def test_the_count_the_docs_give():
    cases = [c for section in ("tasks_fit_errors", "short_resources", "job_message")
             for c in DATA[section]]
    assert (len(cases), len([c for c in cases if c.get("reproduced", True)])) == (10, 8)
