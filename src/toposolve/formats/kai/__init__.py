"""KAI-Scheduler: Topologies, Queues, PodGroups with SubGroups, and their writer."""
