"""The repetition guard and the grounded-reply heuristic (issue 40): pure rules."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from agent.domain.grounded import (
    DONT_KNOW,
    PATH_NO_MATCH,
    PATH_STRONG,
    PATH_WEAK,
    cover,
    grounded_reply,
    is_fact_question,
    missing_detail,
    other_relation,
    quotable,
    said_sentences,
    second_person,
    spoken_date,
)
from agent.domain.recall import RecallItem
from agent.domain.repetition import cut_loop, loop_start, loops, settled

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
MARCH = datetime(2026, 3, 3, 9, tzinfo=UTC)

# the loop SmolLM2-135M fell into (issue 40)
LOOP = ("You're a marine biologist, and I'm sure you've got the right spot. "
        "You're a marine biologist, and I'm sure you've got the right spot. "
        "You're a marine biologist, and I'm sure you've got the right spot. "
        "You're a marine biologist, and I'm sure")


def item(content: str, verdict: str = "strong_match", *, role: str | None = "user",
         kind: str = "day_table", score: float = 0.5, when: datetime | None = MARCH,
         rid: str = "day_table:1") -> RecallItem:
    return RecallItem(id=rid, kind=kind, content=content, score=score, verdict=verdict,
                      similarity=0.7, coverage=0.5, match=0.6, created_at=when,
                      source_ids=(), external_ids=(), components={}, role=role)


# -- the repetition guard -------------------------------------------------------------

def test_a_loop_is_cut_before_its_third_time() -> None:
    kept, cut = cut_loop(LOOP)
    assert cut and not loops(kept)
    assert kept == ("You're a marine biologist, and I'm sure you've got the right spot. "
                    "You're a marine biologist, and I'm sure you've got the right spot.")


def test_twice_is_not_a_loop_and_text_is_left_alone() -> None:
    text = "I moved to Lisbon last March. I moved to Lisbon last March, yes."
    assert loop_start(text) is None and cut_loop(text) == (text, False)


def test_words_are_compared_without_case_or_punctuation() -> None:
    text = "the sea is blue. The sea is blue! THE SEA, IS BLUE?"
    assert loops(text, n=4) and not loops(text, n=4, count=4)
    assert text[loop_start(text, n=4):].startswith("THE SEA")


def test_a_meaningless_guard_is_refused() -> None:
    with pytest.raises(ValueError):
        loop_start("a b c", n=0)
    with pytest.raises(ValueError):
        loop_start("a b c", count=1)


# -- what a fact question is --------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Where do I live and what do I do?", "Who is visiting me?", "what's my dog called",
    "Do you remember my sister's name?", "Remind me where I was born."])
def test_fact_questions(text: str) -> None:
    assert is_fact_question(text)


@pytest.mark.parametrize("text", [
    "My sister Priya is visiting next Friday.", "What is the capital of France?",
    "Can you write me a poem about my dog?", "How are you?", ""])
def test_not_fact_questions(text: str) -> None:
    assert not is_fact_question(text)


# -- the user's words said back -----------------------------------------------------------

def test_first_person_becomes_second_and_greetings_go() -> None:
    said = second_person(quotable("Hi, I am Dana. I moved to Lisbon and my sister visits me"))
    assert said == "You are Dana. You moved to Lisbon and your sister visits you."
    assert second_person("I'm sure I was there with Sam.") == "You're sure you were there with Sam."
    # "I'm", "I've" inside a sentence: no capital ("You're" came back mid-sentence)
    assert second_person("Tomorrow I'm off to Rome, a trip I've planned for years.") == (
        "Tomorrow you're off to Rome, a trip you've planned for years.")


def test_a_long_turn_is_cut_at_a_sentence() -> None:
    text = "I live in Lisbon. " + "The weather there is lovely in spring. " * 20
    quote = quotable(text)
    assert quote.startswith("I live in Lisbon.") and len(quote) <= 300
    assert quote.endswith(".")


def test_dates_are_said_with_the_year_only_when_it_differs() -> None:
    assert spoken_date(MARCH, NOW) == "3 March"
    assert spoken_date(datetime(2025, 3, 3, tzinfo=UTC), NOW) == "3 March 2025"
    assert spoken_date(None, NOW) == ""


# -- the grounded reply -----------------------------------------------------------------

def test_a_strong_match_is_said_back_with_its_date() -> None:
    items = [item("Hi, I am Dana. I moved to Lisbon last March and I work as a marine "
                  "biologist.", rid="day_table:7"),
             item("I like tea.", "weak_match", rid="day_table:8")]
    assert [s.sentence for s in said_sentences(items)] == [
        "I am Dana.", "I moved to Lisbon last March and I work as a marine biologist.",
        "I like tea."]
    got = grounded_reply("Where do I live and what do I do?", items, [0.2, 0.43, 0.1], NOW)
    assert got is not None and got.path == PATH_STRONG and got.item_ids == ("day_table:7",)
    assert got.text == ("You told me on 3 March: you are Dana. You moved to Lisbon last March "
                        "and you work as a marine biologist.")  # the whole turn: it fits


def test_the_turn_is_said_back_when_another_of_its_sentences_matched() -> None:
    """heldout4's holiday miss: the second sentence matched "holiday" best, the first held
    the answer; a turn too long for a reply is cut to the sentence that matched."""
    told = ("Booked flights to Lisbon for the second week of October with my friend Aoife!! "
            "first proper holiday in two years")
    got = grounded_reply("what about my holiday?", [item(told, rid="t")], [0.10, 0.60], NOW)
    assert got is not None and got.path == PATH_STRONG  # the second sentence, by cosine
    assert "Lisbon" in got.text and "First proper holiday" in got.text
    long = told + ". " + " ".join(["We also plan to see a lot of other things there."] * 8)
    got = grounded_reply("what about my holiday?", [item(long, rid="t")],
                         [0.10, 0.60] + [0.1] * 8, NOW)
    assert got is not None and got.text.endswith(": First proper holiday in two years.")


def test_the_surest_of_the_users_own_words_is_chosen() -> None:
    items = [item("You said Priya is coming.", role="assistant", score=0.9, rid="a"),
             item("Who is visiting me?", score=0.8, rid="q"),  # an earlier asking
             item("My brother is far away.", "no_match", score=0.7, rid="b"),
             item("My sister Priya is visiting next Friday.", "no_match", score=0.6, rid="p")]
    assert [s.item.id for s in said_sentences(items)] == ["b", "p"]
    # cosine 0.34 alone is no answer; with the question's one content word it is sure
    got = grounded_reply("Who is visiting me?", items, [0.36, 0.34], NOW)
    assert got is not None and got.item_ids == ("p",) and got.path == PATH_STRONG
    assert got.text == "You told me on 3 March: your sister Priya is visiting next Friday."


def test_a_weak_match_or_a_middling_cosine_is_hedged() -> None:
    weak = [item("I was born in Toronto.", "weak_match")]
    got = grounded_reply("Where was I born?", weak, [0.05], NOW)
    assert got is not None and got.path == PATH_WEAK
    assert got.text == "I'm not sure, but on 3 March you told me: you were born in Toronto."
    food = [item("I love grilled sardines.", "no_match")]
    got = grounded_reply("What is my favourite food?", food, [0.46], NOW)
    assert got is not None and got.path == PATH_WEAK  # 0.40 <= cosine < 0.55, no word held
    # a dog is no answer about a cat, however close the cosine (pets are relation words)
    dog = [item("My dog is called Biscuit.", "no_match")]
    got = grounded_reply("What is my cat's name?", dog, [0.46], NOW)
    assert got is not None and got.path == PATH_NO_MATCH


def test_words_of_the_question_count_with_a_floor() -> None:
    assert cover("Where do I live?", "I moved to Lisbon.") == 1.0  # a named synonym
    assert cover("What is my cat's name?", "My name is Dana.") == 0.0  # "name" says nothing
    assert cover("What boat do I sail?", "My boat is a Laser.") == 0.5
    boat = [item("My boat is a blue Laser.", "no_match")]
    assert grounded_reply("What boat do I sail?", boat, [0.29], NOW).path == PATH_NO_MATCH
    assert grounded_reply("What boat do I sail?", boat, [0.31], NOW).path == PATH_WEAK
    # everything the question asks held: sure from GroundedConfig.full_cover_similarity
    food = [item("My favourite food is sardines.", "no_match")]
    assert grounded_reply("What is my favourite food?", food, [0.09], NOW).path == PATH_NO_MATCH
    assert grounded_reply("What is my favourite food?", food, [0.11], NOW).path == PATH_STRONG


# -- the lexical heuristics of `cover` (the first held-out set's misses, in general form) --

@pytest.mark.parametrize("question,sentence", [
    ("where'd I grow up?", "I grew up on a dairy farm just outside Cork."),
    ("Where did we meet?", "We met at a party in Leeds."),
    ("What did I buy last week?", "I bought a second-hand piano last week."),
    ("Where did I leave my keys?", "I left my keys at Sam's flat."),
])
def test_an_irregular_past_form_is_its_verb(question: str, sentence: str) -> None:
    """Heuristic "irregular verb lemmas": grew/grow, met/meet, bought/buy, left/leave."""
    assert cover(question, sentence) == 1.0


def test_regular_forms_and_contractions_are_one_word() -> None:
    assert cover("Where am I moving to?", "I moved to Porto in May.") == 1.0
    assert cover("What am I planning?", "I planned a trip to Oslo.") == 1.0
    # "where'd", "when's": the question word, not a topic word the answer must hold
    assert cover("where'd I grow up?", "I grew up on a farm near Cork.") == cover(
        "where did I grow up?", "I grew up on a farm near Cork.") == 1.0
    assert cover("What don't I eat?", "I eat no fish.") == 1.0  # "don't" asks nothing


@pytest.mark.parametrize("question,sentence,share", [
    ("What's my job again?", "I've been teaching chemistry at a secondary school.", 1.0),
    ("What do I do for a living?", "I work as a nurse at the hospital.", 1.0),
    ("What's my profession?", "My job is in accounting.", 1.0),
    ("What do I do for a living?", "I live in Lisbon.", 0.0),  # a living is not a home
    ("What's my job?", "I take the bus to work every day.", 0.0),  # to work: a place
    ("Where's my home?", "I'm based in Rotterdam these days.", 1.0),
    # a job the profile heuristic reads without a work word; not for a relation's job
    ("What do I do for a living?", "I'm an architect at a firm that designs schools.", 1.0),
    ("What's my mum's job?", "I'm an architect at a firm that designs schools.", 0.0),
    ("Where's home?", "I moved to Porto last year.", 1.0),
    # hobby: "spare/free time" and "pastime" (not a spare key)
    ("what's my hobby?", "In my spare time I restore old motorbikes.", 1.0),
    ("What's my hobby?", "I keep a spare key under the mat.", 0.0),
    ("What kind of pastime do I have?", "In my free time I paint.", 1.0),
])
def test_slot_synonyms(question: str, sentence: str, share: float) -> None:
    """Heuristic "slot synonyms" and "phrases": job/work/profession/teach, for a living;
    home/live/based; hobby/pastime, spare or free time; and the slot of a profile claim
    the sentence states; "kind of" asks nothing."""
    assert cover(question, sentence) == share


def test_pets_are_relation_words() -> None:
    """A pet names any kept animal; one animal is no other."""
    assert cover("What kind of pet do I have?",
                 "We keep a tortoise named Franklin in the back garden.") == 1.0
    assert cover("What's my cat called?", "Our kitten Mochi sleeps all day.") == 1.0
    assert cover("What is my cat's name?", "My dog is called Biscuit.") < 1.0
    assert other_relation("What is my cat's name?", "My dog is called Biscuit.")
    assert not other_relation("Do I have a pet?", "My dog is called Biscuit.")


def test_relation_words() -> None:
    """Heuristic "relation words": mum is mother, a kid is a son or a daughter; a sister
    is no brother, a wife no husband."""
    assert cover("What's my daughter called?", "Our daughter Aiko starts school soon.") == 1.0
    assert cover("What's my mum called?", "My mother Rosa lives in Porto.") == 1.0
    assert cover("How many kids do I have?", "My son Leo is four.") == 1.0
    assert cover("What does my partner do?", "My wife works as a pilot.") == 1.0
    assert other_relation("What's my mum's maiden name?", "My partner's name is Ingrid.")
    assert other_relation("What is my brother's name?", "My sister Priya is visiting.")
    assert other_relation("What does my husband do?", "My wife works as a pilot.")
    assert not other_relation("What does my partner do?", "My wife works as a pilot.")
    assert not other_relation("What's my mum called?", "I live in Lisbon.")  # no one named


def test_another_relation_is_no_answer_however_close() -> None:
    items = [item("My partner's name is Ingrid, we've been together since 2019.", "no_match")]
    got = grounded_reply("What's my mum's maiden name?", items, [0.43], NOW)
    assert got is not None and got.path == PATH_NO_MATCH
    # the relation it names: said back
    got = grounded_reply("What's my partner's name?", items, [0.43], NOW)
    assert got is not None and got.path == PATH_STRONG and "Ingrid" in got.text


def test_the_kind_of_answer_counts_beside_a_content_word() -> None:
    """Heuristic "answer kind": a name (a capitalised word, not the sentence's first), a
    place, a date (a capitalised month, a season, a number) held beside a content word."""
    assert cover("remind me, which city am I based in?", "I'm based in Rotterdam.") == 1.0
    assert cover("remind me, which city am I based in?", "I'm based near the sea.") == 0.5
    assert cover("When's my birthday?", "My birthday is on the 14th of August.") == 1.0
    assert cover("When's my birthday?", "My birthday party was fun.") == 0.5
    assert cover("When is my exam?", "My exam may be hard.") == 0.5  # "may": no month
    assert cover("Who is my dentist?", "Dentists scare me.") == 0.5  # the first word: no name
    assert cover("Who am I?", "My name is Dana.") == 0.0  # no content word: nothing asked


def test_a_sentence_holding_everything_asked_is_sure_at_a_low_cosine() -> None:
    job = [item("I've been teaching chemistry at a secondary school for six years now.",
                "no_match", rid="job"),
           item("I'm learning Korean, mostly on the bus to work.", "no_match", rid="bus")]
    got = grounded_reply("What's my job again?", job, [0.20, 0.23], NOW)
    assert got is not None and got.path == PATH_STRONG and got.item_ids == ("job",)
    daughter = [item("Our daughter Aiko starts primary school in September.", "no_match")]
    got = grounded_reply("What's my daughter called?", daughter, [0.27], NOW)
    assert got is not None and got.path == PATH_STRONG and "Aiko" in got.text


def test_no_match_says_it_does_not_know() -> None:
    items = [item("My dog is called Biscuit.", "no_match"),
             item("I don't know: you haven't told me that.", "strong_match", role="assistant")]
    for found, sims in ((items, [0.08]), ([], [])):
        got = grounded_reply("What is my blood type?", found, sims, NOW)
        assert got is not None and got.path == PATH_NO_MATCH and got.text == DONT_KNOW


def test_the_model_answers_what_the_heuristic_cannot() -> None:
    # not a fact question; or recall matched text that is no one's turn (a summary block)
    assert grounded_reply("Tell me about the sea.", [item("I dive.")], [0.9], NOW) is None
    block = item("Dana and the agent talked about Lisbon.", kind="block", role=None)
    assert grounded_reply("Where do I live?", [block], [], NOW) is None


def test_similarities_must_match_the_sentences() -> None:
    with pytest.raises(ValueError):
        grounded_reply("Where do I live?", [item("I live in Lisbon.")], [], NOW)


def test_a_stream_shows_what_the_guard_can_no_longer_cut() -> None:
    text = "I'm sure she'll love her home. I'm sure she'll"
    assert text[:settled(text)] == "I'm sure she'll love her "  # 4 words held back
    assert settled("one two") == 0 and settled("") == 0


def test_an_earlier_grounded_reply_answers_the_question_asked_again() -> None:
    """Asked in a third session, recall may bring the earlier asking and its answer, not
    the turn that answer quoted: the quote and its date still answer."""
    items = [item("What is my dog called?", "strong_match", score=0.9, rid="q"),
             item("You told me on 3 March: your dog is called Biscuit.", "strong_match",
                  role="assistant", when=NOW, rid="a"),
             item("I don't know: you haven't told me that.", "weak_match", role="assistant",
                  rid="idk")]
    assert [(s.sentence, s.when) for s in said_sentences(items)] == [
        ("your dog is called Biscuit.", "3 March")]
    got = grounded_reply("What is my dog called?", items, [0.7], NOW)
    assert got is not None and got.path == PATH_STRONG and got.item_ids == ("a",)
    assert got.text == "You told me on 3 March: your dog is called Biscuit."


def test_heldout3s_misses_as_word_rules() -> None:
    """heldout3's misses (dev data since): a trip asked as a holiday in a season, told as
    flights in a month of it; and "as a kid" is a time of life, not a child of the user's."""
    trip = "booked flights to Lisbon for a week in June with my partner!!"
    assert cover("where am I going on holiday this summer?", trip) == 1.0
    assert cover("where am I going on holiday this winter?", trip) < 1.0  # June is summer
    kid = "oh and I'm allergic to penicillin, found that out the hard way as a kid"
    assert cover("do I have any kids?", kid) == 0.0
    assert cover("do I have any kids?", "my kid started school this week") > 0.0
    assert cover("when did I find out about the allergy?", kid) > 0.0


def test_heldout4s_misses_as_word_rules() -> None:
    """heldout4's misses (dev data since): a weekend held by its days, "off to" is going,
    and what the user spends their days doing is their work."""
    assert cover("what do I do at the weekend?", "Sunday mornings are for sea swimming") == 1.0
    assert cover("what do I do at the weekend?", "Monday mornings are for sea swimming") == 0.0
    assert cover("where am I off to on holiday this autumn?",
                 "Booked flights to Lisbon in October with my friend Aoife") == 1.0
    assert cover("what do I do for work?", "I spend my days fixing wind turbines") == 1.0


def test_heldout5s_misses_as_word_rules() -> None:
    """heldout5's fact misses (dev data since): "these days" is now, a flat is a home, an
    allergy is food to avoid, a car is what the user drives."""
    flat = "just got the keys to a flat in Ljubljana last week!"
    assert cover("remind me, what city am I living in these days?", flat) == 1.0
    assert cover("is there any food I need to avoid?", "fyi I'm allergic to sesame") == 1.0
    assert cover("what do I drive?", "my car's a 2008 Skoda Octavia estate, green") == 1.0
    assert cover("what's my go-to hot drink?", "I'm a rooibos person, can't stand coffee") >= 0.5


@pytest.mark.parametrize(("question", "said"), [
    ("what's my line of work?", "I drive trains between Malmo and Copenhagen for a living"),
    ("who am I marrying?", "me and Henrik are getting married on the 21st of September!!"),
    ("what's my bird called?", "my budgie Kalle has learnt to whistle the tetris theme"),
    ("what's the new hobby I told you about?", "been getting really into woodturning lately"),
    ("when's moving day for us?", "we get the keys to the new house on the 30th of April"),
    ("who's my boss?", "my manager Birgitta put me down for six nights in a row"),
    ("what did the doctor find out was wrong with me?", "doc appt went ok I think. they've "
     "confirmed it's type 1 diabetes"),
    ("what's growing really well on my plot this year?", "spent every waking hour at the "
     "allotment. the pumpkins are absolutely massive, one of them's gotta be 20 kilos."),
    # heldout7's (dev data since): "been in" a place, a job in "I'm a court stenographer so"
    ("where am I living at the moment?", "I'm originally from Porto but I've been in "
     "Montreal about eight years now"),
    ("remind me what my job is?", "I'm a court stenographer so it's 7 hours of typing"),
    # heldout8's (dev data since): greeted from a place, a PhD is a subject of study, a
    # flatmate is who the user shares a place with, a bike is ridden
    ("what city do I live in again?", "kia ora from Wellington lol, the wind is unreal"),
    ("what subject is my research in?", "I'm doing a PhD in volcanology, so it's mostly "
     "me staring at seismograph data"),
    ("who do I share a place with?", "my flatmate Tavita cooks way better than me"),
    ("what kind of bike have I got?", "I ride a bright orange Brompton to campus every day."),
    # heldout9's (dev data since): a place "above" a town, a midwife is a job, asthma is
    # health, a nonna is a grandmother
    ("where's home for me?", "home is a little village up in the hills above Trieste"),
    ("what's my profession?", "I'm a midwife on the maternity ward and we had four "
     "deliveries back to back"),
    ("have I got any ongoing health issues?", "I've had asthma since I was little, so the "
     "inhaler lives in my coat pocket."),
    ("what did my grandmother leave me?", "My nonna left me her old Singer sewing machine."),
])
def test_heldout6s_misses_as_word_rules(question: str, said: str) -> None:
    """heldout6's fact misses (run once, blind: 2/10; dev data since): a line of work, a
    married/marrying stem, a budgie is a bird, "getting into" is a hobby, the keys to a house
    are a move, a manager is a boss, the doctor and "wrong with me" are health, an
    allotment is a plot; "this year" is when, not a date asked; and what the whole turn
    said back holds counts, not only its closest sentence."""
    assert cover(question, said) == 1.0
    got = grounded_reply(question, [item(said, "no_match")], [0.2] * len(
        said_sentences([item(said)])), NOW)
    assert got is not None and got.path == PATH_STRONG, got


@pytest.mark.parametrize(("question", "said", "missing"), [
    # the name of "my X": X named in the turn, and a name bound to it or not
    ("what's my Korean tutor called?", "Learning Korean: Duolingo plus a tutor on "
     "Thursdays. Hangul turned out easy.", True),
    ("what's my brother called?", "my brother Anselm is coming to stay in March.", False),
    ("what's the name of my tortoise?", "my tortoise Bartholomew is 41 years old.", False),
    ("who is my boss?", "Anselm is my boss.", False),
    ("who is my boss?", "Anselm, my boss, is away.", False),
    ("who is my boss?", "My boss is a nightmare, honestly.", True),
    ("What car do I drive?", "My car is a blue Fiat Panda.", False),
    # "which X": X named without a name of its own
    ("which theatre do I work at?", "I'm a sound engineer for a small theatre company.", True),
    ("which theatre do I work at?", "I'm a sound engineer at the Old Vic theatre.", False),
    # X not named: the answer kind decides, as before
    ("which language have I been studying?", "I started learning Korean in May.", False),
    # a date asked by its day, a year by its number
    ("what date do I fly out to Sweden?", "Hiking in Sweden this August, 110 km.", True),
    ("what date do I fly out to Sweden?", "We fly out to Sweden on the 3rd of August.", False),
    ("what year was I born?", "my birthday is the 14th of November", True),
    ("what year was I born?", "I was born in 1990, on the 14th of November", False),
    # heldout7's (dev data since): a name before X in its noun phrase; an age; a time
    ("what camera do I shoot with?", "my pride and joy is a 1970s Pentax film camera", False),
    ("how old is my ferret?", "we got a ferret!!! he's already stolen two of my socks", True),
    ("how old is my tortoise?", "my tortoise Bartholomew is 41 years old.", False),
    ("how many kids do I have?", "I have two kids, both at school", False),
    ("what time does my flight leave?", "my flight to Oaxaca is on the 8th of February", True),
    ("what time does my flight leave?", "my flight leaves at 6:40 on the 8th", False),
    # heldout8's: "where" needs a place named after a preposition of place, not any capital
    ("where did I get my axolotl from?", "We got an axolotl!! His name's Gizmo.", True),
    ("where did I get my axolotl from?", "We got an axolotl from a breeder in Napier.", False),
    # heldout9's: the job of someone named needs a job said; "teaching me" is not work
    ("what does my best mate do for work?", "my best mate Radu has been patiently teaching "
     "me to drive in his ancient Dacia", True),
    ("what does my partner Sam do?", "My partner Sam works as a nurse.", False),
    ("what does my brother do?", "my brother is a plumber in Leeds", False),
])
def test_a_statement_without_the_asked_detail_is_no_answer(
        question: str, said: str, missing: bool) -> None:
    """heldout5's never-said misses (dev data since): the heuristic "asked detail"."""
    assert missing_detail(question, said) is missing
    got = grounded_reply(question, [item(said)], None, NOW)
    assert got is not None
    assert (got.path == PATH_NO_MATCH) is missing, got


def test_a_one_sentence_turn_of_the_users_own_words_is_not_embedded_again() -> None:
    """from_memory reuses an own-words turn's stored similarity when the turn is one
    sentence; a turn of two sentences, and recall's items, are embedded."""
    import numpy as np

    from agent.services.conversation.grounded import from_memory

    class Counting:
        def __init__(self) -> None:
            self.texts: list[str] = []

        def embed_query(self, text: str) -> Any:
            return np.array([1.0, 0.0], dtype=np.float32)

        def embed_documents(self, texts: list[str]) -> Any:
            self.texts += texts
            return np.array([[0.2, 0.98]] * len(texts), dtype=np.float32)

    own = replace(item("My dog is called Biscuit.", "no_match", rid="day_table:1"),
                  similarity=0.7)
    two = replace(item("We moved. My dog is called Rex.", "no_match", rid="day_table:2"),
                  similarity=0.6)
    embedder = Counting()
    got = from_memory(embedder, "What is my dog called?",
                      [item("I like tea.", "no_match", rid="r")],
                      question_vector=[1.0, 0.0], own_words=[own, two])
    assert sorted(embedder.texts) == ["I like tea.", "My dog is called Rex.", "We moved."]
    assert got is not None and "Biscuit" in got.text  # 0.7: the reused similarity


def test_being_taught_is_not_the_users_work() -> None:
    """heldout9's misfire (dev data since): "Radu has been teaching me to drive" was said
    back for "what's my profession?" ("teach" is a work word); taught is a lesson."""
    said = "my best mate Radu has been patiently teaching me to drive in his ancient Dacia"
    assert cover("what's my profession?", said) == 0.0
    assert cover("what's my profession?", "I've been teaching chemistry for six years") == 1.0


@pytest.mark.parametrize(("question", "said"), [
    ("What's my hobby?", "I go bouldering most weekends."),
    ("what sport do I do?", "Tuesday nights are for netball with the girls."),
    ("Which instrument do I have?", "Got myself a ukulele last month."),
    ("What languages do I know?", "I'm fluent in Portuguese."),
])
def test_a_class_word_is_held_by_a_member_of_it(question: str, said: str) -> None:
    """Heuristic "class words": a member of the class the question names answers it."""
    assert cover(question, said) == 1.0


@pytest.mark.parametrize(("question", "said"), [
    ("Do I go bouldering?", "I paint on Sundays."),  # member against member: no
    ("What's my favourite drink?", "I'm learning the cello."),  # another class's member
    # words with another common sense are no members: "a flat", "sign for", "my records"
    ("What's my usual drink?", "I live in a flat near the river."),
    ("What languages do I know?", "I sign for the parcels at work."),
    ("What are my hobbies?", "The hospital lost my records."),
])
def test_class_words_go_one_way_only(question: str, said: str) -> None:
    assert cover(question, said) < 0.5
