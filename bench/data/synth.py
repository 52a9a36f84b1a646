"""Synthetic long-conversation benchmark: planted facts in filler, with graded questions.

    python -m bench synth --turns 2000 --seed 7 --out DIR

Writes DIR/turns.jsonl (one `cogd import` line per turn) and DIR/questions.jsonl. Pure stdlib
and deterministic: the same arguments give byte-identical files.

Question categories: planted (direct wording), paraphrase (few shared words), updated (evidence
is the newer statement, `stale` the superseded one), temporal (a turn on a day relative to an
anchor event; the anchor turn is in `support`), multi_hop (two turns linked by a name),
never_said (a topic absent from the corpus) and never_said_hard (the frame of a planted fact,
about an entity absent from the corpus). `absent_terms` are words no turn contains (whole word,
plural included); `answer` is the expected value. Filler never uses any word of any fact, value,
anchor or absent term of the pools below, so only the planted turns answer the questions.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from random import Random
from typing import NamedTuple

USER, ASSISTANT = "sam", "cogd"
CATEGORIES = ("planted", "paraphrase", "updated", "temporal", "multi_hop", "never_said",
              "never_said_hard")
N_UPDATED, N_TEMPORAL, N_MULTI_HOP, N_NEVER, N_HARD = 5, 5, 5, 20, 20


@dataclass(frozen=True)
class Turn:
    """One JSONL line of `cogd import`."""

    session: str
    speaker: str
    role: str  # "user" | "assistant"
    content: str
    timestamp: str  # ISO 8601 with "+00:00"
    external_id: str

    def as_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False)


@dataclass(frozen=True)
class Question:
    id: str
    category: str
    text: str
    evidence: tuple[str, ...]  # external_ids of the turns that answer it
    stale: tuple[str, ...] = ()  # updated: the superseded statement
    absent_terms: tuple[str, ...] = ()  # never_said*: words that appear in no turn
    answer: str = ""
    support: tuple[str, ...] = ()  # temporal: the anchor event turn

    def as_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False)


@dataclass
class Corpus:
    turns: list[Turn]
    questions: list[Question]
    seed: int

    def write(self, turns_path: str | Path, questions_path: str | Path) -> None:
        Path(turns_path).write_text("".join(t.as_json() + "\n" for t in self.turns),
                                    encoding="utf-8", newline="\n")
        Path(questions_path).write_text("".join(q.as_json() + "\n" for q in self.questions),
                                        encoding="utf-8", newline="\n")

    def counts(self) -> dict[str, int]:
        c = Counter(q.category for q in self.questions)
        return {cat: c[cat] for cat in CATEGORIES}


class Fact(NamedTuple):
    key: str
    values: str  # "|"-separated; one is drawn for {v}
    stmt: str  # the user's statement
    q: str  # planted question (and the never_said question when the fact is not planted)
    para: str  # paraphrase question
    terms: str  # the topic's words, absent from the corpus when the fact is not planted
    hard: str  # never_said_hard: the same frame about another entity...
    hard_terms: str  # ...named by these words, which filler never uses
    upd: str = ""  # a later statement of a new value
    upd_q: str = ""


# "key; values; statement; question; paraphrase; terms; hard question; hard terms
#  [; update; updated question]"
FACTS = tuple(Fact(*(x.strip() for x in s.split(";"))) for s in (
    "sister; Lisbon|Valencia|Edinburgh|Krakow|Montreal; My sister lives in {v}.; Which city does "
    "my sister live in?; Where is my female sibling based these days?; sister; Where does my "
    "brother live?; brother; Actually, my sister moved to {v} recently.; Where does my sister "
    "live now?",
    "locker; 4512|7730|2968|1845|6093; Remember this: my gym locker code is {v}.; What is my gym "
    "locker code?; Which number opens my storage box at the fitness place?; locker; What is my "
    "bike lock combination?; bike; Heads up: they reset my gym locker code, it is {v} now.; What "
    "is my gym locker code now?",
    "allergy; peanuts|shellfish|sesame|kiwi|penicillin; I'm allergic to {v}.; What am I allergic "
    "to?; Which thing gives me a bad reaction, so I have to avoid it?; allergic|allergy; What is "
    "my husband allergic to?; husband",
    "dog; Biscuit|Pepper|Waffles|Juniper|Moose; My dog's name is {v}.; What is my dog's name?; "
    "What do I call the four-legged companion I take for walks?; dog; What's my cat called?; cat",
    "offsite; March 14|April 9|May 22|June 3|January 27; Our team offsite is on {v}.; When is our "
    "team offsite?; On what date does the whole group leave the office for a planning retreat?; "
    "offsite; When is the company holiday party?; party; The team offsite got moved to {v}.; When "
    "is our team offsite now?",
    "database; Postgres|SQLite|CockroachDB|MariaDB; I decided to move the project database from "
    "MySQL to {v}.; Which database did I decide to move the project to?; What storage engine are "
    "we migrating our app's records onto?; mysql|database; Which message queue did I pick for the "
    "project?; queue; Change of plan on the database: we're going with {v} instead.; Which "
    "database are we moving the project to now?",
    "food; pad thai|lasagna|ramen|paella|dumplings; My favourite food is {v}.; What is my "
    "favourite food?; Which dish do I love eating more than any other?; favourite food; What is "
    "my favourite dessert?; dessert",
    "car; silver Honda Civic|red Mazda 3|blue Skoda Octavia|white Toyota Corolla; My car is a "
    "{v}.; What car do I drive?; What vehicle do I get around in?; car; What brand is my electric "
    "scooter?; scooter; I sold my old car, now I drive a {v}.; What car do I drive now?",
    "job; radiographer|civil engineer|data analyst|pharmacist|UX researcher; I work as a {v}.; "
    "What do I work as?; What's my profession?; work as; What does my wife do for a living?; "
    "wife; Big news: I changed careers and I'm a {v} now.; What is my job now?",
    "birthday; July 3|November 21|February 8|August 30|October 5; My birthday is on {v}.; When is "
    "my birthday?; On which day do I turn a year older?; birthday; When is my mother's birthday?; "
    "mother",
    "doctor; Okonkwo|Lindqvist|Ferreira|Nakamura|Abernathy; My doctor's name is Dr. {v}.; What is "
    "my doctor's name?; Who is the physician I see for check-ups?; doctor; What's my dentist's "
    "name?; dentist; I switched to a new doctor, Dr. {v}.; Who is my doctor now?",
    "flight; TP1357|LH2291|BA0472|KL1604|IB3318; My flight number for the trip is {v}.; What is "
    "my flight number?; Which code is printed on my boarding pass?; flight; What is my train seat "
    "number?; train; The airline rebooked me, my new flight number is {v}.; What is my flight "
    "number now?",
    "wifi; maple-otter-42|blue-kettle-77|sunny-harbor-19|quiet-fern-63; The wifi password at home "
    "is {v}.; What is the wifi password at home?; What do guests type to get online at my place?; "
    "wifi; What is the alarm code for my house?; alarm",
    "school; Riverside|Oakwood|Hillcrest|Meadowbank|Larchfield; My son goes to {v} Primary "
    "School.; Which school does my son go to?; Where does my boy attend classes?; son; Which "
    "school does my daughter go to?; daughter",
    "book; The Left Hand of Darkness|Middlemarch|Project Hail Mary|The Overstory|Piranesi; I'm "
    "currently reading {v}.; What book am I currently reading?; Which novel is on my nightstand "
    "at the moment?; currently reading; Which audiobook am I listening to?; audiobook",
    "instrument; cello|trumpet|clarinet|trombone|oboe; I play the {v} in a local orchestra.; What "
    "instrument do I play?; What do I perform on with that local ensemble?; orchestra|instrument; "
    "Which choir do I sing in?; choir",
    "coffee; with oat milk|with two sugars|as a flat white|as a cortado; I take my coffee {v}.; "
    "How do I take my coffee?; How do I like my morning brew prepared?; coffee; How does my boss "
    "take their tea?; boss",
    "floor; fourth|seventh|ninth|twelfth; I live on the {v} floor of my building.; Which floor do "
    "I live on?; How high up is my flat?; floor; Which floor does my accountant work on?; "
    "accountant",
    "colour; teal|mustard yellow|burgundy|lavender|coral; My favourite colour is {v}.; What is my "
    "favourite colour?; Which shade do I like best?; colour|color; What is my favourite flower?; "
    "flower",
    "plant; Gregory|Philippa|Bartholomew|Winston|Fitzgerald; My monstera houseplant is named "
    "{v}.; What is my monstera called?; What did I name the big leafy thing in a pot in my living "
    "room?; monstera|houseplant; What's the name of my cactus?; cactus",
    "phone; Pixel 8|iPhone 13 mini|Fairphone 5|Galaxy S23; My phone is a {v}.; What phone do I "
    "have?; Which handset do I carry around?; phone; What smartwatch do I wear?; smartwatch",
    "hometown; Bergen|Cork|Ghent|Tartu|Bolzano; I grew up in {v}.; Where did I grow up?; What's "
    "my hometown?; grew up; Where did my father grow up?; father",
    "language; Portuguese|Japanese|Korean|Italian|Greek; I'm learning {v} as a second language on "
    "weekends.; Which language am I learning?; What foreign tongue am I studying in my spare "
    "time?; language; Which language does my nephew speak?; nephew",
    "shoe; EU 42|EU 44|EU 39|EU 41|EU 45; My shoe size is {v}.; What is my shoe size?; What size "
    "footwear should someone buy me?; shoe; What is my ring size?; ring",
    "parking; B17|C04|A23|D11|E08; My parking spot at work is number {v}.; What's my parking spot "
    "number at work?; Where am I allowed to leave my vehicle at the workplace?; parking; What's "
    "my desk number at work?; desk",
    "insurance; Allianz Care|Bupa|Cigna|Vitality Health; My health insurance provider is {v}.; "
    "Who is my health insurance provider?; Which company covers my medical bills?; insurance; "
    "Which bank holds my mortgage?; mortgage",
    "bedtime; 10:30 pm|11:15 pm|midnight|9:45 pm; I usually go to bed at {v}.; What time do I "
    "usually go to bed?; When do I normally turn in for the night?; bed; What time does my "
    "roommate go to bed?; roommate",
    "band; Khruangbin|Big Thief|Fleetwood Mac|Bonobo|Portishead; My favourite band is {v}.; What "
    "is my favourite band?; Which group's music do I love most?; favourite band; What is my "
    "favourite radio station?; radio",
    "trip; Marrakech|Kyoto|Reykjavik|Oaxaca|Hanoi; I'm planning a trip to {v} in December.; Where "
    "am I planning a trip to in December?; Which destination am I heading to at the end of the "
    "year?; december; Where did I go on my honeymoon?; honeymoon; Change of plans: the December "
    "trip is going to {v} instead.; Where is my December trip going now?",
    "rabbit; Clover|Nibbles|Dandelion|Hazel|Pippin; My rabbit is called {v}.; What is my rabbit "
    "called?; What name did I give my long-eared pet?; rabbit; What's my hamster called?; hamster",
    "bank; Monzo|Revolut|N26|Triodos|Starling; I bank with {v}.; Which bank do I use?; Where do I "
    "keep my money?; bank; Which broker holds my shares?; broker; I moved my accounts over, I "
    "bank with {v} now.; Which bank do I use now?",
    "class; bouldering|pilates|kickboxing|aqua aerobics; I go to {v} classes on Tuesdays.; Which "
    "class do I go to on Tuesdays?; Which workout session do I attend every week on the second "
    "weekday?; tuesdays; What class do I take on Thursdays?; thursdays",
    "plate; KX19 RTD|MZ71 HBL|AB-123-CD|GT-904-PL; My licence plate is {v}.; What is my licence "
    "plate?; What registration is on my vehicle?; licence|license; What is my passport number?; "
    "passport",
    "partner; Jordan|Ingrid|Mateo|Noor|Felix; My partner's name is {v}.; What is my partner's "
    "name?; Who is my significant other?; partner; What is my stepdad's name?; stepdad",
    "commute; tram|ferry|the underground|the 38 bus; I commute to work by {v}.; How do I commute "
    "to work?; What do I take to get to the office each day?; commute; How does my flatmate get "
    "to work?; flatmate",
    "movie; Spirited Away|Paddington 2|The Grand Budapest Hotel|Before Sunrise|Amelie; My "
    "favourite movie is {v}.; What is my favourite movie?; Which film could I happily watch again "
    "and again?; favourite movie; What is my favourite TV show?; tv",
    "restaurant; Casa Lume|Little Saigon|Bistro Marguerite|Ember and Oak; My go-to restaurant is "
    "{v}.; What is my go-to restaurant?; Where do I usually eat out?; restaurant; What's my "
    "favourite bar?; bar",
    "hobby; birdwatching|woodworking|calligraphy|beekeeping|bookbinding; I've been getting into "
    "{v} as a hobby.; What hobby have I been getting into?; What new pastime have I picked up?; "
    "hobby; What hobby did my grandfather have?; grandfather",
    "glasses; minus 2.25|minus 1.75|minus 3.00|minus 2.50; My glasses prescription is {v} in both "
    "eyes.; What is my glasses prescription?; How strong are the lenses I need to see properly?; "
    "glasses|prescription; Which brand of contact lens do I wear?; lens",
    "one_on_one; Monday at 10|Wednesday at 3|Friday at 11|Thursday at 2; My weekly one-on-one "
    "with my manager is on {v}.; When is my weekly one-on-one with my manager?; When do I sit "
    "down privately with the person I report to each week?; one-on-one; When is my skip-level "
    "meeting?; skip-level; My one-on-one moved to {v}.; When is my one-on-one now?",
    "grant; October 9|October 19|November 7|September 28; The grant proposal is due on {v}.; When "
    "is the grant proposal due?; What's the deadline for that funding application?; grant; When "
    "is the tax return due?; tax; The grant deadline was extended to {v}.; When is the grant "
    "proposal due now?",
    "team; Benfica|Celtic|Ajax|Boca Juniors|Sevilla; I'm a lifelong {v} supporter.; Which team do "
    "I support?; Which club do I cheer for?; supporter; Which basketball team do I follow?; "
    "basketball",
    "rent; 1,150 euros|980 euros|1,420 euros|1,275 euros; My rent is {v} a month.; How much is my "
    "rent?; What do I pay each month to live in my flat?; rent; How much is my electricity bill?; "
    "electricity",
    "diet; three|five|eight|four; I've been vegetarian for {v} years.; How long have I been "
    "vegetarian?; For how many years have I avoided eating meat?; vegetarian; How long have I "
    "been doing intermittent fasting?; fasting",
    "editor; Neovim|Emacs|Helix|Sublime Text; My main code editor is {v}.; Which code editor do I "
    "use?; What program do I write software in all day?; editor; Which terminal emulator do I "
    "use?; terminal",
    "backend; Elixir|Kotlin|Rust|Scala|Clojure; At work we write the backend in {v}.; Which "
    "language is our backend written in?; What do we code the server side of our product in?; "
    "backend; Which framework is our mobile app built with?; mobile",
    "hosting; Hetzner|DigitalOcean|Linode|OVH|Scaleway; Our servers are hosted on {v}.; Where are "
    "our servers hosted?; Which provider runs our machines in the cloud?; servers|hosted; Which "
    "CDN do we use?; cdn; We finished migrating, our servers are hosted on {v} now.; Where are "
    "our servers hosted now?",
    "10k; 48:12|52:40|44:05|55:31; My best 10k time is {v}.; What is my best 10k time?; How fast "
    "have I ever covered ten kilometres on foot?; 10k; What's my best swimming time?; swimming",
    "uncle; Rolf|Desmond|Lorenzo|Bram|Casimir; My emergency contact is my uncle {v}.; Who is my "
    "emergency contact?; If something happens to me, who should be called first?; emergency "
    "contact|uncle; What is my aunt's name?; aunt",
    "storage; U-214|U-087|U-305|U-162; My storage unit is number {v} at BoxIt.; What is my "
    "storage unit number?; Where are my boxes kept in that rented space?; storage unit; What is "
    "my safe deposit box number?; safe deposit",
    "gate; 3391|7702|5186|2640; The gate code for my building is {v}.; What is the gate code for "
    "my building?; Which digits let me in at the entrance where I live?; gate; What's the code "
    "for the garage?; garage",
    "barber; Marco|Tariq|Sven|Idris; My barber is called {v}.; What is my barber called?; Who "
    "cuts my hair?; barber; What's my personal trainer's name?; trainer",
    "nickname; Sparky|Captain|Ziggy|Boots; Everyone at work calls me {v}.; What nickname do "
    "people at work use for me?; What do my coworkers call me?; calls me|nickname; What did my "
    "grandpa call me as a kid?; grandpa",
    "heart; 58 bpm|64 bpm|52 bpm|61 bpm; My resting heart rate is around {v}.; What is my resting "
    "heart rate?; How many times per minute does my pulse beat when I'm relaxed?; heart rate; "
    "What's my cholesterol level?; cholesterol",
    "tea; genmaicha|rooibos|earl grey|sencha|oolong; My favourite tea is {v}.; What is my "
    "favourite tea?; Which hot leaf infusion do I like best?; tea; What's my favourite beer?; "
    "beer",
    "pizza; anchovies|pineapple|nduja|artichokes; My go-to pizza topping is {v}.; What is my "
    "go-to pizza topping?; What do I like to have on top of my flatbread pie?; pizza; What's my "
    "go-to sandwich?; sandwich",
    "library; LC-40917|LC-22381|LC-77104|LC-51236; My library card number is {v}.; What is my "
    "library card number?; What's the ID on the card I use to borrow books?; library; What is my "
    "museum membership number?; museum",
    "icecream; pistachio|stracciatella|salted caramel|mango sorbet; My favourite ice cream "
    "flavour is {v}.; What is my favourite ice cream flavour?; Which frozen treat do I always "
    "order?; ice cream; What's my favourite cocktail?; cocktail",
    "address; Keizersgracht|Calle Mayor|Rosemount Avenue|Bergstrasse; My home address is on {v}.; "
    "Which street is my home address on?; What road do I live on?; address; Where do my parents "
    "live?; parents",
    "author; Italo Calvino|Toni Morrison|Kazuo Ishiguro|Zadie Smith|Haruki Murakami; My favourite "
    "author is {v}.; Who is my favourite author?; Which writer do I admire most?; favourite "
    "author; Who is my favourite poet?; poet",
    "goldfish; Bubbles|Nemo|Goldie|Finn; My goldfish is named {v}.; What is my goldfish named?; "
    "What's the name of my little orange swimmer in the bowl?; goldfish; What's my turtle "
    "called?; turtle",
    "laptop; ThinkPad X1|MacBook Air|Dell XPS 13|Framework 13; My work laptop is a {v}.; What "
    "laptop do I use for work?; Which computer did my employer give me?; laptop; What tablet do I "
    "use?; tablet",
    "injury; left ankle|right wrist|left knee|right shoulder; I sprained my {v} last month.; What "
    "did I sprain last month?; Which joint did I hurt recently?; sprained; Which bone did I break "
    "as a child?; bone",
))

NEVER_SAID = (
    ("What is the name of my piano teacher?", "piano"),
    ("Which marathon did I run last spring?", "marathon"),
    ("What colour did we paint the nursery?", "nursery"),
    ("What's the name of my therapist?", "therapist"),
    ("Which tattoo did I get on my forearm?", "tattoo"),
    ("How many acres is my farm?", "farm|acres"), ("What did I name my sailboat?", "sailboat"),
    ("Where did I go skydiving?", "skydiving"),
    ("What is my grandmother's maiden name?", "grandmother|maiden"),
    ("Which chess opening do I always play?", "chess"),
    ("What colour is my motorcycle?", "motorcycle"),
    ("Which vineyard did we visit for our anniversary?", "vineyard|anniversary"),
    ("What's the title of the podcast I host?", "podcast"),
    ("How much did I pay for the horse?", "horse"), ("What is my parrot called?", "parrot"),
    ("Which surgery did I have last year?", "surgery"),
    ("What did I dress up as for Halloween?", "halloween"),
    ("Which pottery class did I sign up for?", "pottery"),
    ("What is my Bitcoin wallet address?", "bitcoin"), ("Where is my timeshare?", "timeshare"),
    ("Which opera did I see in Vienna?", "opera|vienna"),
    ("What's the name of my fantasy football team?", "fantasy football"),
    ("Which glacier did I hike on?", "glacier"),
    ("Who was the best man at my wedding?", "wedding"), ("What's my golf handicap?", "golf"),
    ("What is my blood type?", "blood type"),
    ("Which shift do I volunteer for at the animal shelter?", "shelter"),
    ("What is my favourite board game?", "board game"),
)

# (link statement, answer statement, question, link words, {a} values, {b} values);
# {name} comes from NAMES
MULTI_HOP = (
    ("My cousin {name} works as a {a}.", "{name} just moved to {b}.",
     "Which city did the {a} in my family move to?", "cousin",
     "marine biologist|glassblower|sommelier|park ranger",
     "Valparaiso|Trieste|Tromso|Antwerp|Halifax"),
    ("My colleague {name} leads the {a} project.", "The {a} project launches on {b}.",
     "When does the project that {name} leads launch?", "colleague|launches",
     "Lighthouse|Kestrel|Bluebird|Driftwood", "November 16|November 23|November 30|October 26"),
    ("My neighbour {name} owns a bakery called {a}.", "By the way, {a} is on {b}.",
     "On which street is the bakery my neighbour owns?", "neighbour|neighbor|bakery",
     "Crumb and Co|The Rising Loaf|Flourish|Oven Door",
     "Rua das Flores|Linden Lane|Via Garibaldi|Harbour Street"),
    ("My mentor is {name}.", "{name} wrote a book called {a}.",
     "What's the title of the book my mentor wrote?", "mentor",
     "The Quiet Compiler|Notes on Patience|Small Systems|The Long Refactor", ""),
    ("The client I'm meeting next week is {a}.", "{a} is headquartered in {b}.",
     "Where is the client I'm meeting next week headquartered?", "client|headquartered",
     "Halvorsen Logistics|Brightwater Foods|Ostara Labs|Kelpie Robotics",
     "Aarhus|Rotterdam|Gdansk|Turku"),
    ("My landlord is called {name}.", "{name} told me the boiler service is on {b}.",
     "When is the boiler service that my landlord mentioned?", "landlord|boiler", "",
     "September 30|October 14|October 23"),
)
NAMES = "Tomasz|Ines|Kwame|Yuki|Ragnhild|Dario|Saoirse|Anselm|Ottilie|Benedikt|Mireille|Oskar"

# temporal: anchor events (statement, phrase, words) and what happened around them
ANCHORS = (
    ("Today was the quarterly planning review, glad it's over.",
     "the quarterly planning review", "quarterly"),
    ("The company hackathon wrapped up today.", "the company hackathon", "hackathon"),
    ("The new sofa finally got delivered today.", "the sofa delivery", "sofa"),
    ("We had a power outage in the whole building today.", "the power outage", "outage"),
    ("I gave my conference talk this afternoon.", "my conference talk", "conference"),
    ("The plumber came by today to fix the leaking pipe.", "the plumber's visit", "plumber"),
    ("We had a fire drill at work today, everyone stood outside for an hour.",
     "the fire drill", "drill"),
    ("The building had its annual safety inspection today.", "the safety inspection",
     "inspection"),
)
KINDS = (
    ("cook", "Tonight I'm going to cook {v}.", "What did I say I'd cook {rel} {anchor}?",
     "mushroom risotto|lentil dal|fish tacos|shakshuka|chicken tagine|butternut squash soup|"
     "pesto gnocchi|bibimbap|moussaka|jambalaya", ("Sounds delicious, enjoy!", "Nice choice.")),
    ("film", "This evening I'll finally watch {v}.",
     "Which film did I say I'd watch {rel} {anchor}?",
     "Chinatown|The Third Man|Rear Window|Paris, Texas|Stalker|Brief Encounter|Tokyo Story|"
     "Local Hero", ("Great pick, enjoy the film.", "A classic. Enjoy!")),
    ("run", "I ran {v} kilometres along the canal this morning.",
     "How many kilometres did I run {rel} {anchor}?", "six|seven|nine|twelve|fourteen|sixteen",
     ("Nice work, that's a solid run.", "Well done!")),
    ("market", "I picked up {v} at the flea market today.",
     "What did I pick up at the flea market {rel} {anchor}?",
     "a brass lamp|an old typewriter|a set of enamel mugs|a wicker chair|a vintage map|"
     "a cast-iron pan|a record player|a ceramic vase", ("What a find!", "Nice, a real bargain.")),
)
RELS = ((1, "the day after"), (2, "two days after"), (-1, "the day before"))
TEMPORAL_WORDS = "tonight|this evening|kilometres|kilometers|canal|flea market|planning review"

TOPICS = {  # topic -> "user template | reply | reply ...", slots from SLOTS
    "cooking": (
        "What's the best way to {method} {ingredient} without it going soggy? | Dry it well first "
        "and give it plenty of space in the pan; crowding makes it soggy. | High heat and a "
        "little patience. Salt it near the end so it keeps its texture.",
        "Is a {tool} actually worth buying, or is it just more clutter? | If you'd use it weekly, "
        "yes. Otherwise a good knife and one heavy pan cover most jobs. | It depends on what you "
        "make most often. A {tool} shines for batch cooking.",
        "I tried {ingredient} with {spice} and it worked surprisingly well. | That's a great "
        "pairing; {spice} brings out a lot in {ingredient}. | Nice! Small experiments like that "
        "are how the best weeknight dishes happen.",
        "How long does cooked {ingredient} keep in the fridge? | A few days in a sealed "
        "container, as long as it cooled down quickly. | Roughly half a week. If it smells off, "
        "trust your nose.",
        "Any ideas for using up leftover {ingredient}? | Fold it into an omelette, blend it into "
        "a soup, or toss it through pasta. | Fritters are a good option, or a quick grain bowl "
        "with {ingredient} and {spice}.",
        "Do you think {spice} would go with {ingredient}? | Yes, start with a small pinch and "
        "taste as you go. | It can, though I'd balance it with something acidic like lemon.",
        "I always seem to over-salt the {ingredient} when I {method} it. | Season in stages and "
        "taste before the final pinch. | Try salting only at the end; cooking concentrates "
        "flavours more than you'd expect.",
        "What can I make with {ingredient}, {ingredient2} and not much else? | A simple traybake "
        "works: {method} both with oil, salt and {spice}. | Try a quick hash or a warm salad with "
        "a sharp dressing.",
        "The {ingredient} was on offer, so now I have far too much of it. | Sounds like a "
        "batch-cooking weekend. | Freeze some in portions; future you will be grateful.",
    ),
    "work": (
        "I have to finish {work_thing} by the end of the week and I feel {feeling}. | Break it "
        "into small pieces and start with the easiest one to build momentum. | That's a lot. Want "
        "to sketch a rough plan for {work_thing} together?",
        "The {meeting} ran way over time again today. | Long meetings are draining. A clear "
        "agenda and a hard stop can help. | Maybe suggest ending the {meeting} with a short "
        "summary of decisions.",
        "I spent most of {day_part} on {work_thing}. | How's it coming along? | Sounds like a "
        "focused stretch. Is it close to done?",
        "Do you have tips for staying focused when I feel {feeling}? | Short breaks every hour, "
        "water, and one clearly defined task at a time. | Try a timer: work for forty minutes, "
        "then stretch briefly.",
        "I'm feeling {feeling} after today's {meeting}. | That's understandable. What was the "
        "hardest part? | Sometimes a short walk helps reset after a {meeting}.",
        "Should I push back on the timeline for {work_thing}? | If the scope grew, it's fair to "
        "raise it early rather than late. | Explain what would have to give if the date stays; "
        "that makes the trade-off concrete.",
        "Can you help me phrase a polite reminder about {work_thing}? | Sure: \"Just checking in "
        "on {work_thing}; is anything blocking it?\" | Keep it short and friendly, and suggest a "
        "specific next step.",
        "I've got {count} meetings back to back {day_part}. | That's a lot. Leave a few minutes "
        "between them if you can. | Make sure you eat something in between.",
    ),
    "programming": (
        "I'm fighting {error} in some {lang} code. | Can you reproduce it reliably? A minimal "
        "example usually points at the cause. | Annoying! Logging the inputs right before it "
        "happens often narrows it down.",
        "What's your take on {thing} in {lang}? | Used with care they pay off; the main cost is "
        "keeping them consistent. | Worth it for larger codebases, less so for small scripts.",
        "I finally tracked down {error}; it was a one-line fix. | Classic. The smallest fixes "
        "often take the longest to find. | Nice work! Worth adding a test so it doesn't come "
        "back.",
        "How do you usually approach {thing}? | Start simple, measure, and only add complexity "
        "when it's clearly needed. | I'd look at how the rest of the codebase does it and stay "
        "consistent.",
        "Our CI keeps failing because of {error}. | Is it consistent or intermittent? "
        "Intermittent failures often hint at timing issues. | Try running the job locally with "
        "the same settings; it's usually environment drift.",
        "I'm refactoring an old {lang} module and it's messier than expected. | Add tests around "
        "the current behaviour first, then change it in small steps. | Old code is always messier "
        "than it looks. Go one function at a time.",
        "Is {lang} a good choice for {project_kind}? | It can be; it mostly depends on what you "
        "already know well. | For {project_kind} I'd pick whatever you can maintain comfortably.",
        "I spent an hour reading about {thing} today. | Worth it? Anything surprising? | Nice. "
        "It's one of those topics that pays off later.",
    ),
    "weather": (
        "It's been {weather} {when}. | Sounds like a good day for something warm to drink. | Hope "
        "it clears up soon. | At least it makes a change from last week.",
        "The forecast says it'll be {weather} all weekend. | Might be a good weekend for indoor "
        "plans, or a brisk walk between showers. | Weekend forecasts change a lot, so it may "
        "still improve.",
        "I got completely soaked walking {route}. | Oh no! Time for dry socks and something hot "
        "to drink. | That's the worst. Did your umbrella give up?",
        "Do you think it's going to stay {weather} for long? | Hard to say; forecasts beyond a "
        "couple of days aren't very reliable. | Probably not for long, it's been changing every "
        "few days.",
        "I love days like this, {weather} and quiet. | They do have a certain charm. | Perfect "
        "for a slow day.",
    ),
    "books": (
        "I want to read more {genre} this year. Any advice? | Start with something short so you "
        "get a feel for it without a huge commitment. | Ask a local bookshop for their "
        "favourites; they're usually great at this.",
        "I've been stuck on the same chapter for a week. | Maybe it's just not grabbing you. It's "
        "fine to set a book aside. | Try a few pages at a time before sleep; momentum comes back "
        "quickly.",
        "Do you prefer {genre} or {genre2}? | Both have their moments! I like {genre} when I want "
        "something focused. | It depends on the mood, but variety keeps reading fun.",
        "I finished a collection of {genre} and loved it. | That's great! What stuck with you "
        "most? | Nice, finishing a book is satisfying. Looking for the next one?",
        "Can you suggest some {genre} for {moment}? | For {moment}, something with short chapters "
        "works well. | Happy to. Do you want something light or something absorbing?",
        "How do you keep track of books you want to read? | A simple list in a notes app works "
        "well for most people. | Some people keep a paper notebook; writing it down helps it "
        "stick.",
    ),
    "exercise": (
        "I went for {activity} {when} and feel great. | Good for you! Consistency matters more "
        "than intensity. | Great, make sure to drink enough water.",
        "My {body} are sore after {activity}. | Gentle stretching and a rest day should help. | "
        "Some soreness is normal; if it's sharp pain, ease off for a while.",
        "How often should I stretch my {body}? | A few minutes most days is better than one long "
        "session a week. | Daily if you can, even briefly.",
        "I skipped {activity} today, just wasn't feeling it. | That's fine, rest days count too. "
        "| No problem. Tomorrow's another chance.",
        "Any tips for warming up before {activity}? | Start with light movement for a few minutes "
        "and build up gradually. | Dynamic stretches like leg swings and arm circles work well.",
    ),
    "travel": (
        "I'm thinking about a weekend away in {place}. | That sounds lovely. Do you want "
        "somewhere quiet or with lots to do? | Good idea; a change of scenery helps.",
        "What should I pack for a few days in {place}? | Layers, a rain jacket, and something "
        "comfortable to walk in. | Keep it light: a few versatile outfits and a good bag.",
        "Is it better to book a place in {place} early or at the last minute? | Early for popular "
        "spots and weekends; last minute can work off-season. | Early usually gives more choice, "
        "especially if you need something specific.",
        "I'd love to see {place} in the autumn. | Autumn is a beautiful time to travel, with "
        "fewer crowds too. | Good timing, prices usually drop after the summer season.",
        "I can't decide between {place} and {place2} for a short break. | Both sound nice. Which "
        "matters more, quiet or things to do? | {place} might be better if you want to switch off "
        "completely.",
        "Have you got tips for staying organised while travelling? | Keep documents in one folder "
        "and make a simple checklist. | Pack the night before and leave a buffer for delays.",
    ),
    "smalltalk": (
        "{greeting}! How's it going? | {greeting}! All good here. What's on your mind today? | "
        "Hi! Ready when you are.",
        "Thanks for the help {earlier}. | Anytime! | Glad it was useful.",
        "I'm a bit {tired} today. | Take it easy where you can. | Maybe a short break would help.",
        "Long day. Just wanted to chat for a bit. | Of course. How was it overall? | Happy to. "
        "What's been going on?",
        "Do you ever get bored of my questions? | Not at all, I enjoy them. | Never. Ask away.",
        "I should probably take a break from the screen. | Good idea. A few minutes away does "
        "wonders. | Yes, rest your eyes for a bit.",
    ),
    "home": (
        "I finally got around to {chore}. | That's satisfying. One less thing on the list. | "
        "Nice! Chores feel better once they're done.",
        "I've been putting off {chore} for weeks. | Maybe set a timer for twenty minutes and see "
        "how far you get. | Pair it with some music and it goes faster.",
        "The {herb} on the windowsill is finally growing. | Lovely! Pinch the tops off to keep it "
        "bushy. | Nice, fresh herbs make such a difference.",
        "Any tips for keeping the {room} tidy during {period}? | Put things back as you go and do "
        "a quick reset every night. | A small basket for clutter makes a surprising difference.",
        "Is a {gadget} worth getting for the flat? | If it solves something that annoys you "
        "weekly, probably yes. | Check the reviews for noise and running costs first.",
    ),
    "music": (
        "I've had {mgenre} on repeat all week. | Nice, it's great background for focusing. | Good "
        "choice. Any particular album?",
        "Do you know any good {mgenre} for working? | Instrumental stuff usually works best for "
        "concentration. | Try a long playlist so you don't have to keep picking songs.",
        "A friend got me into {mgenre} recently. | Nice, friends' recommendations are often the "
        "best ones. | Lovely. Want some suggestions in the same vein?",
    ),
}
SLOTS = {
    "feeling": "drained|scattered|behind|overwhelmed|foggy|restless|stretched thin",
    "day_part": "the morning|the afternoon|today|yesterday afternoon",
    "count": "two|several|a handful of|way too many",
    "project_kind": "a small CLI tool|a scraping script|a data pipeline|"
                    "a quick prototype|a test harness|a build script",
    "route": "to the shops|back from lunch|to the post office|home from the station",
    "moment": "a long journey|rainy weekends|a beach holiday|quiet Sunday mornings",
    "greeting": "Morning|Hey|Hi there|Hello again|Good afternoon",
    "earlier": "earlier|with that|yesterday|this morning",
    "tired": "tired|slow|distracted|sleepy|flat|wired",
    "room": "kitchen|hallway|living room|bathroom|spare room",
    "period": "the week|busy weeks|the winter|a hectic month",
    "gadget": "robot vacuum|dehumidifier|air purifier|label maker|steam mop",
    "ingredient": "aubergine|chickpeas|salmon|spinach|sweet potatoes|tofu|brown rice|cauliflower|"
                  "leeks|mushrooms|halloumi|courgettes|lentils|kale|quinoa|pork belly|fennel|"
                  "beetroot",
    "method": "roast|braise|grill|steam|pan-fry|bake|poach|stir-fry",
    "tool": "pressure cooker|stand mixer|mandoline|rice cooker|cast-iron skillet|"
            "immersion blender|food processor|Dutch oven",
    "spice": "smoked paprika|cumin|star anise|sumac|fresh dill|ginger|za'atar|cardamom|"
             "chilli flakes",
    "work_thing": "the onboarding docs|the budget spreadsheet|the hiring rubric|"
                  "the vendor contract|the roadmap draft|the incident write-up|"
                  "the customer survey results|the training plan",
    "meeting": "standup|retro|all-hands|design review|status sync",
    "lang": "Python|TypeScript|Bash|Haskell|Lua|Java|C++",
    "thing": "type hints|async code|regular expressions|unit tests|dependency pinning|"
             "Docker images|git rebases|feature flags|code reviews|log rotation",
    "error": "a segfault|an off-by-one error|a timeout|a circular import|a stale cache|"
             "a deadlock|a null pointer exception|a race condition|a memory leak",
    "weather": "drizzly|unusually warm|foggy|windy|crisp and sunny|grey and muggy|stormy",
    "when": "this morning|all afternoon|since lunchtime|all day|since yesterday",
    "genre": "historical fiction|short stories|essays|poetry|science writing|crime novels|"
             "graphic novels|memoirs",
    "activity": "a long walk|a yoga class|a hill walk|a rowing session|a short jog|"
                "a kettlebell session|a core workout|a stair session",
    "body": "knees|shoulders|calves|hamstrings|hips|forearms",
    "place": "the coast|the mountains|a lake town|the countryside|a seaside village|"
             "a national park|the islands up north|the old town across the river",
    "chore": "cleaning out the fridge|sorting the recycling|fixing the squeaky hinge|"
             "descaling the kettle|organising the cupboard under the stairs|washing the windows|"
             "clearing out the junk drawer|defrosting the freezer",
    "herb": "basil|mint|parsley|thyme|coriander|rosemary",
    "mgenre": "jazz|lo-fi beats|old soul records|ambient music|bossa nova|baroque music|"
              "film soundtracks|folk music",
}
USER_PREFIXES = ("", "", "", "", "Hmm, ", "So, ", "Random thought: ", "Honestly, ", "Okay, ")
USER_TAILS = ("", "", "", "", " Any thoughts?", " What do you think?", " Just thought I'd say.")
FACT_PREFIXES = ("", "", "By the way, ", "Oh, before I forget: ", "Quick note: ",
                 "Just so you know, ")
ACK_FACT = ("Got it, I'll remember that.", "Noted, thanks for telling me.",
            "Thanks, I've made a note of that.", "Understood, I'll keep that in mind.",
            "Good to know!", "Okay, noted.")
ACK_UPDATE = ("Thanks for the update, noted.", "Got it, I'll update my notes.",
              "Okay, I'll remember the change.")
ACK_ANCHOR = ("Glad that's behind you. How did it go?", "Oh, how was it?",
              "That sounds like quite a day.")


def _split(s: str) -> list[str]:
    return [x for x in s.split("|") if x]


def _words_rx(words: list[str]) -> re.Pattern[str]:
    """Any of `words` as whole words, case-insensitive, with an optional plural -s/-es."""
    alts = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alts})(?:s|es)?(?!\w)", re.IGNORECASE)


def contains_term(text: str, term: str) -> bool:
    """`term` (or its plural) as a whole word or phrase, case-insensitive."""
    return term.lower() in text.lower() and _words_rx([term]).search(text) is not None


BANNED = _words_rx(  # filler never uses a word of any fact, value, anchor or absent term
    _split(NAMES) + _split(TEMPORAL_WORDS) + ["remember this"] + [a[2] for a in ANCHORS]
    + [w for f in FACTS for x in (f.values, f.terms, f.hard_terms) for w in _split(x)]
    + [w for _, x in NEVER_SAID for w in _split(x)]
    + [w for m in MULTI_HOP for x in m[3:6] for w in _split(x)]
    + [w for k in KINDS for w in _split(k[3])])


def _cap(prefix: str, s: str) -> str:
    return prefix + (s if not prefix or s.startswith(("I ", "I'")) else s[0].lower() + s[1:])


class _Fill(dict[str, str]):
    """Slot values picked on first use, shared by a user line and its reply."""

    def __init__(self, rng: Random) -> None:
        super().__init__()
        self.rng = rng

    def __missing__(self, key: str) -> str:
        self[key] = self.rng.choice(_split(SLOTS[key.rstrip("0123456789")]))
        return self[key]


def _filler(rng: Random, topics: list[str]) -> tuple[str, str]:
    while True:
        topic = rng.choice(topics) if rng.random() < 0.8 else rng.choice(sorted(TOPICS))
        user, *replies = (x.strip() for x in rng.choice(TOPICS[topic]).split("|"))
        fill = _Fill(rng)
        u = user.format_map(fill)
        u = _cap(rng.choice(USER_PREFIXES), u[0].upper() + u[1:])
        u += rng.choice(USER_TAILS) if u.endswith(".") else ""
        a = rng.choice(replies).format_map(fill)
        a = a[0].upper() + a[1:]
        if not BANNED.search(u + "\n" + a):
            return u, a


class _Slot(NamedTuple):
    session: int
    turn: int  # within the session, from 1
    role: str
    when: datetime
    day: int  # days since the start date


def _skeleton(n: int, rng: Random, start: datetime, days: int) -> list[_Slot]:
    """Sessions of 10-40 alternating turns, up to 4 a day (more if `n` is large) on about 3
    days in 4, all times increasing."""
    lengths: list[int] = []
    while sum(lengths) < n:
        lengths.append(rng.randrange(10, 41, 2))
    lengths[-1] -= sum(lengths) - n
    if lengths[-1] < 10 and len(lengths) > 1:
        merged = lengths.pop() + lengths.pop()
        lengths += [merged] if merged <= 40 else [merged // 4 * 2, merged - merged // 4 * 2]
    active = [0] + [d for d in range(1, days) if rng.random() < 0.75]
    cap = max(4, -(-len(lengths) // len(active)) + 1)
    per_day: Counter[int] = Counter()
    for _ in lengths:
        d = rng.choice(active)
        while per_day[d] >= cap:
            d = rng.choice(active)
        per_day[d] += 1
    slots: list[_Slot] = []
    t = start - timedelta(hours=1)
    for d in sorted(per_day):
        width = 13 * 3600 // per_day[d]  # sessions spread over 13 hours from the start time
        for i in range(per_day[d]):
            offset = timedelta(days=d, seconds=i * width + rng.randrange(width * 3 // 10 + 1))
            t = max(start + offset, t + timedelta(minutes=10))
            session = slots[-1].session + 1 if slots else 1
            for j in range(lengths[session - 1]):
                role = "user" if j % 2 == 0 else "assistant"
                slots.append(_Slot(session, j + 1, role, t, (t.date() - start.date()).days))
                t += timedelta(seconds=rng.randrange(5, 40) if role == "user"
                               else rng.randrange(30, 300))
    return slots


class _Free:
    """User slots that hold no planted turn yet."""

    def __init__(self, slots: list[_Slot]) -> None:
        self.slots = slots
        self.free = [i for i, s in enumerate(slots) if s.role == "user"]

    def frac(self, rng: Random, lo: float, hi: float) -> int:
        a = int(lo * len(self.free))
        return self.free.pop(rng.randrange(a, max(a + 1, int(hi * len(self.free)))))

    def _take(self, among: list[int], rng: Random) -> int:
        if not among:
            raise ValueError("corpus too small for the planted turns")
        pos = rng.choice(among)
        self.free.remove(pos)
        return pos

    def after(self, rng: Random, pos: int, gap: int) -> int:
        later = [p for p in self.free if p >= pos + gap] or [p for p in self.free if p > pos]
        return self._take(later, rng)

    def on_day(self, rng: Random, day: int) -> int:
        return self._take([p for p in self.free if self.slots[p].day == day], rng)

    def days(self) -> set[int]:
        return {self.slots[p].day for p in self.free}


def _pick(rng: Random, values: str, used: set[str]) -> str:
    v = rng.choice([x for x in _split(values) if x not in used])
    used.add(v)
    return v


class _Ask(NamedTuple):
    category: str
    text: str
    evidence: tuple[int, ...]
    stale: tuple[int, ...] = ()
    support: tuple[int, ...] = ()
    answer: str = ""
    absent: str = ""


def generate(n_turns: int = 2000, seed: int = 7, start: str = "2026-09-01T09:00:00+00:00",
             days: int = 42, n_facts: int = 40) -> Corpus:
    """A deterministic corpus of `n_turns` turns and its questions."""
    if n_facts + N_UPDATED > len(FACTS):
        raise ValueError(f"n_facts must be at most {len(FACTS) - N_UPDATED}")
    needed = n_facts + 2 * N_UPDATED + 2 * N_MULTI_HOP + 4 * N_TEMPORAL + 10
    if n_turns < 2 * needed:
        raise ValueError(f"n_turns must be at least {2 * needed} for {n_facts} facts")
    rng = Random(seed)
    t0 = datetime.fromisoformat(start.replace("Z", "+00:00")).replace(microsecond=0)
    t0 = t0.replace(tzinfo=UTC) if t0.tzinfo is None else t0.astimezone(UTC)
    slots = _skeleton(n_turns, rng, t0, days)
    free = _Free(slots)
    special: dict[int, tuple[str, tuple[str, ...]]] = {}  # position -> (user line, replies)
    used: set[str] = set()
    asks: list[_Ask] = []

    # temporal: an anchor event on day A, the answer on A + delta, same-kind distractors elsewhere
    kinds = rng.sample(KINDS, len(KINDS))
    kind_days: dict[str, set[int]] = {k[0]: set() for k in KINDS}
    for i, anchor in enumerate(rng.sample(ANCHORS, N_TEMPORAL)):
        kind = kinds[i % len(kinds)]
        delta, rel = rng.choice(RELS)
        have = free.days()
        cands = sorted(d for d in have if d + delta in have - kind_days[kind[0]])
        if not cands:
            continue
        day = rng.choice(cands)
        a_pos, t_pos = free.on_day(rng, day), free.on_day(rng, day + delta)
        kind_days[kind[0]].add(day + delta)
        others = sorted(free.days() - kind_days[kind[0]])
        distract = [(free.on_day(rng, d), d) for d in rng.sample(others, min(2, len(others)))]
        v = _pick(rng, kind[3], used)
        special[a_pos] = (anchor[0], ACK_ANCHOR)
        special[t_pos] = (kind[1].format(v=v), kind[4])
        for pos, d in distract:
            special[pos] = (kind[1].format(v=_pick(rng, kind[3], used)), kind[4])
            kind_days[kind[0]].add(d)
        q = kind[2].format(rel=rel, anchor=anchor[1])
        asks.append(_Ask("temporal", q, (t_pos,), support=(a_pos,), answer=v))

    # updated: the old value in the first half, the new one at least 100 turns later
    pool = rng.sample(FACTS, len(FACTS))
    updated = [f for f in pool if f.upd][:N_UPDATED]
    for f in updated:
        old_v, new_v = _pick(rng, f.values, used), _pick(rng, f.values, used)
        old = free.frac(rng, 0.0, 0.5)
        new = free.after(rng, old, 100)
        special[old] = (_cap(rng.choice(FACT_PREFIXES), f.stmt.format(v=old_v)), ACK_FACT)
        special[new] = (f.upd.format(v=new_v), ACK_UPDATE)
        asks.append(_Ask("updated", f.upd_q, (new,), stale=(old,), answer=new_v))

    # multi_hop: a linking turn, then the answering turn later
    names = rng.sample(_split(NAMES), N_MULTI_HOP)
    for m, name in zip(rng.sample(MULTI_HOP, N_MULTI_HOP), names, strict=True):
        fill = {"name": name, "a": "", "b": ""}
        fill |= {k: _pick(rng, x, used) for k, x in (("a", m[4]), ("b", m[5])) if x}
        first = free.frac(rng, 0.0, 0.6)
        second = free.after(rng, first, 20)
        special[first] = (m[0].format(**fill), ACK_FACT)
        special[second] = (m[1].format(**fill), ACK_FACT)
        asks.append(_Ask("multi_hop", m[2].format(**fill), (first, second),
                         answer=fill["b"] or fill["a"]))

    # planted: three in four in the first 65% of the conversation, the rest anywhere
    planted = [f for f in pool if f not in updated][:n_facts]
    for f in planted:
        v = _pick(rng, f.values, used)
        pos = free.frac(rng, 0.0, 0.65 if rng.random() < 0.75 else 1.0)
        special[pos] = (_cap(rng.choice(FACT_PREFIXES), f.stmt.format(v=v)), ACK_FACT)
        asks.append(_Ask("planted", f.q, (pos,), answer=v))
        asks.append(_Ask("paraphrase", f.para, (pos,), answer=v))

    turns: list[Turn] = []
    topics: dict[int, list[str]] = {}
    reply = ""
    for i, s in enumerate(slots):
        if s.role == "assistant":
            content = reply
        elif i in special:
            content, reply = special[i][0], rng.choice(special[i][1])
        else:
            if s.session not in topics:
                topics[s.session] = rng.sample(sorted(TOPICS), 2)
            content, reply = _filler(rng, topics[s.session])
        speaker = USER if s.role == "user" else ASSISTANT
        turns.append(Turn(f"synth{seed}-s{s.session}", speaker, s.role, content,
                          s.when.isoformat(), f"synth{seed}-s{s.session}-t{s.turn}"))

    # never_said: unplanted pool topics, then unrelated ones; never_said_hard: planted frames
    text = "\n".join(t.content for t in turns)

    def absent(terms: str) -> bool:
        return not any(contains_term(text, w) for w in _split(terms))

    rest = [(f.q, f.terms) for f in pool if f not in planted and f not in updated]
    never = [x for x in rest if absent(x[1])][: N_NEVER // 2]
    never += [x for x in rng.sample(NEVER_SAID, len(NEVER_SAID)) if absent(x[1])]
    asks += [_Ask("never_said", q, (), absent=terms) for q, terms in never[:N_NEVER]]
    hard = [f for f in rng.sample(planted, len(planted)) if absent(f.hard_terms)][:N_HARD]
    asks += [_Ask("never_said_hard", f.hard, (), absent=f.hard_terms) for f in hard]

    ids = [t.external_id for t in turns]
    questions: list[Question] = []
    for cat in CATEGORIES:
        for n, a in enumerate((a for a in asks if a.category == cat), 1):
            questions.append(Question(
                f"{cat}-{n:02d}", cat, a.text, tuple(ids[p] for p in a.evidence),
                tuple(ids[p] for p in a.stale), tuple(_split(a.absent)), a.answer,
                tuple(ids[p] for p in a.support)))
    return Corpus(turns, questions, seed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench synth",
                                 description="Synthetic long-conversation memory benchmark.")
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--facts", type=int, default=40)
    ap.add_argument("--days", type=int, default=42)
    ap.add_argument("--start", default="2026-09-01T09:00:00+00:00")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    corpus = generate(args.turns, args.seed, args.start, args.days, args.facts)
    args.out.mkdir(parents=True, exist_ok=True)
    corpus.write(args.out / "turns.jsonl", args.out / "questions.jsonl")
    sessions = len({t.session for t in corpus.turns})
    span = f"{corpus.turns[0].timestamp[:10]} .. {corpus.turns[-1].timestamp[:10]}"
    print(f"{len(corpus.turns)} turns, {sessions} sessions, {span} -> {args.out}")
    for cat, n in corpus.counts().items():
        print(f"  {cat:<16} {n}")
    print(f"  {'total':<16} {len(corpus.questions)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
