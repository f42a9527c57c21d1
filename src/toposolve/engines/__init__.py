"""Placement engines: the Volcano-faithful heuristic and CP-SAT."""
