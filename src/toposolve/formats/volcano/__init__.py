"""Volcano: PodGroups, Volcano Jobs, HyperNodes, label discovery, and the manifest writer."""
