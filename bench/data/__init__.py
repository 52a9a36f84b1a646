"""The benchmarks' corpora: generated conversations with graded questions (synth, convo and
its word pools), a loader of real ones (realtalk) and the fact-recall chat check's question
sets (factchat). Stdlib only; no database.

GENERATORS write their corpus to a folder: `python -m bench synth|convo --out DIR ...`.
"""

GENERATORS = ("synth", "convo")
