"""Stage 5, dual embedding (seed 001 §3.3, §9.3): universal (frozen local model, for
navigation) and native (the configured provider's model) vectors of each block's prose.
Fallback prefixes are stripped before embedding; the stored prose keeps them."""

from __future__ import annotations

from typing import Any

from night_cycle.context import RunContext
from night_cycle.prose import full_text
from night_cycle.stages import StageOutput
from night_cycle.vectors import encode

NAME = "dual embedding"
TRANSACTIONAL = False
BATCH = 64


def run(ctx: RunContext, inputs: dict[str, Any]) -> StageOutput:
    blocks: list[dict[str, Any]] = inputs["blocks"]
    ctx.progress.stage(5, NAME, len(blocks))
    if not blocks:  # a quiet night: no model to load
        return StageOutput({"blocks": 0}, inputs)
    universal, native = ctx.universal(), ctx.native()
    same = native.model_id == universal.model_id
    texts_of = {b["block_id"]: full_text(b["prose"], for_embedding=True) or " " for b in blocks}
    # batches of similar length pad little (attention cost grows with the longest text)
    ordered = sorted(blocks, key=lambda b: len(texts_of[b["block_id"]]))
    for start in range(0, len(ordered), BATCH):
        part = ordered[start:start + BATCH]
        texts = [texts_of[b["block_id"]] for b in part]
        uni = universal.embed_documents(texts)
        nat = uni if same else native.embed_documents(texts)
        for b, u, n in zip(part, uni, nat, strict=True):
            b["universal"], b["native"], b["native_model"] = encode(u), encode(n), native.model_id
        ctx.progress.advance(len(part))
    summary = {"blocks": len(blocks), "universal_model": universal.model_id,
               "native_model": native.model_id, "native_is_universal": same}
    return StageOutput(summary, inputs)
