"""formats.trace."""
