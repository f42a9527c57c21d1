"""engines.common."""
