"""Reading and writing instances: Kubernetes/Volcano manifests and the native format."""

from toposolve.formats.load import load_instance
from toposolve.formats.volcano.writer import instance_to_manifests, write_manifests

__all__ = ["instance_to_manifests", "load_instance", "write_manifests"]
