import pytest


@pytest.fixture()
def small_spec():
    """Four tiny replay scenarios: two loads × two cluster variants."""
    return {
        "apiVersion": "toposolve/v1",
        "kind": "Sweep",
        "base": {
            "engine": "volcano",
            "cluster": {
                "preset": "superpod",
                "nodes": 32,
                "options": {"leaf_size": 8, "fanout": [2]},
            },
            "trace": {"synthetic": {"jobs": 10, "load": 1.0, "duration": "30m", "seed": 3}},
            "replay": {"cycle": "5m"},
        },
        "grid": {
            "trace.synthetic.load": [0.8, 1.4],
            "cluster.variant": ["none", {"drain": "su-00"}],
        },
    }
