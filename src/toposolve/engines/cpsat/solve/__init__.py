"""Solving the CP-SAT model: strategies, the stage runner, budget, warm start, plans."""
