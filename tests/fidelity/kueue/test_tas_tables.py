"""Kueue's own TAS test table (``TestFindTopologyAssignments``) reproduced by the kueue engine.

Every case of the pinned table is here: reproduced, or skipped with the reason it is not modelled
(the ``skip`` entries of the data, and :data:`DEVIATIONS` for cases the mirror does not yet
reproduce — listed, never hidden).
"""

from __future__ import annotations

import copy
import re

import pytest

from toposolve.engines.common.missing_level import never_placed_reason

from .cases import load_cases, run_case

CASES = load_cases()
INPUT_ERROR = (
    "toposolve refuses this request when reading it (one-line input error naming the field), as "
    "Kueue's workload webhook does; the table checks the scheduler's own guard instead"
)
FLAVOR_FIRST = (
    "Kueue's scheduler runs the flavor assigner before TAS: it skips a TAS flavor whose Topology "
    "lacks the slice level (HasLevel, checkPodSetAndFlavorMatchForTAS), so TAS's own message is "
    "unreachable there; toposolve follows the scheduler, test_kueue_tas_case_flavor_first checks "
    "its message"
)
DEVIATIONS: dict[str, str] = {
    "slice size is required when slice topology is requested": INPUT_ERROR,
    "cannot request not existing slice topology": FLAVOR_FIRST,
    "node replaced for single-Pod-owned workload; gate off": (
        "SkipReassignmentForPodOwnedWorkloads off: toposolve's reader decides which pods to "
        "re-place with "
        "Kueue's default (on), so a workload owned by a single Pod keeps its node"
    ),
}
LEADER_SLICE_WITHOUT_SIZE = (
    "the group's leader podset asks podSetSliceRequiredTopology without podSetSliceSize, which "
    "Kueue's "
    "Workload webhook (TASValidateWorkloadSliceSize, beta, on) and toposolve's reader refuse; "
    "Kueue's TAS "
    "ignores a group leader's own request, so test_kueue_tas_case_leader_request_dropped runs the "
    "case "
    "without that field"
)


def _lone_leader_slice(case: dict) -> list[dict]:
    """The grouped podsets of a case asking a slice level without a slice size."""
    return [
        ps
        for ps in case.get("podSets", [])
        if (tr := ps.get("topologyRequest") or {}).get("podSetGroupName")
        and "podSetSliceRequiredTopology" in tr
        and "podSetSliceSize" not in tr
    ]


def _reason_core(text: str) -> str:
    """Kueue's message without the topology name and the exclusion statistics (and, for a
    request the reader marks never placed, toposolve's words around Kueue's)."""
    text = text.removeprefix(never_placed_reason(""))
    text = re.sub(r'^topology "[^"]*" ', "topology ", text)
    return text.split(". Total nodes")[0]


def _params():
    for case in CASES:
        why = (
            case.get("skip")
            or DEVIATIONS.get(case["name"])
            or (_lone_leader_slice(case) and LEADER_SLICE_WITHOUT_SIZE)
        )
        # listed cases still run and must fail (strict), so a fix or a regression shows
        marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
        yield pytest.param(case, id=case["name"][:90], marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_kueue_tas_case(case, tmp_path):
    _check(case, tmp_path)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c["name"][:90])
        for c in CASES
        if "skip" not in c and _lone_leader_slice(c)
    ],
)
def test_kueue_tas_case_leader_request_dropped(case, tmp_path):
    """Kueue reads a podset group's request from its workers: without the leader's own (refused)
    slice field the table's asserted assignment is reproduced."""
    case = copy.deepcopy(case)
    for ps in _lone_leader_slice(case):
        del ps["topologyRequest"]["podSetSliceRequiredTopology"]
    _check(case, tmp_path)


def test_kueue_tas_case_flavor_first(tmp_path):
    """The table's case run through Kueue's scheduler: pending with the flavor assigner's
    message (kueue@ff69552 ``tas_flavorassigner.go:192-195``) instead of TAS's."""
    (case,) = [c for c in CASES if DEVIATIONS.get(c["name"]) == FLAVOR_FIRST]
    got, reason, kueue_reason = run_case(case, tmp_path)
    assert not got and reason is not None
    assert kueue_reason == ("couldn't assign flavors to pod set main: Flavor \"tas\" does not "
                            "contain the requested level")


def _check(case: dict, tmp_path) -> None:
    got, reason, kueue_reason = run_case(case, tmp_path)
    failing = [ps for ps in case["podSets"] if "wantReason" in ps]
    if failing:
        assert reason is not None and not got, f"expected {failing[0]['wantReason']!r}, got {got}"
        assert _reason_core(reason) == _reason_core(failing[0]["wantReason"])
        # Kueue's full text: the flavor assigner's prefix around the table's asserted reason
        wanted = [f"couldn't assign flavors to pod set {ps['name']}: {ps['wantReason']}"
                  for ps in failing]
        assert kueue_reason in wanted, (kueue_reason, wanted)
        return
    assert reason is None, reason
    for ps in case["podSets"]:
        want = (
            sorted((tuple(d["values"]), d["count"]) for d in ps["want"]["domains"])
            if ps.get("want")
            else []
        )
        assert got.get(ps["name"], []) == want, ps["name"]
