"""Kueue: Topologies, ClusterQueues, Workloads and queued Jobs, and their writer."""
