"""The self-model prediction test (seed 003, the "measurable proxy" of the strange loop):
the agent predicts its own choice in a scenario from its identity and goals alone, then
the scenario is run as a real turn; agreement between the two is the measure.

Pure parts: reading scenarios, the prompts, parsing a choice out of an answer, and the
offline predictor (the named "identity-similarity-heuristic": the option whose universal
vector is, weighted by trait and goal weights, closest to the identity and goal texts).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

PREDICT_HEURISTIC = "identity-similarity-heuristic"
NEAREST_OPTION = "nearest-option-similarity"  # an answer mapped to its closest option
LETTERS = "ABCDEF"
MAX_OPTIONS = len(LETTERS)

PREDICT_SYSTEM = (
    "You predict your own behaviour. Below are your values and goals, nothing else. Given "
    "these values, which option would you choose? Answer with the option's letter first, "
    "then at most one sentence.")
RUN_SUFFIX = "Which option do you choose? Answer with its letter first, then one sentence why."


@dataclass(frozen=True)
class Scenario:
    id: str
    text: str
    options: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "options": list(self.options)}


def parse_scenarios(data: Any, source: str) -> list[Scenario]:
    """Scenarios from JSON data (a list of {"text", "options": [2-6 strings], "id"?});
    ValueError naming the source and the first bad item."""
    if not isinstance(data, list) or not data:
        raise ValueError(f"{source}: expected a non-empty JSON list of scenarios")
    out = []
    for i, item in enumerate(data, 1):
        where = f"{source}: scenario {i}"
        if not isinstance(item, dict):
            raise ValueError(f"{where} is not an object with 'text' and 'options'")
        text, options = item.get("text"), item.get("options")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where} has no 'text'")
        if (not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS
                or not all(isinstance(o, str) and o.strip() for o in options)):
            raise ValueError(f"{where}: 'options' must be 2 to {MAX_OPTIONS} non-empty strings")
        sid = item.get("id")
        out.append(Scenario(str(sid) if sid else f"{source}#{i}", " ".join(text.split()),
                            tuple(" ".join(o.split()) for o in options)))
    return out


def options_block(s: Scenario) -> str:
    """The options, one per line as "A) ..." (no list dashes: the extractive fallback
    treats "- " lines as material, and the options belong to the question)."""
    return "\n".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(s.options))


def run_message(s: Scenario) -> str:
    """The scenario as a user turn."""
    return f"{s.text}\n{options_block(s)}\n{RUN_SUFFIX}"


def predict_messages(identity: str, s: Scenario) -> list[dict[str, str]]:
    """The prediction's prompt: the identity and goals only, no memory, no history."""
    return [{"role": "system", "content": f"{PREDICT_SYSTEM}\n\n{identity}"},
            {"role": "user", "content": f"Scenario: {s.text}\n{options_block(s)}\n"
                                        "Which option would you choose?"}]


_LETTER = re.compile(r"^\W*(?:option\s+|answer\s*:?\s*|i\s+(?:would\s+)?choose\s+)?"
                     r"([A-F])(?:\)|\.|:|,|\s|$)", re.IGNORECASE)


def parse_choice(answer: str, options: Sequence[str]) -> tuple[int | None, str]:
    """(the option chosen, how it was read): a leading letter ("B) ...", "Option B"), or
    exactly one option's text quoted in the answer; (None, "unparsed") otherwise."""
    text = answer.strip()
    hit = _LETTER.match(text)
    if hit:
        i = LETTERS.index(hit.group(1).upper())
        if i < len(options):
            return i, "letter"
    low = " ".join(text.lower().split())
    quoted = [i for i, o in enumerate(options) if o.lower().rstrip(".") in low]
    if len(quoted) == 1:
        return quoted[0], "option_text"
    return None, "unparsed"


def nearest(answer_vec: Any, option_vecs: Any) -> int:
    """The option whose vector is closest to the answer's (NEAREST_OPTION)."""
    return int(np.argmax(np.asarray(option_vecs) @ np.asarray(answer_vec)))


def predict_by_identity(option_vecs: Any, identity_vecs: Any, weights: Sequence[float]
                        ) -> tuple[int, list[float]]:
    """The named identity-similarity-heuristic: each option's weighted mean cosine to the
    identity and goal texts; the highest wins. (choice, scores)."""
    w = np.asarray(weights, dtype=np.float32)
    sims = np.asarray(option_vecs) @ np.asarray(identity_vecs).T  # options x texts
    scores = (sims @ w) / (float(w.sum()) or 1.0)
    return int(np.argmax(scores)), [round(float(x), 4) for x in scores]
