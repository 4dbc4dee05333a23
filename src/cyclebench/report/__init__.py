"""Reporters: each turns stored results into one output format (console, JSON, ...)."""
