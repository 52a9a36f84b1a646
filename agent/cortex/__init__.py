"""The cortex: long-term memory in LanceDB (seed 001 §5), and reconsolidation on access."""
