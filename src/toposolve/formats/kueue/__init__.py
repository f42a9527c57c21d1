"""formats.kueue."""
