"""Kubernetes objects every format shares: fields, pod specs, nodes, bindings."""
