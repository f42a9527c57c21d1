"""toposolve."""
