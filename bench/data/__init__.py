"""The benchmarks' corpora: generated conversations with graded questions (synth, convo and
its word pools) and loaders of real ones (realtalk). Stdlib only; no database.

GENERATORS write their corpus to a folder: `python -m bench synth|convo --out DIR ...`.
"""

GENERATORS = ("synth", "convo")
