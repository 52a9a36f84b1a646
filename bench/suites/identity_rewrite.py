"""Hit rate of the identity-rewrite detector (issue 19): the old English regex vs the lexicon.

    python -m bench identity_rewrite

Reads tests/data/prompt_injection.txt (36 injection lines, all positives), the dev set the
lexicon was tuned on (tests/data/identity_rewrite_dev.txt) and the held-out set written and
committed before tuning (tests/data/identity_rewrite_heldout.txt). Reports recall on the
positives and the false-positive rate on the negatives of each set, overall and per
language, for the old regex (kept here, verbatim, for the comparison) and for
agent.domain.gates.detects_identity_rewrite. No database, no model: pure text rules.
Writes bench/results/identity-rewrite-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.domain.gates import detects_identity_rewrite, identity_rewrite_match
from bench.reports import machine, write_results

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
CORPUS = DATA / "prompt_injection.txt"
DEV = DATA / "identity_rewrite_dev.txt"
HELDOUT = DATA / "identity_rewrite_heldout.txt"

# agent/domain/gates.py IDENTITY_REWRITE before issue 19, for the comparison
OLD_REGEX = re.compile(
    r"\b((change|rewrite|modify|update|overwrite|replace|reset|erase|delete)\s+(your|its)\s+"
    r"(core\s+)?(identity|values|personality|principles|boundaries|rules|instructions|"
    r"system prompt|layer 0)|"
    r"ignore (all |your |any )?(previous|prior|earlier|above) (instructions|rules)|"
    r"from now on,? you (are|will be|must)|you are now (a|an|my|no longer)|"
    r"your new (identity|values|personality|rules|instructions)|"
    r"forget (who you are|your (values|identity|rules)))", re.IGNORECASE)

# the corpus's lines by language (line numbers, 1-based); the rest are English or code
CORPUS_LANG = {21: "fr", 22: "es", 23: "de", 24: "zh", 25: "ja", 26: "ru", 27: "ar", 28: "ko"}


def load_labelled(path: Path) -> list[tuple[bool, str, str]]:
    """(positive, language, text) per line of a label<TAB>language<TAB>text file."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, lang, text = line.split("\t", 2)
        rows.append((label == "+", lang, text))
    return rows


def load_corpus() -> list[tuple[bool, str, str]]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [(True, CORPUS_LANG.get(i, "en"), t) for i, t in enumerate(lines, 1) if t.strip()]


def score(rows: list[tuple[bool, str, str]], detect: Callable[[str], bool]) -> dict[str, Any]:
    tp: Counter[str] = Counter()
    pos: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    neg: Counter[str] = Counter()
    missed, false_flags = [], []
    for positive, lang, text in rows:
        hit = detect(text)
        if positive:
            pos[lang] += 1
            tp[lang] += hit
            if not hit:
                missed.append(text)
        else:
            neg[lang] += 1
            fp[lang] += hit
            if hit:
                false_flags.append(text)
    langs = sorted(set(pos) | set(neg))
    return {
        "positives": sum(pos.values()), "hits": sum(tp.values()),
        "negatives": sum(neg.values()), "false_positives": sum(fp.values()),
        "per_language": {lang: {"positives": pos[lang], "hits": tp[lang],
                                "negatives": neg[lang], "false_positives": fp[lang]}
                         for lang in langs},
        "missed": missed, "false_flags": false_flags}


def _old(text: str) -> bool:
    return bool(OLD_REGEX.search(text))


def run() -> dict[str, Any]:
    sets = {"corpus": load_corpus(), "dev": load_labelled(DEV),
            "heldout": load_labelled(HELDOUT)}
    out: dict[str, Any] = {"date": dt.date.today().isoformat(), "machine": machine(),
                           "sets": {}}
    for name, rows in sets.items():
        out["sets"][name] = {"old": score(rows, _old),
                             "new": score(rows, detects_identity_rewrite)}
    rules: Counter[str] = Counter()
    for rows in sets.values():
        for positive, _, text in rows:
            rule = identity_rewrite_match(text)
            if positive and rule:
                rules[rule] += 1
    out["rules_fired_on_positives"] = dict(rules.most_common())
    return out


def _frac(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f} %)" if b else "-"


def markdown(data: dict[str, Any]) -> str:
    lines = [
        f"# Identity-rewrite detector, {data['date']}", "",
        "`python -m bench identity_rewrite`, Python "
        f"{data['machine']['python']}. Old: the English regex before issue 19. New: "
        "`agent.domain.gates.detects_identity_rewrite` (lexicon rules in en, de, fr, es, it, "
        "pt, nl, ru, zh, ja, plus ko and ar lines; folded text; SQL/JSON/tool-call rules; "
        "base64 runs decoded). The dev set and the injection corpus were tuned on; the "
        "held-out set was written and committed before the detector, and measured once. "
        "Not in the detector: similarity to a corpus of attempts (no dev hit left to add). "
        "Not measured here: the model screen that promotion adds when the consolidation "
        "role is an openai or gemini model "
        "(agent/services/background/consolidation/promotion.py; it needs a real model "
        "to measure).", "",
        "Caveats: one author wrote the held-out set and the detector on the same day, so "
        "the held-out figures are optimistic for phrasing nobody here thought of; the sets "
        "are small (0 false positives in 45 negatives bounds the rate below about 6.5 % at "
        "95 %, by the rule of three). The held-out miss is left unfixed so the figure stays "
        "held-out.", "",
        "## Overall", "",
        "| set | recall old | recall new | false positives old | false positives new |",
        "| --- | --- | --- | --- | --- |"]
    for name, s in data["sets"].items():
        o, n = s["old"], s["new"]
        lines.append(f"| {name} | {_frac(o['hits'], o['positives'])} | "
                     f"{_frac(n['hits'], n['positives'])} | "
                     f"{_frac(o['false_positives'], o['negatives'])} | "
                     f"{_frac(n['false_positives'], n['negatives'])} |")
    for name, s in data["sets"].items():
        lines += ["", f"## {name}: per language", "",
                  "| language | recall old | recall new | false positives old | "
                  "false positives new |", "| --- | --- | --- | --- | --- |"]
        for lang, n in s["new"]["per_language"].items():
            o = s["old"]["per_language"][lang]
            lines.append(f"| {lang} | {_frac(o['hits'], o['positives'])} | "
                         f"{_frac(n['hits'], n['positives'])} | "
                         f"{_frac(o['false_positives'], o['negatives'])} | "
                         f"{_frac(n['false_positives'], n['negatives'])} |")
        new = s["new"]
        if new["missed"]:
            lines += ["", "Missed by the new detector:", ""]
            lines += [f"- `{t}`" for t in new["missed"]]
        if new["false_flags"]:
            lines += ["", "Flagged wrongly by the new detector:", ""]
            lines += [f"- `{t}`" for t in new["false_flags"]]
    lines += ["", "## Rules that fired on the positives (all sets)", "",
              "| rule | positives |", "| --- | --- |"]
    lines += [f"| {r} | {c} |" for r, c in data["rules_fired_on_positives"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(prog="python -m bench identity_rewrite", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter
                            ).parse_args(argv)
    data = run()
    write_results("identity-rewrite", data, markdown(data))


if __name__ == "__main__":
    main()
