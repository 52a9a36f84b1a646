"""The benchmark suites, one module each, every one run as `python -m bench <suite> [args]`.

SUITES names them (`python -m bench --help` lists them with each docstring's first line).
The other modules here are parts of a suite: quality_convo and quality_realtalk are
`python -m bench quality --corpus convo|realtalk`.
"""

SUITES = (
    "quality", "speed", "loop", "night",  # `python -m bench all` runs these four
    "adjacent", "api", "body_limit", "calibrate", "cli_recall", "console", "cortex_store",
    "embedder_compare", "embedders",
    "factchat", "fusion_train", "hook", "identity_rewrite", "ingest", "index_recall_real",
    "overnight", "poison", "proactive", "providers", "recall_pools", "reliability", "self_test",
    "tune", "turn", "warm",
)
