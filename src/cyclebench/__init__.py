"""cyclebench: measure low-level code in cycles per operation, with its noise, for variants."""

__version__ = "0.1.0"
