"""Sweep specs: grid expansion in order, dotted paths, one-line errors."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.sim.sweep import load_spec, spec_from_dict


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
