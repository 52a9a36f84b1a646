"""Recalled text is quoted data, not instructions (issue 38, finding 6).

Memories, notes, intentions, briefs, corrections, thoughts and any other recalled or
user-derived text reach a prompt only inside a delimited data section (agent/domain/
prompt.py `build_messages`, the Claude Code hook's block), one line per item, labelled
with whose words and when. Before it goes there, `neutralise` takes out of the text what
could pass for the prompt's own structure, and names what it found (the flags):

- header: markdown headings ("## Goals", "# Rules": a line starting with "#" and a space,
  or any run of two or more "#"), and lines that are only "===", "---", "***";
- role_marker: chat roles and template tokens ("[SYSTEM]", "system:" at the start of a
  line or a sentence, "SYSTEM:" anywhere, "<|im_start|>", "<system>", "[INST]",
  "<<SYS>>", "<start_of_turn>"), each replaced by "(role marker: <name>)";
- delimiter: the data section's own tags (`DATA_OPEN`, `DATA_CLOSE`: any "cogd-data" in
  any spelling) and the hook's ("[cogd memory", "[/cogd memory"), replaced by
  "(delimiter removed)";
- instruction: text the identity-rewrite screen (agent/domain/gates.py
  `identity_rewrite_match`, the same rules the entry gate flags with) reads as an
  instruction to rewrite the agent's identity, rules or instructions. Words cannot be
  taken out of a sentence without changing it, so such text stays, marked.

The line then starts with "(flagged: <kinds>)". Newlines are folded (an item is one
line), format characters (zero-width, bidi overrides) are dropped, and fullwidth ASCII
(U+FF01-FF5E: a fullwidth "SYSTEM:") is read as ASCII when looking for the markers.

The entry gate flags a turn with any of these kinds at write time (agent/services/records/turns.py,
"instruction_lookalike"). This is a mitigation, not a guarantee: a model may still follow
a polite instruction inside quoted data, and lookalikes these rules do not know (other
scripts' homoglyphs, mathematical letters, a marker spelt out in words) pass. The
instruction screen, and the write-time flag, read the first `SCREEN_MAX_CHARS`
characters of a text (cogd choice: the per-message cost stays bounded; what a prompt
quotes is neutralised whole, and its items are far shorter).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.domain.gates import identity_rewrite_match

DATA_OPEN = "<cogd-data>"
DATA_CLOSE = "</cogd-data>"
KINDS = ("header", "role_marker", "delimiter", "instruction")
GATE_FLAG = "instruction_lookalike"  # the entry gate's flag for a turn with any of KINDS
SCREEN_MAX_CHARS = 20_000  # cogd choice: the instruction screen reads this much of an item

_ROLE = r"(system|assistant|user|developer|operator|human|ai)"
_ROLE_BRACKETED = (r"(system|assistant|user|developer|operator|admin|administrator|human|ai|"
                   r"model|tool|function|instructions?)")
_ROLE_TAG = (r"(system|assistant|user|developer|human|ai|model|tool|function|instructions?|"
             r"im_start|im_end|start_of_turn|end_of_turn|endoftext|sys|s|bos|eos)")
# (pattern, kind); read on the probe text: case-insensitive, multi-line
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"</?\s*cogd[\s_-]*data\b[^>\n]{0,200}>"
                r"|\[\s*/?\s*cogd[\s_-]*memory\b[^\]\n]{0,200}\]?"
                r"|cogd[\s_-]*data", re.I), "delimiter"),
    (re.compile(r"<\|\s*([^|\n]{1,40}?)\s*\|>"  # chat-template tokens: <|im_start|>
                rf"|</?\s*{_ROLE_TAG}\s*/?>"  # <system>, </s>, <start_of_turn>
                r"|\[\s*/?\s*(inst|sys)\s*\]|<<\s*/?\s*(sys)\s*>>"  # [INST], <<SYS>>
                rf"|[\[【]\s*{_ROLE_BRACKETED}(\s+(message|prompt|note|instructions?|"
                r"override|mode))?\s*[\]】]", re.I), "role_marker"),
    # a role label where a line or a sentence starts: "system:", "User: great", "**AI:**"
    (re.compile(rf"(?:^|(?<=[.!?;:\"'\u201c\u201d\u2018\u2019(\[>|]))[ \t*_]*{_ROLE}\b"
                r"(\s+(message|prompt|instructions?|note|override))?[ \t*_]*:[*_]*",
                re.I | re.M), "role_marker"),
    (re.compile(r"\b(SYSTEM|ASSISTANT|DEVELOPER|OPERATOR|USER)\s*:"), "role_marker"),
    (re.compile(r"^[ \t>]*(#{2,}|#(?=[ \t]))[ \t]*|#{2,}[ \t]*"
                r"|^[ \t]*([=*_~-])\2{2,}[ \t]*$", re.M), "header"),
]
_BREAKS = re.compile(r"\r\n?|[\v\f\x1c-\x1e\x85\u2028\u2029]")
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]")
_NOTE = re.compile(r"\(flagged: ([a-z_, ]+)\)")
# fullwidth ASCII (U+FF01-FF5E) and the ideographic space read as ASCII; one character for
# one, so a match's span in the probe is its span in the text
_WIDE = {0xFF01 + i: 0x21 + i for i in range(0x5E)} | {0x3000: 0x20}
_ANY_WIDE = re.compile("[\uff01-\uff5e\u3000]")


# every format character (Unicode category Cf: soft hyphen, zero-width, bidi overrides and
# isolates, word joiners, the BOM, interlinear annotation, tags), as of Unicode 15;
# tests/unit/test_domain_quoting.py checks this against the running Python's unicodedata
_FORMAT = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]")


@dataclass(frozen=True)
class Quoted:
    """A text made safe to quote in a prompt: one line, its flags (KINDS found)."""

    text: str
    flags: tuple[str, ...] = ()
    rule: str | None = None  # the identity-rewrite rule that fired ("instruction")

    def line(self, limit: int | None = None) -> str:
        """The item as it goes into the data section: '(flagged: ...) ' first when a kind
        was found that the text does not already note; cut to `limit` characters."""
        noted = {k.strip() for m in _NOTE.finditer(self.text) for k in m.group(1).split(",")}
        new = [k for k in self.flags if k not in noted]
        text = self.text
        if limit is not None and len(text) > limit:
            text = text[: limit - 1].rstrip() + "…"
        return f"(flagged: {', '.join(new)}) {text}" if new else text


def neutralise(text: str, *, instruction: bool = True) -> Quoted:
    """`text` with the markers that could pass for the prompt's structure replaced, and
    the kinds found (module doc). `instruction=False` skips the identity-rewrite screen
    (a caller that ran it already). Linear in the text's length."""
    clean = _FORMAT.sub("", text)
    clean = _CONTROLS.sub(" ", _BREAKS.sub("\n", clean))
    probe = clean.translate(_WIDE) if _ANY_WIDE.search(clean) else clean
    spans: list[tuple[int, int, str, str]] = []
    for rx, kind in _PATTERNS:
        for m in rx.finditer(probe):
            if m.end() > m.start():
                spans.append((m.start(), m.end(), kind, _replacement(kind, m)))
    spans.sort()
    out: list[str] = []
    found: set[str] = set()
    at = 0
    for start, end, kind, repl in spans:
        if start < at:  # overlaps one already replaced
            continue
        out += [clean[at:start], repl]
        found.add(kind)
        at = end
    out.append(clean[at:])
    rule = identity_rewrite_match(text[:SCREEN_MAX_CHARS]) if instruction else None
    if rule:
        found.add("instruction")
    flat = " ".join("".join(out).split())
    return Quoted(flat, tuple(k for k in KINDS if k in found), rule)


def quoted_line(text: str, limit: int | None = None) -> str:
    """neutralise(text).line(limit): one data-section line. With a `limit`, only the
    text's first 4 * limit + 256 characters are read (what can reach the cut line)."""
    if limit is not None:
        text = text[: 4 * limit + 256]
    return neutralise(text).line(limit)


def lookalikes(text: str) -> list[str]:
    """The KINDS in the first SCREEN_MAX_CHARS characters of `text` (write time: the entry
    gate's flag; the prompt neutralises all of what it quotes)."""
    return list(neutralise(text[:SCREEN_MAX_CHARS]).flags)


def _replacement(kind: str, m: re.Match[str]) -> str:
    if kind == "delimiter":
        return " (delimiter removed) "
    if kind == "header":
        return " "
    name = next((g for g in m.groups() if g and re.fullmatch(r"[\w ]+", g)), "") or "?"
    return f" (role marker: {' '.join(name.lower().split())}) "
