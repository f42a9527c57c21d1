"""The pending-pod-group messages Volcano's tests assert (data/messages.yaml), reproduced word for
word by toposolve's formatter of Volcano's words (engines/volcano/fit_errors.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from toposolve.engines.volcano.fit_errors import JobTasks, fit_error, nodes_unavailable

DATA = yaml.safe_load((Path(__file__).parent / "data" / "messages.yaml").read_text())


@pytest.mark.parametrize("case", DATA["fit_errors"], ids=lambda c: c["name"])
def test_fit_errors_message(case):
    got = nodes_unavailable(case["reasons"], case.get("hypernode"), case.get("base"))
    assert got == case["want"]


@pytest.mark.parametrize("case", DATA["job_fit_error"], ids=lambda c: c["name"])
def test_job_fit_error_message(case):
    job = JobTasks(Counter(case["statuses"]), case["min_available"], case["schedulable"],
                   (case["origin"], nodes_unavailable(case["origin_reasons"])))
    assert fit_error(job) == case["want"]
