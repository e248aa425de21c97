"""strata-lab: the allocation laboratory of strata (see docs/lab.md)."""

__version__ = "0.1.0"
