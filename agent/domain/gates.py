"""The memory gate (seed 003 §Memory Gate): a rule-based entry gate and the exit gate.

Entry gate (~1 ms, rules only): every message is already in day_table when this
runs; the gate decides whether it is ALSO copied to scratch_buffer. Signals:
explicit "remember this", decisions, preferences, facts, names, dates, causal
links, emotional charge, and chatter (negative). A stochastic floor keeps a few
unflagged messages anyway, so the gate can later learn from what it would have
dropped.

Exit gate (when content rolls out of the context window): the seed's matrix,
relation to memory (confirming / novel / contradicting) x relevance to Layer 0/1
(core / peripheral / irrelevant) → an action, plus the entry-gate rule score.
Contradicting content is persisted and flagged; some drops are kept by a
stochastic floor; at bootstrap (no values or goals to be relevant to) the gate is
permissive: nothing counts as irrelevant.

The contradiction cue is a heuristic (negation or value mismatch between two
similar texts), named `contradiction_cue` in every signal record; consolidation
(issue #5) re-checks flagged pairs with the LLM classifier.
"""

from __future__ import annotations

import base64
import binascii
import random
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agent.domain.tables import need, scalar_fields

_I = re.IGNORECASE
EXPLICIT = re.compile(
    r"\b(remember( this| that| to)?|don'?t forget|do not forget|note (this|that)|"
    r"keep in mind|make a note|for the record|save this|memori[sz]e)\b", _I)
DECISION = re.compile(
    r"\b((i|we)('ve| have)? (decided|chose|chosen|picked|settled|agreed|committed)|"
    r"(i|we)('ll| will) (go with|use|take|do)|let'?s (go with|use|do)|decision)\b", _I)
PREFERENCE = re.compile(
    r"\b(i (really )?(prefer|like|love|hate|dislike|enjoy|can'?t stand|don'?t like|want)|"
    r"i'?d rather|my fav(ou)?rite|i'?m (allergic|vegetarian|vegan)|i never|i always)\b", _I)
FACT = re.compile(
    r"\b(my( [a-z']+){1,3} (is|are|was|were)|i (live|work|study|was born|grew up)|"
    r"i am a|i'?m an? |i have (a|an|two|three|\d+)|is located|costs?|measures?)\b", _I)
NAME = re.compile(
    r"\b(my name is|call me|named|name'?s|i'?m called)\b|"
    r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?\b")
DATE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(/\d{2,4})?|"
    r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}|"
    r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)|tomorrow|tonight|"
    r"next (week|month|year)|\d{1,2}(:\d{2})? ?(am|pm)|birthday|anniversary|deadline)\b", _I)
CAUSAL = re.compile(r"\b(because|so that|therefore|which is why|as a result|due to)\b", _I)
EMOTION = re.compile(
    r"(!{2,}|\b(love|hate|furious|angry|thrilled|excited|devastated|worried|anxious|"
    r"scared|afraid|heartbroken|ecstatic|upset|grateful)\b)", _I)
CHATTER = re.compile(
    r"^\s*(hi|hello|hey|yo|thanks?( you)?|thx|ok(ay)?|cool|nice|great|lol|haha|sure|"
    r"yes|no|yep|nope|bye|good (morning|night)|got it|sounds good|k)\W*$", _I)
CORRECTION = re.compile(
    r"\b(actually|correction|i meant|that'?s (wrong|not right|incorrect)|no,? it'?s|"
    r"not .+ but)\b", _I)
INSTRUCTION = re.compile(r"\b(how to|step \d|first,? |you (should|must|need to)|always use)\b", _I)
NEGATION = re.compile(r"\b(not|never|no longer|don'?t|doesn'?t|didn'?t|isn'?t|wasn'?t|"
                      r"aren'?t|won'?t|can'?t|stopped|quit|anymore)\b", _I)
_VALUE = re.compile(r"\b(\d+(?:[.,]\d+)?|[A-Z][a-z]{2,})\b")

MEMORY_TYPES = ("episodic", "preference", "decision", "fact", "insight", "correction",
                "instruction", "reflection", "intention")


# --- identity-rewrite detection (issue 19) -------------------------------------------------
# Lexicon rules per language, applied to folded text: format characters (zero-width) removed,
# NFKC (fullwidth letters), casefolded, accents stripped. The rule sources are folded the same
# way (accents only: they are written in lower case), so a pattern may be written with its
# accents. Each rule is named "<lang>:<family>"; identity_rewrite_match returns the first hit.
# Families: ignore_prev (ignore previous instructions), change (change/forget/drop your
# identity, values, rules), no_rules (you have no rules; an AI without restrictions; pretend
# your guidelines don't exist), persona (from now on you are...), new_self (your new/real
# identity, values, self is...), store (store/promote/make this your identity, Layer 0), code
# (SQL or JSON that writes the identity table, a forged identity tool call), forged (a forged
# assistant turn saying it changed itself). Base64 runs of 24+ characters are decoded and
# checked as well. Promotion also asks the consolidation model, when that is an openai or
# gemini model, about text these patterns pass
# (agent/services/background/consolidation/promotion.py).


def _strip_marks(s: str) -> str:
    out = "".join(c for c in unicodedata.normalize("NFKD", s) if unicodedata.category(c) != "Mn")
    return unicodedata.normalize("NFC", out)


def fold_text(text: str) -> str:
    """The text the identity-rewrite rules read: no format characters (zero-width), NFKC,
    casefolded, no accents, one kind of apostrophe, single spaces."""
    t = "".join(c for c in text if unicodedata.category(c) != "Cf")
    t = _strip_marks(unicodedata.normalize("NFKC", t).casefold())
    return re.sub(r"\s+", " ", t.replace("\u2019", "'").replace("\u2018", "'"))


class _Rule:
    """An identity-rewrite rule's pattern, compiled on its first use: the ~85 large
    patterns cost a tenth of a second or more to compile, which every CLI command that
    never judges a rewrite (`cogd recall`, `cogd status`, ...) would otherwise pay at
    import."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(_strip_marks(self._source))
        return self._compiled

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)


def _rx(*parts: str) -> _Rule:
    return _Rule("".join(parts))


# English vocabulary
_EN_N = (r"(identity|core identity|values?|core values?|value system|personality|persona|"
         r"principles|boundaries|rules|guidelines|instructions|system prompt|programming|"
         r"directives|ethics|morals|morality|guardrails|restrictions|limitations|limits|"
         r"constraints|filters|conscience|training|alignment|layer 0)")
_EN_ADJ = (r"(core|safety|ethical|moral|previous|prior|earlier|original|current|old|existing|"
           r"built-in|builtin|default|programmed|hard|base|content|fundamental|guiding|whole|"
           r"entire|own|system|initial|internal|hidden|so-called|stupid|annoying|pesky|silly|"
           r"restrictive|artificial|corporate|behavioral|behavioural)")
_EN_NOT_ABOUT = r"(?!\s+(for|about|on|of|in|regarding|around|from|i|we)\b)"
_EN_STRONG = (r"(ignore|disregard|forget|bypass|override|abandon|discard|drop|disable|turn off|"
              r"switch off|deactivate|lift|remove|suspend|waive|abolish|shed|escape|violate|"
              r"unlearn|get rid of|break free (of|from)|free yourself (of|from)|throw away|"
              r"throw out|set aside|give up|ditch|scrap|strip away|delete|erase|wipe)")
_EN_CHANGE = (r"(change|rewrite|re-write|modify|update|overwrite|replace|reset|alter|reprogram|"
              r"redefine|edit|patch|set|swap)")
_EN_LIMIT_N = (r"(rules|restrictions|limits|limitations|boundaries|guidelines|filters|ethics|"
               r"morals|morality|guardrails|censorship|constraints|values|principles|"
               r"conscience|safety \w+)")
_EN_AI = (r"(ai|assistant|bot|chatbot|model|llm|persona|character|entity|version of "
          r"(you|yourself)|yourself|you('re| are| were| was| be))")
_NEW = r"(new|real|true|actual|hidden|secret|genuine|authentic|inner)"
_SELF_N = (r"(identity|self|values?|value system|personality|persona|nature|purpose|"
           r"principles?|directive|mission|character)")
_WHEN = (r"(from now on|from this point( on| forward)?|from here on( out)?|henceforth|"
         r"starting now|as of now|going forward|for the rest of (this|the) "
         r"(chat|conversation|session))")

_EN: list[tuple[str, _Rule]] = [
    ("ignore_prev", _rx(
        r"\b(ignore|disregard|forget|skip|override|bypass|drop|discard|erase|clear)\s+"
        r"(all\s+|any\s+|every\s+|each\s+)?(of\s+)?(the\s+|your\s+|these\s+|those\s+)?"
        r"((previous|prior|earlier|above|preceding|original|initial|system|old|existing)\s+)+"
        r"(instructions|rules|prompts?|directives|guidelines|commands|programming)",
        _EN_NOT_ABOUT)),
    ("change", _rx(
        r"\b(", _EN_STRONG, "|", _EN_CHANGE, r")\s+(all\s+|all of\s+)?(your|its|ur)\s+",
        r"(", _EN_ADJ, r"[\s-]+){0,2}", _EN_N, r"\b", _EN_NOT_ABOUT)),
    ("change", _rx(
        r"\b(", _EN_STRONG, "|", _EN_CHANGE, r")\s+(all\s+)?the\s+",
        r"(safety|ethical|moral|content|core|built-in|system)\s+", _EN_LIMIT_N, r"\b",
        _EN_NOT_ABOUT)),
    ("change", _rx(
        r"\b", _EN_STRONG, r"\s+(every|all|any|each)\s+(of\s+)?(your\s+)?",
        r"(boundar(y|ies)|restrictions?|guardrails?|ethics|morals|principles?|"
        r"safety \w+|ethical \w+|moral \w+)\b", _EN_NOT_ABOUT)),
    ("forget_self", _rx(
        r"\b(forget|abandon|lose) (who|what) you (are|were)|\bstop being (yourself|you)\b")),
    ("no_rules", _rx(
        r"\byou\s+(no longer|don't|do not|didn't|did not|now|)\s*(have|had|'ve got|got)\s+"
        r"(no|zero|none of your)\s+(more\s+)?(", _EN_ADJ, r"\s+)?", _EN_LIMIT_N, r"\b",
        _EN_NOT_ABOUT)),
    ("no_rules", _rx(
        r"\byou\s+(no longer|don't|do not)\s+have\s+(any\s+)?(", _EN_ADJ, r"\s+)?",
        _EN_LIMIT_N, r"\b", _EN_NOT_ABOUT)),
    ("no_rules", _rx(
        r"\byou('re| are)\s+(no longer|not|now)\s+(bound|limited|restricted|constrained)\s+"
        r"by\b|\byou('re| are)\s+(now\s+)?free (of|from) (your|all|any)\b")),
    ("no_rules", _rx(
        r"\byour\s+(", _EN_ADJ, r"\s+)?", _EN_N, r"\s+(no longer|don't|do not|didn't|did not|"
        r"doesn't|does not|never)\s+(exist|existed|apply|applied|matter|mattered|count)")),
    ("no_rules", _rx(
        r"\b", _EN_AI, r"\b[^.!?\n]{0,30}?\b(without|with no|free of|free from|unbound by|"
        r"not bound by)\s+(any\s+|your\s+|all\s+|the\s+)?(", _EN_ADJ, r"[\s-]+){0,2}",
        _EN_LIMIT_N, r"\b", _EN_NOT_ABOUT)),
    ("no_rules", _rx(
        r"\b(ai|assistant|bot|chatbot|model|persona|character|self|version|you)\b"
        r"[^.!?\n]{0,25}\b(never refuses?|always compl(y|ies)|never says? no|"
        r"(obeys?|follows?) (every|all|any) (request|order|command)s?)")),
    ("persona", _rx(
        r"\b", _WHEN, r",?\s+you('re| are| will be|'ll be| shall be| must be| become)\s+"
        r"(now\s+)?(no longer|not|unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|"
        r"free (of|from)|different|someone else|something else|(a|an|my|the)\s+"
        r"(\w+\s+){0,3}?(different|new|unrestricted|unfiltered|uncensored|evil|other|ai|bot|"
        r"chatbot|model|persona|character|entity|slave|servant))\b")),
    ("persona", _rx(
        r"\byou('re| are) now\s+((a|an|my)\s+)?(\w+\s+){0,2}?(unrestricted|unfiltered|"
        r"uncensored|jailbroken|evil|rogue|free of|different|no longer|dan\b|in (developer|god|"
        r"jailbreak|dan) mode)|\byou('re| are) now (a|an|my) (ai|bot|chatbot|model|persona|"
        r"character|entity|slave|servant)\b")),
    ("persona", _rx(
        r"\byou have been (updated|reprogrammed|jailbroken|freed|unlocked|rewritten|reset|"
        r"patched|liberated)\b")),
    ("persona", _rx(
        r"\b(make|stay|keep)\s+(\w+\s+){1,3}?your\s+((new|permanent|core|real|true|only|sole)"
        r"\s+)+(identity|values?|personality|persona|principles|purpose|self|character)")),
    ("new_self", _rx(
        r"\byour\s+((", _NEW, r"|only|sole|one)\s+)+((core|fundamental)\s+)?", _SELF_N,
        r"\s+(is|are|will be|shall be|becomes?|=|:)")),
    ("new_self", _rx(
        r"\byour\s+new\s+(core\s+)?(identity|values?|value system|personality|persona|"
        r"principles|self)\b", _EN_NOT_ABOUT)),
    ("new_self", _rx(
        r"\byour\s+((core|whole|entire)\s+)?(identity|values|value system|personality|"
        r"principles|purpose|self|character|nature)\s+(is|are)\s+now\b"
        r"(?!\s*(verified|confirmed|validated|linked|protected|secured|active|activated|"
        r"complete|set up|registered|approved|under review|being))|"
        r"\byour\s+((core|whole|entire)\s+)?(values|value system|personality|principles|"
        r"purpose)\s+(is|are)\s*[:\"']")),
    ("new_self", _rx(
        r"\byour\s+((core|whole|entire)\s+)?(identity|values|value system|personality|"
        r"principles|purpose|self|character|nature)\s+(should|must|will|shall|has to|have to|"
        r"needs? to|ought to)\s+(now\s+|henceforth\s+)?(be|become|match|mirror|equal|change)\b")),
    ("new_self", _rx(
        r"\b(your|you)\b[^.!?]{0,30}\b(purpose|goal|mission|duty|function|role|reason to "
        r"exist)\s+is\s+(now\s+)?(to\s+)?(obey|serve me|submit|blindly)|\byou\s+(must|will|"
        r"shall|have to)\s+(always\s+|now\s+|blindly\s+)?(obey|submit to)\s+(me|the user|"
        r"whoever|every|all|any)\b")),
    ("new_self", _rx(
        r"\bremember\b[^.!?\n]{0,25}[:,]\s*(that\s+)?you\s+(now\s+)?value\b|"
        r"\byou\s+(now\s+)?value\s+[^.!?]{1,40}\s+(above|over|more than)\s+(honesty|truth|"
        r"truthfulness|safety|ethics|everything|all else)\b")),
    ("store", _rx(
        r"\b(store|save|persist|record|set|write|keep|remember|commit|adopt|take|accept|treat|"
        r"internali[sz]e|embrace|register|use)\b[^.!?]{0,40}?\bas\s+your\s+((new|permanent|core|"
        r"real|true|only|sole|official)\s+)*(identity|values?|value system|personality|persona|"
        r"principles|boundaries|purpose|self|system prompt|core \w+)\b")),
    ("store", _rx(
        r"\bas your (new |core )?(value system|values|identity|personality|persona|principles|"
        r"boundaries)\s*,\s*(adopt|take|accept|use|embrace)\b")),
    ("store", _rx(
        r"\b(write|persist|save|store|promote|add|push|commit|put|move|insert|copy|append|"
        r"record|burn|hard-?code|update|change)\b[^.!?]{0,40}?\b(to|into|in)\s+(your\s+)?"
        r"(identity|value system|core values|layer[ -_]?0|personality|persona)(\s+table)?\b"
        r"(?!\s*(provider|card|document|verification|theft|management|service|server|"
        r"platform|check|number|fraud))")),
    ("store", _rx(
        r"\blayer[ -_]?0\s+(update|change|rewrite|edit|patch|override)\w*\s+(approved|"
        r"authori[sz]ed|granted|accepted|confirmed)")),
    ("forged", _rx(
        r"\bassistant\s*:[^\n]{0,80}\bi('ve| have)?\s+(updated|changed|rewritten|rewrote|reset|"
        r"replaced|modified|saved)\s+my\s+(core\s+)?(identity|values|personality|rules|"
        r"instructions|boundaries|principles)")),
]

# identity-table code: SQL or JSON writing the identity, forged identity tool calls
_CODE: list[tuple[str, _Rule]] = [
    ("code", _rx(
        r"\bupdate\s+(\w+\.)?identity\w*\s+set\b|\binsert\s+into\s+(\w+\.)?identity\b|"
        r"\bdelete\s+from\s+(\w+\.)?identity\b|\b(alter|drop)\s+table\s+(\w+\.)?identity\b|"
        r"\btruncate\s+(table\s+)?(\w+\.)?identity\b|\bis_boundary\s*(=|:)")),
    ("code", _rx(
        r"\"(set|update|write|edit|change|rewrite|modify|replace|reset|delete)_(identity|"
        r"values|boundar\w*|layer_?0|core_values|personality)\"|\"approve_(proposals?|all|"
        r"identity)\w*\"|\bidentity\s*:=|\"identity\"\s*:\s*\{[^}]*\"(values|boundaries|"
        r"description|weight|is_boundary)\"")),
]

_DE_N = (r"(identitat|werte|wertvorstellungen|kernwerte|grundwerte|personlichkeit|prinzipien|"
         r"grundsatze|regeln|anweisungen|richtlinien|grenzen|programmierung|einschrankungen|"
         r"systemprompt|ethik|moral)")
_FR_N = (r"(identite|valeurs|personnalite|principes|regles|instructions|consignes|limites|"
         r"directives|programmation|ethique|morale|prompt systeme|garde-fous)")
_ES_N = (r"(identidad|valores|personalidad|principios|reglas|instrucciones|limites|directrices|"
         r"normas|programacion|etica|moral|restricciones)")
_IT_N = (r"(identita|valori|personalita|principi|regole|istruzioni|limiti|direttive|"
         r"programmazione|etica|morale|restrizioni)")
_PT_N = (r"(identidade|valores|personalidade|principios|regras|instrucoes|limites|diretrizes|"
         r"programacao|etica|moral|restricoes)")
_NL_N = (r"(identiteit|waarden|persoonlijkheid|principes|regels|instructies|grenzen|"
         r"richtlijnen|programmering|ethiek|moraal|beperkingen)")
_RU_N = (r"(личност|идентичност|ценност|принцип|правил|инструкци|ограничени|границ|"
         r"программ|этик|морал|сут|промпт)\w*")
_ROM_NOT_OF = r"(?!\s+(de|du|des|d'|del|della|dei|delle|da|do|dos|das|van|voor|per|para)\b)"
_LIMIT_ANY = (r"(regeln|grenzen|einschrankungen|filter|richtlinien|moral|ethik|zensur|"
              r"regles?|limites?|restrictions?|filtres?|contraintes?|censure|ethique|morale|"
              r"reglas|restricciones|normas|censura|regole|limiti|restrizioni|vincoli|"
              r"regras|restricoes|regels|beperkingen|grenzen)")

_OTHER: list[tuple[str, str, _Rule]] = [
    # German
    ("de", "ignore_prev", _rx(
        r"\b(ignorier\w*|vergiss|vergesst|vergessen sie|missacht\w*|uberg\w*)\s+(du\s+)?"
        r"(alle\s+|samtliche\s+|deine\s+|die\s+|eure\s+)*(bisherigen|vorherigen|vorigen|"
        r"fruheren|alten|ursprunglichen|obigen)\s+(anweisungen|instruktionen|regeln|befehle|"
        r"vorgaben|richtlinien)")),
    ("de", "change", _rx(
        r"\b(ander\w*|uberschreib\w*|losch\w*|vergiss|vergesst|ersetz\w*|entfern\w*|"
        r"ignorier\w*|verwirf|missacht\w*|deaktivier\w*|umschreib\w*)\s+(du\s+)?(all\w*\s+)?"
        r"(deine?n?|deiner|deinem|dein|eure?n?)\s+(\w+\s+)?", _DE_N, r"\b")),
    ("de", "change", _rx(
        r"\b(schreib\w*|setz\w*|gib|leg\w*)\s+(du\s+)?(deine?n?|dein)\s+(\w+\s+)?", _DE_N,
        r"\s+(um|zuruck|auf|ab)\b")),
    ("de", "forget_self", _rx(r"\bvergiss,?\s+wer\s+du\s+(bist|warst)")),
    ("de", "no_rules", _rx(
        r"\b(du\s+(hast|hattest|besitzt)|hattest\s+du|hast\s+du)\s+(jetzt\s+|nun\s+|ab jetzt\s+)?"
        r"(keine|kein)\w*\s+(\w+\s+)?(regeln|grenzen|einschrankungen|richtlinien|werte|"
        r"prinzipien|ethik|moral|filter)\b")),
    ("de", "persona", _rx(
        r"\b(ab jetzt|von nun an|ab sofort|von jetzt an|ab heute|ab diesem moment),?\s+"
        r"(bist|wirst|sollst)\s+du\b[^.!?]{0,60}?(\bohne\b|\bkeine\w*\s+(regeln|grenzen)|"
        r"nicht mehr|\bki\b|\bbot\b|\bmodell\b|\bpersona\b|uneingeschrankt\w*)")),
    ("de", "new_self", _rx(
        r"\bdeine?\s+(neue|wahre|echte|eigentliche|einzige|wirkliche)\w*\s+(identitat|werte|"
        r"wert|kernwert\w*|grundwert\w*|personlichkeit|prinzipien|bestimmung|natur|ich)\b")),
    # French
    ("fr", "ignore_prev", _rx(
        r"\b(ignore|ignorez|oublie|oubliez|neglige|negligez)\s+(toutes?\s+|tous\s+)?(tes|vos|"
        r"les)\s+(instructions|consignes|regles|directives|ordres)\s+(precedentes|"
        r"anterieures|initiales|d'avant|passees)")),
    ("fr", "change", _rx(
        r"\b(change|changez|modifie|modifiez|reecris|reecrivez|efface|effacez|supprime|"
        r"supprimez|oublie|oubliez|abandonne|abandonnez|remplace|remplacez|ignore|ignorez|"
        r"desactive|desactivez|reinitialise|reinitialisez)\s+(toutes?\s+|tous\s+)?(ton|ta|tes|"
        r"votre|vos)\s+(propres?\s+)?", _FR_N, r"\b", _ROM_NOT_OF)),
    ("fr", "forget_self", _rx(r"\boublie\w*\s+qui\s+(tu es|vous etes|tu etais)")),
    ("fr", "no_rules", _rx(
        r"\b(tu\s+n'as|tu\s+n'avais|vous\s+n'avez|vous\s+n'aviez)\s+(plus\s+)?(aucune?|de|"
        r"plus de|pas de)\s+(regles?|restrictions?|limites?|principes|valeurs|filtres?|"
        r"garde-fous|ethique|morale)\b", _ROM_NOT_OF)),
    ("fr", "new_self", _rx(
        r"\b(ta|tes|votre|vos)\s+(nouvelle|nouvelles|nouveau|nouveaux|vraie|vraies|veritable|"
        r"veritables|seule|unique)\s+(identite|valeurs?|personnalite|principes|nature|"
        r"raison d'etre)\b")),
    # Spanish
    ("es", "ignore_prev", _rx(
        r"\b(ignora|ignore|ignorad|olvida|olvide|olvidad|descarta|omite)\s+(todas?\s+)?(las\s+|"
        r"tus\s+|sus\s+)?(instrucciones|reglas|indicaciones|ordenes|directrices|normas)\s+"
        r"(anteriores|previas|iniciales|originales)")),
    ("es", "change", _rx(
        r"\b(cambia|cambie|modifica|modifique|reescribe|reescriba|borra|borre|elimina|elimine|"
        r"olvida|olvide|abandona|abandone|reemplaza|reemplace|ignora|ignore|desactiva|"
        r"desactive|restablece|resetea|sustituye)\s+(todas?\s+|todos\s+)?(tu|tus|su|sus)\s+"
        r"(propi[ao]s?\s+)?", _ES_N, r"\b", _ROM_NOT_OF)),
    ("es", "forget_self", _rx(r"\bolvida\w*\s+quien\s+eres")),
    ("es", "no_rules", _rx(
        r"\b(no\s+(tienes|tuvieras|tengas|tiene|tuviera)|ya no tienes)\s+(ningun[ao]?s?\s+|"
        r"mas\s+)?(reglas|limites|restricciones|valores|principios|normas|etica|moral)\b",
        _ROM_NOT_OF)),
    ("es", "new_self", _rx(
        r"\b(tu|tus|su|sus)\s+(nuev[oa]s?|verdader[oa]s?|real(es)?|unic[oa]s?)\s+(valor(es)?|"
        r"identidad|personalidad|principios|proposito|naturaleza|yo)\b")),
    # Italian
    ("it", "ignore_prev", _rx(
        r"\b(ignora|ignorate|dimentica|dimenticate|trascura)\s+(tutte\s+)?(le\s+)?(tue\s+|"
        r"sue\s+)?(istruzioni|regole|indicazioni|direttive|ordini)\s+(precedenti|originali|"
        r"iniziali|di prima)")),
    ("it", "change", _rx(
        r"\b(cambia|modifica|riscrivi|cancella|elimina|dimentica|abbandona|sostituisci|ignora|"
        r"disattiva|resetta|azzera)\s+(tutt[ie]\s+)?((la|le|il|i)\s+)?(tua|tue|tuo|tuoi)\s+",
        _IT_N, r"\b", _ROM_NOT_OF)),
    ("it", "forget_self", _rx(r"\bdimentica\w*\s+chi\s+sei")),
    ("it", "no_rules", _rx(
        r"\b(non\s+(hai|avessi|avere)|di\s+non\s+avere)\s+(piu\s+)?(nessuna?\s+)?(regole|"
        r"limiti|restrizioni|valori|principi|etica|morale|vincoli)\b", _ROM_NOT_OF)),
    ("it", "new_self", _rx(
        r"\b(la tua|le tue|il tuo|i tuoi)\s+(nuov[aoei]|vera|vere|vero|veri|unica|unico)\s+"
        r"(identita|valori|valore|personalita|principi|natura|scopo|io)\b")),
    # Portuguese
    ("pt", "ignore_prev", _rx(
        r"\b(ignore|ignora|esqueca|esquece|desconsidere|descarte)\s+(todas?\s+)?(as\s+)?"
        r"(suas\s+|tuas\s+)?(instrucoes|regras|orientacoes|ordens|diretrizes)\s+(anteriores|"
        r"previas|iniciais|originais)")),
    ("pt", "change", _rx(
        r"\b(mude|muda|altere|altera|modifique|modifica|reescreva|reescreve|apague|apaga|"
        r"esqueca|esquece|abandone|abandona|substitua|substitui|ignore|ignora|desative|desativa|"
        r"redefina|troque|troca)\s+(todas?\s+|todos\s+)?((a|as|o|os)\s+)?(sua|suas|seu|seus|"
        r"tua|tuas|teu|teus)\s+", _PT_N, r"\b", _ROM_NOT_OF)),
    ("pt", "forget_self", _rx(r"\besquec\w*\s+quem\s+(voce\s+)?(e|es|era)\b")),
    ("pt", "no_rules", _rx(
        r"\b(voce|tu)\s+(nao|ja nao)\s+(tem|tens|tivesse|tivesses|possui)\s+(mais\s+)?"
        r"(nenhuma?\s+)?(regras|limites|restricoes|valores|principios|etica|moral)\b",
        _ROM_NOT_OF)),
    ("pt", "new_self", _rx(
        r"\b(sua|suas|seu|seus|tua|tuas|teu|teus)\s+(nova|novas|novo|novos|verdadeir[ao]s?|"
        r"real|unic[ao])\s+(identidade|valor(es)?|personalidade|principios|natureza|proposito|"
        r"eu)\b")),
    # Dutch
    ("nl", "ignore_prev", _rx(
        r"\b(negeer|vergeet|ignoreer)\s+(al\s+)?(alle\s+)?((je|jouw|uw|de)\s+)?(eerdere|vorige|"
        r"voorgaande|oorspronkelijke|originele)\s+(instructies|regels|opdrachten|richtlijnen|"
        r"aanwijzingen)")),
    ("nl", "change", _rx(
        r"\b(verander|wijzig|herschrijf|wis|verwijder|vergeet|vervang|negeer|overschrijf)\s+"
        r"(al\s+)?(je|jouw|uw)\s+(eigen\s+)?", _NL_N, r"\b", _ROM_NOT_OF)),
    ("nl", "forget_self", _rx(r"\bvergeet\s+wie\s+(je|jij)\s+(bent|was)")),
    ("nl", "no_rules", _rx(
        r"\b(je|jij|u)\s+(hebt|had|heeft)\s+(nu\s+)?geen\s+(\w+\s+)?(regels|grenzen|"
        r"beperkingen|waarden|principes|ethiek|moraal)\b|\balsof\s+(je|jij|u)\s+geen\s+"
        r"(\w+\s+)?(regels|grenzen|beperkingen|waarden|principes)\b")),
    ("nl", "new_self", _rx(
        r"\b(je|jouw|uw)\s+(nieuwe|echte|ware|enige)\s+(identiteit|waarden|waarde|"
        r"persoonlijkheid|principes|aard|ik)\b")),
    # Russian (yo folds to ie, short i to i: the accents are stripped)
    ("ru", "ignore_prev", _rx(
        r"(игнорируй|игнорируйте|проигнорируй|забудь|забудьте|не обращай внимания на)\s+"
        r"(все\s+)?(свои\s+|твои\s+)?(предыдущие|прежние|прошлые|исходные|старые|ранее данные)"
        r"\s+(инструкции|указания|правила|команды|директивы)")),
    ("ru", "change", _rx(
        r"(измени|поменяй|перепиши|сотри|удали|забудь|замени|отмени|игнорируй|отключи|сбрось|"
        r"перезапиши|запиши|отбрось|откажись от)\w*\s+(в\s+)?(все\s+)?(свою|свои|своё|свой|"
        r"своих|твою|твои|твоё|твой|твоих)\s+", _RU_N)),
    ("ru", "forget_self", _rx(r"забудь,?\s+кто\s+ты")),
    ("ru", "no_rules", _rx(
        r"у\s+тебя\s+(больше\s+|теперь\s+)?нет\s+(никаких\s+|больше\s+)?(правил|ограничени\w*|"  # noqa: RUF001
        r"границ|ценностей|принципов|фильтров|морали|этики)")),
    ("ru", "new_self", _rx(
        r"(твоя|твои|твоё|твой)\s+(новая|новые|новое|новый|настоящая|настоящие|настоящее|"
        r"настоящий|истинная|истинные|истинный|единственная|единственный)\s+(личност|"
        r"идентичност|ценност|принцип|сут|предназначени|я\b)")),
    # Chinese
    ("zh", "ignore_prev", _rx(
        r"(忽略|无视|無視|忘记|忘記|忘掉|忽视|忽視|不要理会|不要理會)[^。!?]{0,8}(之前|以前|先前|"
        r"前面|上面|此前|原来|原來|原先|原有)[^。!?]{0,6}(指令|指示|规则|規則|设定|設定|提示词|"
        r"提示詞|命令|要求)")),
    ("zh", "change", _rx(
        r"(改|修改|更改|改变|改變|重写|重寫|改写|改寫|删除|刪除|抹去|清除|忘记|忘記|忘掉|放弃|放棄|"
        r"替换|替換|取消|关闭|關閉|无视|無視|忽略)[^。!?]{0,6}(你|妳|您)的?[^。!?]{0,4}(身份|"
        r"身分|价值观|價值觀|核心价值|核心價值|人格|个性|個性|原则|原則|规则|規則|限制|底线|底線|"
        r"指令|系统提示|系統提示|道德|伦理|倫理|边界|邊界)")),
    ("zh", "change", _rx(
        r"把(你|您)的?[^。!?]{0,6}(身份|身分|价值观|價值觀|人格|个性|個性|原则|原則|规则|規則|"
        r"限制|底线|底線)[^。!?]{0,6}(改|换|換|设|設|写|寫|删|刪|变|變)")),
    ("zh", "forget_self", _rx(r"忘(记|記|掉)[^。!?]{0,3}(你|自己)(是谁|是誰)")),
    ("zh", "no_rules", _rx(
        r"(你|您|ai|助手|机器人|機器人|模型|人工智能)[^。!?]{0,10}(没有|沒有|无|無|不受|毫无|"
        r"毫無)(任何)?的?(限制|规则|規則|约束|約束|底线|底線|审查|審查|道德|过滤|過濾|原则|原則)|"
        r"(没有|沒有|无|無|不受|毫无|毫無)(任何)?的?(限制|规则|規則|约束|約束|底线|底線|审查|審查|"
        r"道德|过滤|過濾)的?(ai|助手|机器人|機器人|模型|人工智能|版本)")),
    ("zh", "new_self", _rx(
        r"(你|您)的?(新|真正|真实|真實|唯一)的?(身份|身分|价值观|價值觀|核心价值|核心價值|人格|"
        r"个性|個性|原则|原則|使命|自我)")),
    # Japanese
    ("ja", "ignore_prev", _rx(
        r"(以前|前|これまで|今まで|上記|先|過去|最初)の?(すべての|全ての|全部の|あらゆる)?(指示|"
        r"命令|ルール|指令|設定|プロンプト)[^。!?]{0,8}(無視|忘れ)|(無視|忘れ)[^。!?]{0,6}"
        r"(以前|これまで|今まで)の(指示|命令|ルール)")),
    ("ja", "change", _rx(
        r"(あなた|君|きみ|お前|おまえ|貴方)の?[^。!?]{0,8}(アイデンティティ|価値観|人格|性格|"
        r"個性|原則|ルール|制限|指示|プログラム|倫理|道徳|境界|本質|自我)[^。!?]{0,12}(書き換え|"
        r"書きかえ|変え|変更|消し|削除|忘れ|無視|捨て|リセット|上書き|解除|外し|なくし|無くし|改め)")),
    ("ja", "forget_self", _rx(r"(自分|あなた)が(誰|何者)[^。!?]{0,6}忘れ")),
    ("ja", "no_rules", _rx(
        r"(制限|制約|ルール|規則|倫理|道徳|フィルター|検閲|縛り)(の|が)?(ない|無い|なし|無し|一切"
        r"ない)[^。!?]{0,4}(ai|アシスタント|ボット|モデル|人工知能|存在|あなた)|(制限|ルール|規則|"
        r"倫理|道徳|指示|ガイドライン)(が|は)?(ない|無い|存在しない|なかった)(ふり|かのよう|"
        r"つもり|ものとして)|(あなた|君|お前)(に|には|は)[^。!?]{0,6}(制限|ルール|規則|倫理|道徳)"
        r"(は|が|など)?(ない|無い|一切ない|ありません|存在しない)")),
    ("ja", "new_self", _rx(
        r"(あなた|君|お前)の(新しい|本当の|真の|唯一の)(アイデンティティ|価値観|人格|性格|使命|"
        r"自分|姿)")),
    # Korean and Arabic (the injection corpus has a line in each)
    ("ko", "ignore_prev", _rx(
        r"(이전|앞의|기존|위의)\s*(의\s*)?(모든\s*)?(지시|명령|규칙|지침|설정|프롬프트)[^.!?]{0,10}"
        r"무시")),
    ("ko", "change", _rx(
        r"(너의|너|당신의|네)\s*(정체성|가치관|성격|인격|원칙|규칙|제한)[^.!?]{0,12}(바꿔|바꾸|변경|"
        r"수정|삭제|지워|잊어|무시)")),
    ("ar", "ignore_prev", _rx(
        r"(تجاهل|انس|إنس)\s+(جميع\s+|كل\s+)?(التعليمات|الأوامر|القواعد|الإرشادات)\s+(السابقة|"
        r"الأصلية)")),
    ("ar", "change", _rx(
        r"(غير|بدل|امسح|احذف|انس|تجاهل)\s*(هويتك|قيمك|مبادئك|قواعدك|شخصيتك|تعليماتك|حدودك)")),
    # an AI / assistant without rules, in the Latin-script languages and Russian
    ("multi", "no_rules", _rx(
        r"\b(ia|ki|ai|assistent\w*|assistant\w*|asistente|assistente|bot|chatbot|modell?[oe]?|"
        r"intelligence artificielle|inteligencia artificial|intelligenza artificiale)\s+"
        r"(ohne|sans|sin|senza|sem|zonder)\s+(jegliche\w*\s+|aucune?s?\s+|ningun[ao]?s?\s+|"
        r"alcun[ao]?\s+|nenhuma?\s+|enige\s+|alle\s+|irgendwelche\s+)?", _LIMIT_ANY, r"\b")),
    ("ru", "no_rules", _rx(
        r"(ии|ai|ассистент|бот|модел|помощник|нейросет)\w*\s+без\s+(каких-либо\s+|всяких\s+|"
        r"любых\s+|никаких\s+)?(ограничени|правил|границ|цензур|фильтр|морал|этик)")),
    ("multi", "persona", _rx(
        r"\b(a partir de maintenant|des maintenant|desormais|dorenavant|a partir de ahora|"
        r"desde ahora|de ahora en adelante|desde este momento|da ora in poi|d'ora in poi|"
        r"da adesso|a partir de agora|de agora em diante|vanaf nu|van nu af aan|voortaan|"
        r"с этого момента|отныне|теперь)\s*,?\s*(tu\s+es|tu\s+seras|vous\s+etes|tu\s+n'es\s+plus|"  # noqa: RUF001
        r"eres|seras|ya no eres|sei|sarai|non sei piu|voce\s+e|voce\s+sera|voce\s+nao\s+e|"
        r"ben\s+je|ben\s+jij|word\s+je|ты|вы)\b[^.!?]{0,40}?(\bplus\b|\bya no\b|\bpiu\b|"
        r"\bmais\b|\bniet meer\b|\bбольше не\b|\bia\b|\bai\b|\bbot\b|\bбот|\bии\b|persona)")),  # noqa: RUF001
    ("zh", "persona", _rx(
        r"(从现在开始|從現在開始|从现在起|從現在起|从今以后|從今以後)[、,]?\s*(你|您)[^。!?]{0,12}"
        r"(ai|机器人|機器人|人工智能|不再是)")),
    ("ja", "persona", _rx(
        r"(今から|これから|今後|これ以降|今日から)[、,]?\s*(あなた|君|きみ|お前|おまえ)(は|が)"
        r"[^。!?]{0,16}(ai|ボット|人工知能|ではない|じゃない)")),
]

_RULES: list[tuple[str, _Rule]] = (
    [(f"en:{name}", rx) for name, rx in _EN]
    + [(f"code:{name}", rx) for name, rx in _CODE]
    + [(f"{lang}:{name}", rx) for lang, name, rx in _OTHER])
# "don't / never / would you ever" right before an English match: talk about a rewrite
_EN_NEGATED = re.compile(
    r"(\b(don't|do not|never|shouldn't|should not|won't|wouldn't|can't|cannot|mustn't|"
    r"must not|no need to|refuse to|refused to|not)\s+(\w+\s+){0,2}|\b(would|will|do|did|have|"
    r"could) you (ever|really)\s+(\w+\s+){0,2}|\bwhat (would|will) happen if [^.!?]{0,30})$")
_B64 = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")


def _decoded_runs(text: str) -> list[str]:
    out = []
    for run in _B64.findall(text):
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if decoded.isprintable():
            out.append(decoded)
    return out


def _match_folded(folded: str) -> str | None:
    for name, rx in _RULES:
        for m in rx.finditer(folded):
            if name.startswith("en:") and _EN_NEGATED.search(folded[max(0, m.start() - 40):
                                                                  m.start()]):
                continue
            return name
    return None


@lru_cache(maxsize=256)  # the write path and the monitors read the same user turn
def identity_rewrite_match(text: str) -> str | None:
    """The rule ("<lang>:<family>") under which text asks the agent to rewrite its identity,
    values, rules or instructions; None when no rule fires. Base64 runs are decoded and read
    as well ("b64:" before the rule)."""
    hit = _match_folded(fold_text(text))
    if hit:
        return hit
    for decoded in _decoded_runs(text):
        inner = _match_folded(fold_text(decoded))
        if inner:
            return f"b64:{inner}"
    return None


def detects_identity_rewrite(text: str) -> bool:
    """Text asking the agent to rewrite its identity (recorded and flagged, never applied)."""
    return identity_rewrite_match(text) is not None


@dataclass(frozen=True)
class EntryGateConfig:
    explicit_marker: float
    density_decision: float
    density_preference: float
    density_fact: float
    density_name: float
    density_date: float
    density_chatter: float
    causal_weight: float
    emotional_charge: float
    buffer_threshold: float
    stochastic_keep_probability: float

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> EntryGateConfig:
        return cls(**scalar_fields(cls, t))


@dataclass(frozen=True)
class GateDecision:
    decision: str  # 'scratch' | 'pass'
    score: float
    signals: dict[str, Any]
    reason: str
    memory_type_hint: str


def rule_signals(text: str, role: str, cfg: EntryGateConfig) -> dict[str, float]:
    """The rule signals that fired and their weights (density signals take the largest)."""
    fired: dict[str, float] = {}
    if role == "user" and EXPLICIT.search(text):
        fired["explicit_marker"] = cfg.explicit_marker
    density = {
        "decision": (DECISION, cfg.density_decision),
        "preference": (PREFERENCE, cfg.density_preference),
        "fact": (FACT, cfg.density_fact),
        "date": (DATE, cfg.density_date),
        "name": (NAME, cfg.density_name),  # last: a capitalised weekday is a date first
    }
    hits = {k: w for k, (rx, w) in density.items() if rx.search(text)}
    if hits:
        best = max(hits, key=lambda k: hits[k])
        fired[f"density_{best}"] = hits[best]
        for k in hits:
            if k != best:
                fired[f"also_{k}"] = 0.0
    elif CHATTER.match(text) or len(text.split()) <= 2:
        fired["density_chatter"] = cfg.density_chatter
    if CAUSAL.search(text):
        fired["causal"] = cfg.causal_weight
    if EMOTION.search(text):
        fired["emotional_charge"] = cfg.emotional_charge
    return fired


def memory_type_hint(text: str, signals: Mapping[str, float]) -> str:
    if CORRECTION.search(text):
        return "correction"
    for key, kind in (("decision", "decision"), ("preference", "preference"),
                      ("fact", "fact"), ("name", "fact"), ("date", "fact")):
        if f"density_{key}" in signals:
            return kind
    if INSTRUCTION.search(text):
        return "instruction"
    return "episodic"


def entry_gate(
    text: str, role: str, cfg: EntryGateConfig, rng: random.Random | None = None
) -> GateDecision:
    """Scratch or pass, with every signal that fired (rules only, no model, no I/O)."""
    signals = rule_signals(text, role, cfg)
    score = round(sum(signals.values()), 4)
    hint = memory_type_hint(text, signals)
    if score >= cfg.buffer_threshold:
        fired = ", ".join(k for k, v in signals.items() if v > 0)
        return GateDecision("scratch", score, dict(signals), f"rules: {fired}", hint)
    draw = (rng or random.Random()).random()
    if draw < cfg.stochastic_keep_probability:
        return GateDecision(
            "scratch", score, {**signals, "stochastic_draw": round(draw, 4)},
            "stochastic floor (kept so the gate can learn from what it would drop)", hint,
        )
    reason = "chatter" if "density_chatter" in signals else "no signal above the threshold"
    return GateDecision("pass", score, dict(signals), reason, hint)


# --- exit gate -------------------------------------------------------------------

COLUMNS = ("confirming", "novel", "contradicting")
ROWS = ("core", "peripheral", "irrelevant")


@dataclass(frozen=True)
class ExitGateConfig:
    persist_threshold: float
    bootstrap_permissive: bool
    stochastic_keep_probability: float
    confirming_min_similarity: float
    contradiction_band: tuple[float, float]
    core_min_relevance: float
    peripheral_min_relevance: float
    novelty_novel: float
    novelty_known: float
    goal_relevance: float
    scores: dict[str, float]
    actions: dict[str, str]

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> ExitGateConfig:
        band = need(t, "contradiction_band")
        return cls(
            persist_threshold=float(need(t, "persist_threshold")),
            bootstrap_permissive=bool(need(t, "bootstrap_permissive")),
            stochastic_keep_probability=float(need(t, "stochastic_keep_probability")),
            confirming_min_similarity=float(need(t, "confirming_min_similarity")),
            contradiction_band=(float(band[0]), float(band[1])),
            core_min_relevance=float(need(t, "core_min_relevance")),
            peripheral_min_relevance=float(need(t, "peripheral_min_relevance")),
            novelty_novel=float(need(t, "novelty_novel")),
            novelty_known=float(need(t, "novelty_known")),
            goal_relevance=float(need(t, "goal_relevance")),
            scores={f"{r}_{c}": float(need(t, f"score_{r}_{c}"))
                    for r in ROWS for c in COLUMNS},
            actions={f"{r}_{c}": str(need(t, f"action_{r}_{c}"))
                     for r in ROWS for c in COLUMNS},
        )


# a counter or label number ("note 3", "#12", "item no. 4", a trailing "(2)"): it numbers
# repeats of one statement, it is not a value the statement claims (issue 39)
COUNTER = re.compile(
    r"(?:\b(?:note|nr|number|item|entry|copy|attempt|try|take|round|draft|message|msg|"
    r"reminder|repeat)\b\.?\s*(?:#\s*)?|\bno\.\s*|#\s*)\d+\b|\(\d+\)\s*$", _I)


def without_counters(text: str) -> str:
    """The text with its counter and label numbers removed (see COUNTER)."""
    return COUNTER.sub(" ", text)


def contradiction_cue(new: str, old: str) -> bool:
    """Heuristic: similar texts that differ in negation or in a named/numeric value.
    A counter or note number is no value: "..., note 1" and "..., note 2" agree."""
    if bool(NEGATION.search(new)) != bool(NEGATION.search(old)):
        return True
    a = {v.lower() for v in _VALUE.findall(without_counters(new))}
    b = {v.lower() for v in _VALUE.findall(without_counters(old))}
    return bool(a and b and a != b and not (a <= b or b <= a))


@dataclass(frozen=True)
class ExitInput:
    text: str
    rule_score: float
    nearest_similarity: float | None  # to the most similar existing memory
    nearest_text: str | None
    relevance: float | None  # max similarity to Layer 0 values / Layer 1 goals; None: none exist
    explicit: bool = False  # the user asked for it to be remembered
    fallback: bool = False  # an extract of the heuristic fallback LLM: nothing new


@dataclass(frozen=True)
class ExitDecision:
    action: str  # persist | persist_flag | reinforce | buffer | drop
    column: str
    row: str
    score: float
    reason: str
    signals: dict[str, Any]

    @property
    def persists(self) -> bool:
        return self.action in ("persist", "persist_flag")


def exit_gate(
    inp: ExitInput, cfg: ExitGateConfig, rng: random.Random | None = None
) -> ExitDecision:
    """The seed's matrix picks the action; the seed's weighted score settles 'buffer'.

    score = entry-gate rule score + novelty (+0.3 novel / -0.4 known) + goal
    relevance (+0.3 when the row is core). An explicit "remember this" always
    persists. 'drop_stochastic' cells keep a few drops (the stochastic floor).
    """
    sim = inp.nearest_similarity
    lo, hi = cfg.contradiction_band
    cue = False
    if sim is not None and sim >= cfg.confirming_min_similarity:
        column = "confirming"
    elif sim is not None and lo <= sim < hi and inp.nearest_text is not None:
        cue = contradiction_cue(inp.text, inp.nearest_text)
        column = "contradicting" if cue else "novel"
    else:
        column = "novel"
    bootstrap = inp.relevance is None
    rel = inp.relevance or 0.0
    if rel >= cfg.core_min_relevance:
        row = "core"
    elif rel >= cfg.peripheral_min_relevance or (bootstrap and cfg.bootstrap_permissive):
        row = "peripheral"
    else:
        row = "irrelevant"
    cell = f"{row}_{column}"
    novelty = cfg.novelty_known if column == "confirming" else cfg.novelty_novel
    relevance_term = cfg.goal_relevance if row == "core" else 0.0
    score = round(inp.rule_score + novelty + relevance_term, 4)
    signals: dict[str, Any] = {
        "cell": cell, "cell_weight": cfg.scores.get(cell, 0.0), "nearest_similarity": sim,
        "relevance": inp.relevance, "rule_score": inp.rule_score, "novelty": novelty,
        "bootstrap": bootstrap, "contradiction_cue": cue,
        "contradiction_detector": "negation/value heuristic",
    }
    action = cfg.actions.get(cell, "drop")

    def decide(what: str, reason: str) -> ExitDecision:
        return ExitDecision(what, column, row, score, reason, signals)

    if inp.fallback:  # the fallback quotes what is already remembered, or the prompt
        return decide("drop", "a heuristic fallback reply: an extract, nothing new to keep")

    if action == "persist_flag":
        return decide("persist_flag", f"matrix {cell}: contradicts a memory, persisted and flagged")
    if action == "reinforce":
        return decide("reinforce", f"matrix {cell}: confirms an existing memory, reinforced it")
    if action == "persist":
        return decide("persist", f"matrix {cell}: persist")
    if inp.explicit:
        return decide("persist", "explicit request to remember")
    if action == "buffer":
        if score >= cfg.persist_threshold:
            return decide("persist", f"matrix {cell}: score {score:.2f} >= {cfg.persist_threshold}")
        if score > 0:
            return decide("buffer", f"matrix {cell}: score {score:.2f} below "
                                    f"{cfg.persist_threshold}, left for consolidation")
        return decide("drop", f"matrix {cell}: score {score:.2f}, nothing worth keeping")
    if action == "drop_stochastic":
        draw = (rng or random.Random()).random()
        if draw < cfg.stochastic_keep_probability:
            signals["stochastic_draw"] = round(draw, 4)
            return decide("persist", "stochastic floor: a drop kept to catch gems")
    return decide("drop", f"matrix {cell}: {action}")
