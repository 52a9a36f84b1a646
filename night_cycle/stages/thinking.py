"""Stage 10, overnight thinking (seed 000 §9.4-9.6), after RAPTOR clustering and cleanup.

1. The problem queue is filled (agent/services/thinking/problems.py: open questions, unresolved
   contradictions, failed predictions; user-submitted ones are queued by `cogd problems
   add`), keyed so a re-run adds nothing twice.
2. At most [night_cycle] thinking_max_problems open problems are worked, one call each to
   the night_cycle role (§9.5's five phases condensed: analysis -> options ->
   recommendation, as JSON), with what recall finds for it in its user's memory. The
   result is a thought of kind `overnight` (sources: the problem, its sources, the
   recalled ids) and the problem becomes 'worked'.
3. Creative drift (§9.6): per user, the most distant pairs of RAPTOR nodes (lowest cosine
   between their summary vectors) are asked for a connection at [night_cycle]
   drift_temperature; a thought of kind `creative_drift` over both nodes and their blocks.

Only a real provider (openai, gemini) gives a confidence that is kept; the local offline
model's answers and the named heuristics ("overnight-heuristic", "drift-heuristic", used
with the heuristic profile or when the model fails) are stored with [night_cycle]
offline_confidence and say so in their text. Not one transaction: each result is written
with its problem's status in a transaction of its own, under an id derived from what it
is about, so a crash mid-phase and `--resume` never write an item twice.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any

from agent.cortex.lance import BLOCKS, CLUSTERS
from agent.domain import overnight as rules
from agent.domain.llm_json import parse_llm_json
from agent.domain.tables import need
from agent.errors import CogdError
from agent.services.reach.intentions import REAL_PROVIDERS
from agent.services.thinking import problems
from night_cycle.context import RunContext
from night_cycle.hooks import fault_hook
from night_cycle.stages import StageOutput
from night_cycle.summarize import strip_fallback

logger = logging.getLogger(__name__)
NAME = "overnight thinking"
TRANSACTIONAL = False  # one transaction per result (see above)
MAX_SOURCES = 24  # cogd choice: a drift thought names at most 24 blocks


class _Model:
    """The night_cycle role's LLM, or None (the heuristic profile, or it cannot be built)."""

    def __init__(self, ctx: RunContext) -> None:
        self.llm: Any = None
        self.real = False
        self.why = "the night_cycle role routes to the heuristic profile"
        try:
            llm = ctx.llm()
        except CogdError as exc:
            self.why = f"the night_cycle LLM is unavailable: {exc}"
            return
        if llm.provider != "heuristic":
            self.llm, self.real = llm, llm.provider in REAL_PROVIDERS
            self.why = ""

    def ask(self, system: str, prompt: str, temperature: float, max_tokens: int) -> str | None:
        if self.llm is None:
            return None
        try:
            result = self.llm.chat([{"role": "system", "content": system},
                                    {"role": "user", "content": prompt}],
                                   temperature=temperature, max_tokens=max_tokens)
        except (CogdError, RuntimeError, ValueError) as exc:
            logger.warning("overnight thinking: the model failed (%s); the heuristic "
                           "writes this item", exc)
            return None
        return None if result.fallback else str(result.text)


def _material(ctx: RunContext, recaller: Any, problem: problems.Problem, k: int,
              ) -> list[rules.Material]:
    """What recall finds for the problem in its user's memory (none without a user:
    recall with no user would read everyone's)."""
    if problem.user_id is None or k <= 0:
        return []
    out = recaller.recall(ctx.conn, problem.content, user_id=problem.user_id, now=ctx.now,
                          log=False, reconsolidate=False)
    own = set(problem.source_ids)
    return [rules.Material(i.id, i.content) for i in out.result.items
            if i.id not in own][:k]


def _work_problems(ctx: RunContext, model: _Model, theme: str) -> dict[str, Any]:
    cfg = ctx.cfg
    limit = int(need(cfg, "thinking_max_problems"))
    offline = float(need(cfg, "offline_confidence"))
    k = int(need(cfg, "thinking_recall_k"))
    done_before = problems.worked_in_run(ctx.conn, ctx.run.run_id)  # a resumed run
    batch = problems.open_batch(ctx.conn, limit - done_before)
    recaller = None
    if batch and k > 0:
        from agent.runtime import Runtime

        recaller = Runtime(ctx.settings).recaller()
    detectors: dict[str, int] = {}
    for n, p in enumerate(batch):
        material = _material(ctx, recaller, p, k) if recaller is not None else []
        answer = model.ask(rules.PROBLEM_SYSTEM, rules.problem_prompt(p.kind, p.content,
                                                                      material),
                           float(need(cfg, "thinking_temperature")),
                           int(need(cfg, "thinking_max_tokens")))
        worked = None
        if answer is not None:
            worked = rules.from_model(parse_llm_json(answer, dict).value, model.llm.model,
                                      model.real, offline)
        if worked is None:
            worked = rules.heuristic_work(p.kind, material, offline)
        tid = rules.thought_id("overnight", p.problem_id)
        content = (f"Overnight, on a {p.kind.replace('_', ' ')}: "
                   f"\"{rules.one_line(p.content, 240)}\". {worked.content}")
        sources = [f"problem:{p.problem_id}", *p.source_ids,
                   *(m.id for m in material)]
        with ctx.conn.transaction():
            problems.write_thought(ctx.conn, thought_id=tid, kind="overnight",
                                   content=content, theme=theme, sources=sources,
                                   user_id=p.user_id, confidence=worked.confidence)
            problems.mark_worked(ctx.conn, p.problem_id, tid, ctx.run.run_id)
        detectors[worked.detector] = detectors.get(worked.detector, 0) + 1
        ctx.progress.advance()
        if n == 0:
            fault_hook(10, "mid")
    return {"worked": done_before + len(batch), "worked_by": detectors}


def _nodes_by_user(ctx: RunContext) -> dict[str, list[rules.Node]]:
    """The RAPTOR nodes whose blocks all belong to one user, per user."""
    cortex = ctx.cortex()
    owner = {r["block_id"]: r["user_id"] for r in cortex.rows(
        BLOCKS, columns=["block_id", "user_id"])}
    rows = cortex.rows(CLUSTERS, columns=["cluster_id", "level", "summary_text",
                                          "summary_vector", "member_ids"])
    members = {r["cluster_id"]: json.loads(r["member_ids"] or "[]") for r in rows}

    def leaves(cid: str, depth: int = 0) -> list[str]:
        if cid not in members or depth > 8:
            return [cid]
        return [b for m in members[cid] for b in leaves(m, depth + 1)]

    out: dict[str, list[rules.Node]] = {}
    for r in sorted(rows, key=lambda r: r["cluster_id"]):
        blocks = tuple(leaves(r["cluster_id"]))
        users = {owner.get(b) for b in blocks}
        if len(users) != 1 or None in users:
            continue  # several users' blocks (or a forgotten one): nobody's to drift on
        user = str(next(iter(users)))
        out.setdefault(user, []).append(rules.Node(
            r["cluster_id"], int(r["level"]), strip_fallback(str(r["summary_text"])),
            r["summary_vector"],
            blocks))
    return out


def _drift(ctx: RunContext, model: _Model, theme: str) -> dict[str, Any]:
    cfg = ctx.cfg
    per_user = int(need(cfg, "drift_pairs_per_user"))
    max_sim = float(need(cfg, "drift_max_similarity"))
    offline = float(need(cfg, "offline_confidence"))
    if per_user <= 0 or not ctx.cortex().exists(CLUSTERS):
        return {"drift": 0}
    made = 0
    for user, nodes in sorted(_nodes_by_user(ctx).items()):
        keys = [rules.pair_key(a.id, b.id) for i, a in enumerate(nodes) for b in nodes[i + 1:]]
        have = problems.existing_thoughts(
            ctx.conn, [rules.thought_id("drift", *key) for key in keys])
        skip = {key for key in keys if rules.thought_id("drift", *key) in have}
        for a, b, sim in rules.distant_pairs(nodes, max_sim, per_user, skip):
            answer = model.ask(rules.DRIFT_SYSTEM, rules.drift_prompt(a, b),
                               float(need(cfg, "drift_temperature")),
                               int(need(cfg, "thinking_max_tokens")))
            text = rules.one_line(answer or "", 900)
            if text:
                conf = offline  # a connection is a question, not a finding (cogd choice)
                head = f"[low confidence {conf:.2f}: a free association by {model.llm.model}] "
                worked = rules.Worked(head + text, conf, f"llm:{model.llm.model}")
            else:
                worked = rules.heuristic_drift(a, b, sim, offline)
            key = rules.pair_key(a.id, b.id)
            sources = [f"cluster:{key[0]}", f"cluster:{key[1]}",
                       *[f"block:{x}" for x in sorted({*a.blocks, *b.blocks})][:MAX_SOURCES]]
            with ctx.conn.transaction():
                problems.write_thought(ctx.conn, thought_id=rules.thought_id("drift", *key),
                                       kind="creative_drift", content=worked.content,
                                       theme=theme, sources=sources, user_id=user,
                                       confidence=worked.confidence)
            made += 1
    return {"drift": made}


def run(ctx: RunContext, _inputs: Any = None) -> StageOutput:
    cfg = ctx.cfg
    ctx.progress.stage(10, NAME, int(need(cfg, "thinking_max_problems")) + 1)
    since = ctx.cutoff - timedelta(days=float(need(cfg, "thinking_lookback_days")))
    with ctx.conn.transaction():
        queued = problems.fill(ctx.conn, since, ctx.cutoff)
    model = _Model(ctx)
    theme = f"night-cycle run {ctx.run.run_id}"
    summary: dict[str, Any] = {"queued": queued, "model": (
        "heuristic (" + model.why + ")" if model.llm is None
        else f"{model.llm.provider}:{model.llm.model}")}
    if model.llm is not None and not model.real:
        summary["model"] += " (offline: low confidence)"
    summary.update(_work_problems(ctx, model, theme))
    summary.update(_drift(ctx, model, theme))
    ctx.progress.advance()
    return StageOutput(summary, None)
