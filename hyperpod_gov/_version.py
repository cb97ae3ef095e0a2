"""The package's version: the one source of truth (pyproject.toml reads it; ``hyperpod-gov --version`` prints it)."""

__version__ = "0.4.0"
