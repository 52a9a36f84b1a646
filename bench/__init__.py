"""Benchmarks: timing goals live here, never in tests (`python -m bench <suite>`).

bench/suites: one module per suite; bench/reports: what the reports share (result files,
machine info, the summary of `all`); bench/data: the corpora; bench/common.py: a throwaway
database. bench/README.md says how to run each suite.
"""
