"""KAI's fractional-GPU allocate cases (data in ``data/fractional_gpu.yaml``), read from KAI
objects (``gpu-fraction`` annotations, ``runai-gpu-group`` labels) and reproduced by the kai
engine: nodes, pending jobs and which pods share a device."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import toposolve

from .kai_objects import case_documents, load_case

DATA = yaml.safe_load((Path(__file__).parent / "data" / "fractional_gpu.yaml").read_text())


def documents(case: dict) -> list[dict]:
    """The case as KAI objects: one-pod PodGroups; a fraction as the pod's annotation (no
    ``nvidia.com/gpu`` request), a running pod's group as its ``runai-gpu-group`` label."""
    jobs = [{"name": j["name"], "gpus": j.get("gpus", 0),
             "tasks": [{"running_on": j["running_on"]} if "running_on" in j else {}]}
            for j in case["jobs"]]
    nodes = {n: {"gpus": g} for n, g in case["nodes"].items()}
    docs = case_documents({"nodes": nodes, "jobs": jobs})
    pods = {d["metadata"]["annotations"]["pod-group-name"]: d for d in docs if d["kind"] == "Pod"}
    for job in case["jobs"]:
        pod = pods[job["name"]]
        if "fraction" in job:
            pod["metadata"]["annotations"]["gpu-fraction"] = str(job["fraction"])
            del pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"]
        if "group" in job:
            pod["metadata"]["labels"]["runai-gpu-group"] = job["group"]
    return docs


@pytest.mark.parametrize("case", DATA["cases"], ids=[c["name"][:60] for c in DATA["cases"]])
def test_fractional_case(tmp_path, case):
    instance = load_case(tmp_path, documents(case))
    plan = toposolve.solve(instance, engine="kai")
    bound = {b.pod.split("/")[1].rsplit("-", 1)[0]: b for b in plan.bindings}
    # the device of each running GPU group, as the reader numbered them
    jobs = {job.name: job for job in instance.jobs}
    group_device = {(spec["running_on"], spec["group"]): next(iter(use))
                    for spec in case["jobs"] if "running_on" in spec and "group" in spec
                    for use in (u for t in jobs[spec["name"]].tasks
                                for u in t.device_use.values())}
    running_devices = set(group_device.values())
    for spec in case["jobs"]:
        expect = spec.get("expect")
        if expect is None:
            continue
        if expect == "pending":
            assert spec["name"] not in bound
            continue
        binding = bound[spec["name"]]
        assert binding.node == expect["node"]
        if "group" not in expect:
            continue
        key = (expect["node"], expect["group"])
        if key in group_device:
            assert binding.devices == [group_device[key]]
        else:  # a new GPU group: a device no running group holds, the same for its pods
            assert binding.devices[0] not in running_devices
            group_device[key] = binding.devices[0]
