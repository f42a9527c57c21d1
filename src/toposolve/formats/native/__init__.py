"""formats.native."""
