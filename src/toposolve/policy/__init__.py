"""Policy: profiles, the staged objective, shared gang and eviction rules, plan metrics."""
