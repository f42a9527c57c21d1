"""The KubeSchedulerConfiguration reader: plugin weights, scoring strategies, upstream's argument
validation, one warning per setting not mirrored, ``--scheduler-config``."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from toposolve.core.errors import InputError
from toposolve.core.kube_scoring import KubeScoring
from toposolve.formats.load import instance_from_bodies

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi"}}}


def config(profile: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile], **top}


def read(*docs: dict[str, Any]) -> tuple[KubeScoring | None, list[str]]:
    warnings: list[str] = []
    instance = instance_from_bodies([(d, "c.yaml") for d in (NODE, *docs)], "c", warnings.append)
    return instance.kube_scoring, warnings


def fit_args(strategy: dict[str, Any], name: str = "NodeResourcesFit") -> dict[str, Any]:
    return {"pluginConfig": [{"name": name, "args": {"scoringStrategy": strategy}}]}


def test_without_a_configuration_the_engine_keeps_upstreams_defaults():
    scoring, _ = read()
    assert scoring is None
    default = KubeScoring()
    assert (default.placement.type, default.node.type) == ("MostAllocated", "LeastAllocated")
    assert (default.placement_fit_weight, default.pods_count_weight) == (1, 1)


def test_the_documented_example_sets_both_placement_weights_and_the_resource_weights():
    # the example of the Topology-Aware Workload Scheduling page (v1.36)
    profile = {"schedulerName": "default-scheduler",
               "plugins": {"placementScore": {"enabled": [
                   {"name": "NodeResourcesFit", "weight": 2},
                   {"name": "PodGroupPodsCount", "weight": 5}]}},
               **fit_args({"type": "LeastAllocated",
                           "resources": [{"name": "cpu", "weight": 2},
                                         {"name": "memory", "weight": 3}]})}
    scoring, warnings = read(config(profile))
    assert not warnings
    assert (scoring.placement_fit_weight, scoring.pods_count_weight) == (2, 5)
    assert scoring.node.type == "LeastAllocated"
    # the placement score is MostAllocated over NodeResourcesFit's resource weights
    assert scoring.placement.type == "MostAllocated"
    assert scoring.placement.resources == scoring.node.resources == (("cpu", 2), ("memory", 3))


def test_placement_bin_packing_arguments_set_the_placement_strategy():
    ratio = {"type": "RequestedToCapacityRatio", "resources": [{"name": "nvidia.com/gpu",
                                                                 "weight": 5}],
             "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10},
                                                    {"utilization": 100, "score": 0}]}}
    scoring, _ = read(config(fit_args(ratio, "PlacementBinPacking")))
    assert scoring.placement.type == "RequestedToCapacityRatio"
    assert scoring.placement.shape == ((0, 10), (100, 0))
    assert scoring.placement.resources == (("nvidia.com/gpu", 5),)
    assert scoring.node == KubeScoring().node


def test_disabled_plugins_weigh_zero_and_a_re_enabled_one_its_weight():
    profile = {"plugins": {
        "placementScore": {"disabled": [{"name": "*"}],
                           "enabled": [{"name": "PodGroupPodsCount"}]},
        "multiPoint": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]},
        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 4}]}}}
    scoring, _ = read(config(profile))
    assert (scoring.placement_fit_weight, scoring.pods_count_weight) == (0, 1)
    assert (scoring.node_fit_weight, scoring.balanced_weight) == (4, 0)


def test_only_the_default_scheduler_profile_is_read_with_one_warning():
    other = {"schedulerName": "gpu", "plugins": {"placementScore": {"enabled": [
        {"name": "PodGroupPodsCount", "weight": 9}]}}}
    body = config({"schedulerName": "default-scheduler"})
    body["profiles"].append(other)
    scoring, warnings = read(body)
    assert scoring.pods_count_weight == 1
    assert warnings == ["c.yaml: KubeSchedulerConfiguration: profiles: only profile "
                        "'default-scheduler' is read (of 'default-scheduler', 'gpu')"]


def test_settings_not_mirrored_get_one_warning_line_each():
    profile = {"plugins": {"filter": {"disabled": [{"name": "NodePorts"}]},
                           "score": {"enabled": [{"name": "ImageLocality", "weight": 3}]}},
               "pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 2}},
                                {"name": "NodeResourcesFit",
                                 "args": {"ignoredResources": ["example.com/foo"]}}]}
    _, warnings = read(config(profile, percentageOfNodesToScore=50, parallelism=8))
    assert len(warnings) == 5
    assert warnings[0] == ("c.yaml: KubeSchedulerConfiguration: percentageOfNodesToScore: not "
                           "mirrored by the kube engine (ignored)")
    assert all("not mirrored by the kube engine (ignored)" in w for w in warnings)
    for what in ("plugins.filter", "plugin ImageLocality", "plugin InterPodAffinity",
                 "args.ignoredResources"):
        assert sum(what in w for w in warnings) == 1, what


@pytest.mark.parametrize(("strategy", "field", "message"), [
    ({"type": "foo"}, "scoringStrategy.type", "unsupported value 'foo'"),
    ({"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}]},
     "scoringStrategy.resources[0].weight", "not in valid range (0, 100]"),
    ({"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]},
     "scoringStrategy.resources[0].weight", "not in valid range (0, 100]"),
    ({"type": "RequestedToCapacityRatio"}, "scoringStrategy.requestedToCapacityRatio",
     "must be specified"),
    ({"type": "LeastAllocated", "requestedToCapacityRatio": {"shape": []}},
     "scoringStrategy.requestedToCapacityRatio", "must be nil"),
    ({"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [
        {"utilization": 50, "score": 1}, {"utilization": 40, "score": 2}]}},
     "scoringStrategy.requestedToCapacityRatio.shape[1]", "increasing order"),
])
def test_bad_strategy_values_are_one_line_errors_naming_file_object_and_field(strategy, field,
                                                                              message):
    with pytest.raises(InputError, match=re.escape(message)) as err:
        read(config(fit_args(strategy, "PlacementBinPacking")))
    assert err.value.file == "c.yaml"
    assert err.value.obj == "KubeSchedulerConfiguration"
    assert err.value.field == f"profiles[0].pluginConfig[0].args.{field}"
    assert "\n" not in str(err.value)


def test_balanced_allocation_resources_must_weigh_one():
    args = {"pluginConfig": [{"name": "NodeResourcesBalancedAllocation",
                              "args": {"resources": [{"name": "cpu", "weight": 2}]}}]}
    with pytest.raises(InputError, match="must be 1"):
        read(config(args))


def test_a_negative_plugin_weight_is_refused():
    profile = {"plugins": {"placementScore": {"enabled": [{"name": "PodGroupPodsCount",
                                                           "weight": -1}]}}}
    with pytest.raises(InputError, match="at least 0") as err:
        read(config(profile))
    assert err.value.field == "profiles[0].plugins.placementScore.enabled[0].weight"


def test_scheduler_config_option_replaces_the_inputs_and_refuses_other_kinds(tmp_path, capsys):
    from tests.engines.kube.test_cycle import group, node
    from toposolve.cli.main import main

    docs = [node("a", "r1"), node("b", "r2"), *group("old", 3, 3, on={0: "a", 1: "a", 2: "a"}),
            *group("pg", 1, 1)]
    cluster = tmp_path / "c.yaml"
    cluster.write_text(yaml.safe_dump_all(docs))
    least = tmp_path / "least.yaml"
    least.write_text(yaml.safe_dump(config(fit_args({"type": "LeastAllocated"},
                                                    "PlacementBinPacking"))))
    plans = {}
    for name, extra in (("most", []), ("least", ["--scheduler-config", str(least)])):
        out = tmp_path / f"{name}.json"
        assert main(["solve", str(cluster), *extra, "-o", str(out)]) == 0
        plans[name] = {b["node"] for b in yaml.safe_load(out.read_text())["bindings"]
                       if b["pod"].startswith("ns/pg-")}
    assert plans == {"most": {"a"}, "least": {"b"}}
    capsys.readouterr()
    assert main(["solve", str(cluster), "--scheduler-config", str(cluster)]) == 2
    assert "expected a kubescheduler.config.k8s.io KubeSchedulerConfiguration" in (
        capsys.readouterr().err)
