"""Data shipped with the package: the demo session (see README.md here)."""
