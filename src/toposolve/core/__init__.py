"""The core model: instance, quantities, topology, the Problem arrays, plans, errors, limits."""
