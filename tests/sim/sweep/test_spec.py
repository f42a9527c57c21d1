"""Sweep specs: grid expansion in order, dotted paths, one-line errors."""

from __future__ import annotations

import copy
import re
import time
from pathlib import Path

import pytest
import yaml

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_SCENARIOS
from toposolve.sim.sweep import load_spec, spec_from_dict
from toposolve.sim.sweep.preflight import check_scenarios


def test_grid_in_order_last_key_fastest(small_spec):
    scenarios = spec_from_dict(small_spec).scenarios()
    assert [s["params"] for s in scenarios] == [
        {"trace.synthetic.load": 0.8, "cluster.variant": "none"},
        {"trace.synthetic.load": 0.8, "cluster.variant": {"drain": "su-00"}},
        {"trace.synthetic.load": 1.4, "cluster.variant": "none"},
        {"trace.synthetic.load": 1.4, "cluster.variant": {"drain": "su-00"}},
    ]
    assert scenarios[3]["spec"]["trace"]["synthetic"] == {
        "jobs": 10,
        "load": 1.4,
        "duration": "30m",
        "seed": 3,
    }
    assert small_spec["base"]["trace"]["synthetic"]["load"] == 1.0  # the base is not changed


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"mode": "simulate"}, "mode"),
        ({"grid": {"engine": []}}, "grid.engine"),
        ({"base": {"trace": {}}}, "base.cluster"),
        ({"colour": 1}, "colour"),
    ],
)
def test_bad_spec_fields_are_errors_naming_the_field(small_spec, change, field):
    with pytest.raises(InputError) as err:
        spec_from_dict({**small_spec, **change}, source="s.yaml")
    assert str(err.value).startswith(f"s.yaml: Sweep: {field}")


def test_malformed_spec_yaml_is_an_input_error(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("kind: Sweep\nbase: [\n")
    with pytest.raises(InputError, match="malformed YAML"):
        load_spec(path)


def _refused(spec: dict) -> str:
    with pytest.raises(InputError) as err:
        spec_from_dict(spec, source="s.yaml")
    text = str(err.value)
    assert "\n" not in text and "pydantic" not in text and "Traceback" not in text
    return text


def _with(small_spec, section: str, **values) -> dict:
    spec = copy.deepcopy(small_spec)
    node = spec
    for key in section.split("."):
        node = node[key]
    node.update(values)
    return spec


@pytest.mark.parametrize(
    ("section", "values", "expected"),
    [
        ("base", {"engnie": "cpsat"}, "s.yaml: Sweep: base.engnie: unknown key (did you mean "
                                      "'engine'?)"),
        ("base.replay", {"cycel": "5m"}, "base.replay.cycel: unknown key (did you mean 'cycle'?)"),
        ("base.trace.synthetic", {"jbos": 3}, "base.trace.synthetic.jbos: unknown key (did you "
                                              "mean 'jobs'?)"),
        ("base.cluster", {"options": [1]}, "base.cluster.options: expected a mapping, got [1]"),
        ("base.cluster", {"nodes": "32"}, "base.cluster.nodes: expected an integer, got '32'"),
        ("base.replay", {"cycle": [1]}, "base.replay.cycle: expected a number or a string"),
        ("base", {"solve": {"time_limit": 1}}, "base.solve: is for mode: solve only"),
        ("base.cluster", {"file": "c.yaml"}, "base.cluster: file and preset exclude each other"),
        ("grid", {"cluster.variant": ["none", {"drain": ["su-00"]}]},
         "grid.cluster.variant[1]: drain: expected a HyperNode name, got ['su-00']"),
        ("grid", {"cluster.variant": [{"allocatable": [1]}]},
         "grid.cluster.variant[0]: allocatable: expected a mapping of resource to amount, got [1]"),
        ("grid", {"cluster..": [1]}, "grid.cluster..: expected a dotted path"),
        ("grid", {"cluster.nodez": [32]}, "grid.cluster.nodez[0]: unknown key (did you mean "
                                          "'nodes'?)"),
        ("grid", {"cluster.nodes": [32, "abc"]}, "grid.cluster.nodes[1]: expected an integer"),
        ("grid", {"trace": [{"synthetic": {}}, {"synthetic": {"jbos": 1}}]},
         "grid.trace[1].synthetic.jbos: unknown key"),
        ("grid", {"mode": ["solve"]}, "grid.mode[0]: unknown key"),
        ("", {"gird": {}}, "s.yaml: Sweep: gird: unknown key (did you mean 'grid'?)"),
    ],
)
def test_unknown_keys_and_wrong_types_name_the_file_and_path(small_spec, section, values,
                                                             expected):
    spec = _with(small_spec, section, **values) if section else {**small_spec, **values}
    assert expected in _refused(spec)


def test_trace_kinds_are_exclusive_and_file_takes_a_path_or_a_mapping(small_spec):
    spec = {**small_spec, "grid": {}}
    for trace in ({"file": "t.csv"}, {"file": {"path": "t.csv", "inflate": 1.2}}):
        spec_from_dict(_with(spec, "base", trace=trace))  # accepted: checked when built
    text = _refused(_with(spec, "base", trace={"file": {"path": "t.csv", "inflat": 1.2}}))
    assert "base.trace.file.inflat: unknown key (did you mean 'inflate'?)" in text
    assert "needs exactly one of" in _refused(_with(spec, "base.trace", file="t.csv"))


def test_scenario_count_is_refused_from_the_grid_sizes_before_expanding(small_spec):
    grid = {f"cluster.options.k{i}": list(range(10)) for i in range(6)}  # 10^6 scenarios
    start = time.perf_counter()
    text = _refused({**small_spec, "grid": grid})
    assert time.perf_counter() - start < 1.0
    assert f"s.yaml: Sweep: grid: 1,000,000 scenarios, more than the limit {MAX_SCENARIOS:,}" \
        == text


def test_a_bad_value_in_the_last_of_many_grid_points_is_named(small_spec):
    grid = {"cluster.seed": list(range(100)), "trace.synthetic.seed": [*range(99), "x"]}
    text = _refused({**small_spec, "grid": grid})
    assert text.endswith("grid.trace.synthetic.seed[99]: expected an integer, got 'x'")


def test_spec_file_alias_bomb_is_refused(tmp_path):
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]" for k in range(1, 9)]
    path = tmp_path / "s.yaml"
    path.write_text("kind: Sweep\nmetadata:\n" + "".join(f"  {x}\n" for x in lines))
    with pytest.raises(InputError, match="s.yaml: .*nodes"):
        load_spec(path)


def test_the_documented_example_is_a_valid_spec():
    text = (Path(__file__).resolve().parents[3] / "docs" / "sweep.md").read_text()
    example = yaml.safe_load(re.search(r"```yaml\n(.*?)```", text, re.S)[1])
    spec = spec_from_dict(example, source="docs/sweep.md")
    scenarios = spec.scenarios()
    assert len(scenarios) == 16
    check_scenarios(spec, scenarios)  # every cluster, trace and engine of it builds
