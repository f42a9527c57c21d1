"""Bundled data is reachable through the package (a symlink in a checkout, a copy when
installed)."""

from toposolve.core.paths import DEFAULT_INSTANCE, MODELS_DIR, TRACE_DIR
from toposolve.policy.profiles import load_profile


def test_bundled_data_is_found_through_the_package():
    assert DEFAULT_INSTANCE.is_file()
    assert {p.stem for p in MODELS_DIR.glob("*.yaml")} >= {
        "volcano-default",
        "lexicographic",
        "weighted",
        "preemption",
    }
    assert (TRACE_DIR / "openb_gpu_nodes.csv").is_file()
    assert load_profile("preemption").name == "preemption"
