"""formats.volcano."""
