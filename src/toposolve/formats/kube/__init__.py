"""Kubernetes Workload API (``scheduling.k8s.io`` Workload / PodGroup) reader and writer."""
