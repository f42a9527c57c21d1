"""The CP-SAT model: node classes, candidates, variables, constraints, objectives."""
