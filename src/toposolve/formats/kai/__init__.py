"""formats.kai."""
