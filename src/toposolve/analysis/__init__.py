"""Comparing engines, diffing plans, summarising instances, benchmark suites."""
