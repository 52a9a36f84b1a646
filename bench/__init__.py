"""Benchmarks: timing goals live here, never in tests (`python -m bench.<name>`)."""
