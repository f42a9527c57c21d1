"""formats.k8s."""
