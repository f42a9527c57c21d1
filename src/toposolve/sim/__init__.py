"""Simulation over time: replays and what-if sweeps."""
