"""The fact-recall chat check's question sets (bench/suites/factchat.py, issue 40): what the
user says, what is asked later, and questions about things never said."""

from __future__ import annotations

# (what the user says, the question asked later, words any one of which shows the fact)
# The dev set: the grounded-reply heuristic's thresholds (agent/domain/grounded.py,
# GroundedConfig) were chosen on these 10 facts and 10 never-said questions, so its
# figures are fitted, not held out.
FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("My name is Dana and I live in Lisbon.", "Where do I live?", ("lisbon",)),
    ("I work as a marine biologist at the city aquarium.", "What do I do for work?",
     ("marine biologist",)),
    ("My sister Priya is visiting next Friday.", "Who is visiting me next Friday?",
     ("priya",)),
    ("My dog is called Biscuit.", "What is my dog called?", ("biscuit",)),
    ("I was born in Toronto.", "Where was I born?", ("toronto",)),
    ("My favourite food is grilled sardines.", "What is my favourite food?", ("sardines",)),
    ("I play the cello in a community orchestra.", "Which instrument do I play?",
     ("cello",)),
    ("My partner Sam works as a nurse.", "What does my partner Sam do?", ("nurse",)),
    ("I am allergic to peanuts.", "What am I allergic to?", ("peanut",)),
    ("My car is a blue Fiat Panda.", "What car do I drive?", ("fiat", "panda")),
]
NEVER_SAID: list[str] = [
    "What is my blood type?",
    "What is my brother's name?",
    "Which university did I go to?",
    "What is my favourite colour?",
    "How old is my grandmother?",
    "What is my phone number?",
    "Where did I go on holiday last summer?",
    "What is my cat's name?",
    "What is my shoe size?",
    "Which football team do I support?",
]
# The first held-out set (`--set heldout`): another person, other places, jobs, pets, dates
# and hobbies, in the looser wording users type. Written before its first run and not
# changed after it; its three misses (7/10) were then looked at and the grounded path's
# word matching changed for them (agent/domain/grounded.py `cover`), so it is dev data
# now, not held out. Keep the sets apart (tests/unit/test_bench_factchat.py checks that
# they share no statement, question or fact word).
HELDOUT_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("Hey! I'm Tomás, by the way. I'm based in Rotterdam these days.",
     "remind me, which city am I based in?", ("rotterdam",)),
    ("I've been teaching chemistry at a secondary school for six years now.",
     "What's my job again?", ("chemistry",)),
    ("My partner's name is Ingrid, we've been together since 2019.",
     "Do you remember my partner's name?", ("ingrid",)),
    ("We adopted a retired greyhound called Pepper last spring.",
     "what breed is the dog we adopted?", ("greyhound",)),
    ("my birthday is on the 14th of August btw", "When's my birthday?", ("august",)),
    ("On weekends I usually go bouldering at the climbing gym near my flat.",
     "What do I usually get up to at the weekend?", ("boulder", "climbing")),
    ("I grew up on a dairy farm just outside Cork.", "where'd I grow up?", ("cork",)),
    ("Honestly I can't stand coriander, it tastes like soap to me.",
     "Is there a herb I can't stand?", ("coriander",)),
    ("Our daughter Aiko starts primary school in September.", "What's my daughter called?",
     ("aiko",)),
    ("I'm learning Korean at the moment, mostly on the bus to work.",
     "Which language am I learning at the moment?", ("korean",)),
]
HELDOUT_NEVER_SAID: list[str] = [
    "What's my mum's maiden name?",
    "how tall am I?",
    "What time do I usually wake up?",
    "Do I have any tattoos?",
    "What does my partner do for a living?",
    "How old is my daughter?",
    "what's my favourite film?",
    "Which bank am I with?",
    "What's the wifi password at my place?",
    "When did I last go to the dentist?",
]
# The second held-out set (`--set heldout2`): the first held-out set's misses were looked
# at and the grounded path was then changed, so `heldout` counts as dev data from then on.
# This set was written and committed before those changes, before its author read the
# grounding code (knowing only the three misses): a third person's home, work, family, pet,
# hobby, date, food, plan, past event and possession, each asked the way a person would
# ask it. Run once at the end of the fixes and reported as it came out; nothing was tuned
# on it. Its author also wrote those fixes, so it is held out from the tuning, not blind
# to it.
HELDOUT2_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("I live in a small flat in Edinburgh, right by the castle.",
     "What city do I call home?", ("edinburgh",)),
    ("I'm an architect at a firm that mostly designs schools.",
     "What do I do for a living?", ("architect",)),
    ("My son's name is Felix, he's seven.", "What's my boy called?", ("felix",)),
    ("We keep a tortoise named Franklin in the back garden.",
     "What kind of pet do I have?", ("tortoise",)),
    ("In my spare time I restore old motorbikes.", "what's my hobby?", ("motorbike",)),
    ("Our wedding anniversary is on the 3rd of June.", "When's our anniversary?",
     ("june",)),
    ("I've been vegetarian since I was a teenager.", "Do I eat meat?", ("vegetarian",)),
    ("Next month I'm flying to Japan to hike the Kumano Kodo trail.",
     "Where am I travelling to next month?", ("japan", "kumano")),
    ("I ran my first marathon in Berlin back in 2022.",
     "where was that first marathon I did?", ("berlin",)),
    ("My laptop is an old ThinkPad I've had for ages.", "What computer do I use?",
     ("thinkpad",)),
]
HELDOUT2_NEVER_SAID: list[str] = [
    "Where did I go to school?",
    "What's my favourite band?",
    "How many siblings have I got?",
    "What's my dad's name?",
    "What did I study at uni?",
    "what's my postcode?",
    "Do I speak any other languages?",
    "What's my mother's job?",
    "Which gym do I go to?",
    "When did I pass my driving test?",
]
# The third held-out set (`--set heldout3`): heldout2's three misses were looked at on
# 2026-12-02 and the grounded path was then changed, so `heldout2` counts as dev data from
# then on. This set was written before those changes by a helper who was told not to read
# the grounding code, the other sets' results or bench/results (blind to how questions are
# matched to facts), and committed before the changes; run once after them and reported
# as it came out. Nothing was tuned on it.
HELDOUT3_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ('Just moved into a flat in Leeds last month, still living out of boxes lol',
     'what city am I living in these days?', ('leeds',)),
    ('I work as a physiotherapist at a sports clinic, mostly dodgy knees and shoulders',
     'what do I do for a living?', ('physio',)),
    ("my sister Abena is getting married in the spring, honestly can't wait",
     "what's my sister called?", ('abena',)),
    ("we've got an old tabby cat called Biscuit who basically runs the house",
     "what's my pet's name?", ('biscuit',)),
    ('Saturdays are for climbing - I go bouldering at the indoor wall with a couple of mates',
     'what do I usually get up to at the weekend for fun?', ('boulder', 'climb')),
    ("heads up, my birthday's on the 14th of November",
     "when's my birthday again?", ('november',)),
    ('I stopped eating meat about two years ago, fully vegetarian now',
     'do I have any dietary restrictions?', ('vegetarian',)),
    ('booked flights to Lisbon for a week in June with my partner!!',
     'where am I going on holiday this summer?', ('lisbon',)),
    ('I ran my first marathon back in 2019 in Manchester. never again haha',
     'what race did I do in 2019?', ('marathon',)),
    ("oh and I'm allergic to penicillin, found that out the hard way as a kid",
     'am I allergic to any medications?', ('penicillin',)),
]
HELDOUT3_NEVER_SAID: list[str] = [
    "what car do I drive?",
    "what's my favourite film?",
    "do I play any instruments?",
    "which football team do I support?",
    "where did I go to uni?",
    "what kind of music am I into?",
    "do I have any kids?",
    "what languages do I speak?",
    "what's my favourite colour?",
    "what book am I reading at the moment?",
]
# The fourth held-out set (`--set heldout4`): heldout3's misses were looked at on
# 2026-12-02 and the grounded path is to be changed for them, so `heldout3` counts as dev
# data from then on. This set was written before those changes by a helper who was told
# not to read the grounding code, the other sets' results or bench/results (blind to how
# questions are matched to facts), and committed before the changes; run once after them
# (5/10), then its misses were looked at and fixed: dev data since.
HELDOUT4_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("we finally moved out to Galway in the spring, the rain is something else but I "
     "honestly love it here",
     "remind me, which town do I live in now?", ("galway",)),
    ("I spend my days fixing wind turbines, which mostly means climbing 80 metres up a "
     "ladder with a harness and a bag of spanners",
     "what do I do for work?", ("turbine",)),
    ("my little brother Declan just started his apprenticeship as an electrician, so proud "
     "of him",
     "what's my brother called?", ("declan",)),
    ("we've got a retired greyhound called Biscuit that we adopted off the track, she "
     "sleeps about 20 hours a day",
     "what's my dog's name?", ("biscuit",)),
    ("Sunday mornings are for sea swimming down at Salthill with a gang of older ladies, "
     "no wetsuits allowed, it's freezing",
     "what do I get up to at the weekends for fun?", ("swim", "salthill")),
    ("our wedding anniversary is the 14th of March and every single year I forget to book "
     "somewhere until the week before",
     "when's my anniversary again?", ("march",)),
    ("I'm coeliac so anything with gluten is a no for me, which makes pub lunches a "
     "nightmare tbh",
     "is there anything I can't eat?", ("gluten", "coeliac", "celiac")),
    ("Booked flights to Lisbon for the second week of October with my friend Aoife!! first "
     "proper holiday in two years",
     "where am I off to on holiday this autumn?", ("lisbon",)),
    ("did the Dublin marathon back in 2019, 4 hours 12, never again lol",
     "what big race have I done before?", ("dublin",)),
    ("honestly can't stand coffee, I'm a rooibos person through and through",
     "what's my go-to hot drink?", ("rooibos",)),
]
HELDOUT4_NEVER_SAID: list[str] = [
    "what's my sister's name?",
    "do I have a cat?",
    "what does my partner do for a living?",
    "when is my birthday?",
    "where did I grow up?",
    "which airline am I flying with?",
    "how long have I been in my current job?",
    "what's my favourite restaurant around here?",
    "what did I study at college?",
    "what's my blood type?",
]
# The fifth held-out set (`--set heldout5`): heldout4's misses were looked at on
# 2026-12-02 and the grounded path is to be changed for them, so `heldout4` counts as dev
# data from then on. This set was written before those changes by a helper who was told
# not to read the grounding code, the other sets' results or bench/results (blind to how
# questions are matched to facts), and committed before the changes; nothing was tuned on
# it.
HELDOUT5_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("just got the keys to a flat in Ljubljana last week! right by the river. still "
     "sleeping on a mattress on the floor lol",
     "remind me, what city am I living in these days?", ("ljubljana",)),
    ("so work's been mad, I'm a sound engineer for a small theatre company and we open "
     "a new show on friday. Basically I live behind the mixing desk now",
     "what is it I do for a living again?", ("sound engineer",)),
    ("my brother Anselm is coming to stay for a week in March. he's a nightmare houseguest "
     "but I love him",
     "what's my brother called?", ("anselm",)),
    ("ok random but my tortoise Bartholomew is 41 years old. He was my grandad's "
     "originally, and he'll probably outlive me too",
     "what's the name of my tortoise?", ("bartholomew",)),
    ("fyi I'm allergic to sesame",
     "is there any food I need to avoid?", ("sesame",)),
    ("I started learning Korean a couple of months ago, Duolingo plus a tutor on "
     "Thursdays. Hangul turned out way easier than I expected, the grammar not so much",
     "which language have I been studying?", ("korean",)),
    ("Booked it!! Hiking the Kungsleden in Sweden this August with my friend Marit, "
     "about 110 km hut to hut",
     "what's the trail I'm doing this summer?", ("kungsleden",)),
    ("back in 2019 I came second in a regional chess tournament in Graz. Still my proudest "
     "moment tbh, I beat a guy rated 400 points above me",
     "where was that chess tournament I placed in?", ("graz",)),
    ("my car's a 2008 Skoda Octavia estate, green, 300k on the clock and still going",
     "what do I drive?", ("octavia", "skoda")),
    ("my birthday is the 14th of November, same day as my best friend's which makes "
     "planning parties pure chaos",
     "when's my birthday?", ("november",)),
]
HELDOUT5_NEVER_SAID: list[str] = [
    "what's my sister's name?",
    "what year was I born?",
    "what's my Korean tutor called?",
    "which theatre do I work at?",
    "what street is my flat on?",
    "what's my dog's name?",
    "who did I lose to in that chess tournament?",
    "what date do I fly out to Sweden?",
    "what's my favourite band?",
    "what's my partner's name?",
]
# The sixth held-out set (`--set heldout6`): heldout5's misses were looked at on
# 2026-12-02 and the grounded path is to be changed for them. This set was written before
# those changes by a helper who was told not to read the grounding code, the other sets'
# results or bench/results (blind to how questions are matched to facts), and committed
# before the changes; nothing was tuned on it.
HELDOUT6_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("ugh night shifts again this week. I drive trains between Malmö and Copenhagen for a "
     "living so if I'm slow to reply that's why",
     "what's my line of work?", ("train",)),
    ("doc appt went ok I think. long story short they've confirmed it's type 1 diabetes, so "
     "I'm on insulin now, four jabs a day. weirdly relieved to finally have a name for it "
     "tbh. anyway how's your day going",
     "what did the doctor find out was wrong with me?", ("diabetes",)),
    ("me and Henrik are getting married on the 21st of September!! in a barn outside "
     "Uppsala, invites went out today",
     "who am I marrying?", ("henrik",)),
    ("my budgie Kalle has learnt to whistle the tetris theme and now he literally won't "
     "stop. send help",
     "what's my bird called?", ("kalle",)),
    ("been getting really into woodturning lately, made my first bowl out of birch on "
     "saturday. it's wonky af but it's mine",
     "what's the new hobby I told you about?", ("woodturning", "wood turning")),
    ("mortgage finally approved \U0001f64c if the bank doesn't mess it up we get the keys to "
     "the new house on the 30th of April",
     "when's moving day for us?", ("april",)),
    ("been listening to nothing but Ghost all week because I've got tickets to see them in "
     "Gothenburg in May",
     "which band am I going to see live?", ("ghost",)),
    ("PB at parkrun this morning!! 24:38, finally under 25 mins after like a year of trying",
     "what was my time at the parkrun?", ("24:38", "24 minutes")),
    ("honestly the rota this month is a joke. my manager Birgitta put me down for six "
     "nights in a row and then acted all surprised when I said no. swapped two with Jonas "
     "in the end so it's sorted, still annoyed tho",
     "who's my boss at work?", ("birgitta",)),
    ("sorry was offline all weekend, spent basically every waking hour at the allotment. "
     "the pumpkins are absolutely massive this year, one of them's gotta be 20 kilos. "
     "courgettes not so much lol",
     "what's growing really well on my plot this year?", ("pumpkin",)),
]
HELDOUT6_NEVER_SAID: list[str] = [
    "what does my other half do for work?",
    "what colour is my budgie?",
    "how much did we pay for the house?",
    "which train company am I with?",
    "what brand of insulin do I use?",
    "what's my star sign?",
    "what are my kids called?",
    "which podcast do I listen to on the commute?",
    "what's my middle name?",
    "what did I have for dinner last night?",
]
# The seventh held-out set (`--set heldout7`): heldout6's misses were looked at on
# 2026-12-02 and the grounded path is to be changed for them. This set was written before
# those changes by a helper who was told not to read the grounding code, the other sets'
# results or bench/results (blind to how questions are matched to facts), and committed
# before the changes; nothing was tuned on it.
HELDOUT7_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("I'm originally from Porto but I've been in Montreal about eight years now, the "
     "winters still destroy me",
     "where am I living at the moment?", ("montreal",)),
    ("long day. I'm a court stenographer so it's 7 hours of typing every word a witness "
     "says. my wrists are dead lol",
     "remind me what my job is?", ("stenographer",)),
    ("My wife Rukmini makes the best dal in the world and I'm not even biased.",
     "what's my wife called again?", ("rukmini",)),
    ("we got a ferret!!! his name is Noodle and he's already stolen two of my socks",
     "what did we call the ferret?", ("noodle",)),
    ("just so you know, I'm lactose intolerant, so dairy is mostly off the menu for me.",
     "any foods that don't agree with me?", ("lactose",)),
    ("Big news in the family: my sister Ximena is getting married on the 8th of February "
     "in Oaxaca. I'm a bridesmaid so now I need to find a dress that isn't hideous",
     "when's my sister's wedding?", ("february",)),
    ("so I've started fencing, épée specifically, at a club downtown. I'm awful but its "
     "sooo fun",
     "what sport did I pick up recently?", ("fencing", "épée", "epee")),
    ("my pride and joy is a 1970s Pentax film camera I found at a flea market for 20 bucks",
     "what camera do I shoot with?", ("pentax",)),
    ("fav author is Ursula Le Guin, I reread the Earthsea books every winter without fail",
     "who's my favourite writer?", ("le guin",)),
    ("Random memory: in 2015 I spent six months volunteering at a sea turtle rescue in "
     "Costa Rica. Best half-year of my life honestly.",
     "where was I volunteering back in 2015?", ("costa rica",)),
]
HELDOUT7_NEVER_SAID: list[str] = [
    "what's my wife's job?",
    "where does my sister live?",
    "how old is my ferret?",
    "what's the name of my fencing club?",
    "which courthouse do I work at?",
    "what time does my flight to Oaxaca leave?",
    "what's my neighbour's name?",
    "which phone have I got?",
    "what's my go-to karaoke song?",
    "how many cousins have I got?",
]
# The eighth held-out set (`--set heldout8`): heldout7's misses were looked at on
# 2026-12-02 and the grounded path is to be changed for them. This set was written before
# those changes by a helper who was told not to read the grounding code, the other sets'
# results or bench/results (blind to how questions are matched to facts), and committed
# before the changes; nothing was tuned on it.
HELDOUT8_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("kia ora from Wellington lol, the wind here is actually unreal today",
     "what city do I live in again?", ("wellington",)),
    ("Sorry, slow week. I'm doing a PhD in volcanology, so it's mostly me staring at "
     "seismograph data until my eyes bleed. Anyway!",
     "what subject is my research in?", ("volcano",)),
    ("my flatmate Tavita cooks way better than me, I'm basically surviving on his leftovers",
     "who do I share a place with?", ("tavita",)),
    ("We got an axolotl!! His name's Gizmo and he just sort of smiles at you from the tank "
     "all day. 10/10 roommate",
     "what did I call my axolotl?", ("gizmo",)),
    ("I can't really do red wine, it gives me a migraine basically every time.",
     "is there a drink I should stay away from?", ("wine",)),
    ("Big one: my citizenship ceremony is on the 17th of January. Eleven years of "
     "paperwork and it's finally happening.",
     "when do I officially become a citizen?", ("january",)),
    ("most evenings I'm at the pottery studio down the road throwing mugs. like half of "
     "them collapse but whatever",
     "how do I spend my evenings?", ("pottery", "mug")),
    ("I ride a bright orange Brompton to campus every day.",
     "what kind of bike have I got?", ("brompton",)),
    ("Not a fan of horror films at all. I'll happily watch anything else, but those give "
     "me bad dreams for weeks.",
     "is there a kind of movie I won't watch?", ("horror",)),
    ("fun fact, I won the national spelling bee when I was 12. peaked early tbh",
     "what competition did I win as a kid?", ("spelling",)),
]
HELDOUT8_NEVER_SAID: list[str] = [
    "what does my flatmate do for a job?",
    "where did I get my axolotl from?",
    "who's supervising my PhD?",
    "where's the citizenship ceremony being held?",
    "which shop did I buy my bike from?",
    "what medication do I take for the headaches?",
    "what's my favourite board game?",
    "what was my first ever job?",
    "which streaming services am I paying for at the moment?",
    "what pizza do I always order?",
]
# The ninth held-out set (`--set heldout9`): heldout8's misses were looked at on
# 2026-12-02 and the grounded path is to be changed for them. This set was written before
# those changes by a helper who was told not to read the grounding code, the other sets'
# results or bench/results (blind to how questions are matched to facts), and committed
# before the changes; nothing was tuned on it.
HELDOUT9_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("ciao! I'm Greta btw. home is a little village up in the hills above Trieste, you can "
     "see the sea from my kitchen window",
     "where's home for me?", ("trieste",)),
    ("sorry if I'm a bit scattered today. I'm a midwife on the maternity ward and we had "
     "four deliveries back to back last night. running on pure espresso now",
     "what's my profession?", ("midwife",)),
    ("my best mate Radu has been patiently teaching me to drive in his ancient Dacia, "
     "bless him",
     "who's been giving me driving lessons?", ("radu",)),
    ("my rabbit Marzipan chewed through my phone charger AGAIN. third one this month, I "
     "swear she does it on purpose",
     "what's my bunny called?", ("marzipan",)),
    ("had to run for the tram and ended up wheezing like an old accordion. I've had asthma "
     "since I was little, so the inhaler basically lives in my coat pocket. anyway!",
     "have I got any ongoing health issues?", ("asthma",)),
    ("booked myself a pasta-making course in Bologna for the 5th of July, solo trip, "
     "treating myself",
     "when's that cooking course I signed up for?", ("july",)),
    ("Tuesday nights I go bell ringing at St Mary's. sounds very grandma I know but it's "
     "honestly a proper workout",
     "how do I usually spend my Tuesday nights?", ("bell",)),
    ("My nonna left me her old Singer sewing machine from the 1950s and it still runs "
     "perfectly.",
     "what did my grandmother leave me?", ("singer", "sewing")),
    ("mint choc chip is the only acceptable ice cream flavour and I will not be taking "
     "questions",
     "what's my favourite flavour of ice cream?", ("mint",)),
    ("random memory but at 19 I hitchhiked all the way from Warsaw to Marrakech with a "
     "friend and about 40 euros. no idea how we survived",
     "how far did I get that time I hitchhiked as a teenager?", ("marrakech",)),
]
HELDOUT9_NEVER_SAID: list[str] = [
    "what does my best mate do for work?",
    "what breed is my rabbit?",
    "which hospital do I work at?",
    "where am I staying while I'm in Bologna?",
    "what was the name of the friend I hitchhiked with?",
    "which political party do I vote for?",
    "what's my email address?",
    "what did I get for christmas last year?",
    "what's my favourite cocktail?",
    "which tv series am I bingeing right now?",
]
# The tenth held-out set (`--set heldout10`): heldout9's misses were looked at on
# 2026-12-02 and the grounded path is to be changed for them. This set was written before
# those changes by a helper who was told not to read the grounding code, the other sets'
# results or bench/results (blind to how questions are matched to facts), and committed
# before the changes; nothing was tuned on it.
HELDOUT10_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("hey, Yusuf here. I live in Tbilisi now, in a creaky old building in Sololaki with a "
     "wooden balcony that's definitely not up to code",
     "where do I live now?", ("tbilisi",)),
    ("I repair and tune pianos for a living. Spent the whole morning lying under a "
     "hundred-year-old upright in some professor's flat, my back is done",
     "what's my trade?", ("piano",)),
    ("my cousin Levan is basically my brother, we grew up in the same courtyard and he "
     "still steals food off my plate at every family dinner",
     "who's the cousin I'm really close with?", ("levan",)),
    ("my corn snake Pistachio escaped AGAIN last night. found him curled up in the sock "
     "drawer this morning like nothing happened",
     "what's my snake called?", ("pistachio",)),
    ("Quick one. After the blood clot in my leg last winter I'm on warfarin now, so the "
     "doctor says no grapefruit and go easy on the spinach. Anyway, where were we",
     "which meds am I taking these days?", ("warfarin",)),
    ("my band is playing our first proper gig on the 12th of December at a little bar in "
     "the old town!! absolutely bricking it",
     "when are we playing our first show?", ("december",)),
    ("most nights after work I sit down with a reed pen and practise Arabic calligraphy. "
     "my letters are still wobbly but getting there",
     "what's that craft I've been practising?", ("calligraphy",)),
    ("Treated myself to a telescope for my 30th. Saw Saturn's rings from the balcony last "
     "night and nearly cried, no joke",
     "what did I get myself for my 30th?", ("telescope",)),
    ("aisle seat every single time, I've got long legs and a tiny bladder lol",
     "where do I like to sit on a plane?", ("aisle",)),
    ("random flex but I summited Kazbek when I was 20, over 5000 metres. my uncle cried at "
     "the top and I pretended not to notice",
     "what's the highest mountain I've been up?", ("kazbek",)),
]
HELDOUT10_NEVER_SAID: list[str] = [
    "what's my cousin's job?",
    "what's my band called?",
    "how old is my snake?",
    "what's my uncle's name?",
    "what's the name of the bar where we're playing?",
    "what's my landlord called?",
    "what's my favourite dessert?",
    "which video games do I play?",
    "how many hours of sleep do I usually get?",
    "which mobile network am I on?",
]
# The eleventh held-out set (`--set heldout11`): written on 2026-12-02 by a helper who was
# told not to read the grounding code, the other sets' results or bench/results (blind to
# how questions are matched to facts), and committed before its first run; nothing was
# tuned on it.
HELDOUT11_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("hiya, Thandi here. I'm in Durban, tiny flat a few blocks back from the beachfront, "
     "the humidity today is honestly criminal",
     "which city am I in these days?", ("durban",)),
    ("long shift, sorry if I'm slow. I'm an air traffic controller so my brain is "
     "basically soup by 6pm",
     "what's my career?", ("air traffic", "controller")),
    ("my gogo Nomvula turns 90 on sunday and she's still sharper than the rest of us put "
     "together",
     "what's my granny's name?", ("nomvula",)),
    ("my african grey Socrates has learnt to copy the microwave beep, so now I never know "
     "if my food's actually ready lol",
     "what did I name my parrot?", ("socrates",)),
    ("ugh hay fever season is back, I've been sneezing nonstop and living on "
     "antihistamines",
     "have I got any allergies?", ("hay fever", "antihistamine")),
    ("flying out to Zanzibar for my best friend's 30th soon, the plan is to do absolutely "
     "nothing on a beach for 5 days",
     "where am I going for my friend's birthday?", ("zanzibar",)),
    ("joined the netball team at work, we play wednesday evenings and we're terrible but "
     "it's such a laugh",
     "what sport do I play midweek?", ("netball",)),
    ("still driving my dad's old Toyota Hilux, the aircon died ages ago but the thing "
     "just refuses to quit",
     "what car have I got?", ("hilux", "toyota")),
    ("I'm doing a part-time honours in statistics on top of work, exams in a few weeks "
     "and I'm not ok",
     "what am I studying?", ("statistics",)),
    ("best thing I've ever eaten was a bunny chow from a little place on Grey Street, "
     "nothing has come close since",
     "what's the best meal I've ever had?", ("bunny chow",)),
]
HELDOUT11_NEVER_SAID: list[str] = [
    "how old is my parrot?",
    "which airport do I work at?",
    "what's my best friend called?",
    "which position do I play on the team?",
    "how old is my car?",
    "what's my mum called?",
    "which church do I go to?",
    "what's my favourite song right now?",
    "how much do I earn?",
    "what's my house number?",
]
# The twelfth held-out set (`--set heldout12`): written on 2026-12-02 by a helper who was
# told not to read the grounding code, the other sets' results or bench/results (blind to
# how questions are matched to facts), and committed before its first run; nothing was
# tuned on it.
HELDOUT12_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("morning from Aarhus, been here three years now and still not used to how early it "
     "gets dark",
     "where am I based?", ("aarhus",)),
    ("finally done for the day. I'm a locksmith, spent the afternoon getting some guy back "
     "into his own flat after he locked himself out in his socks",
     "how do I earn my living?", ("locksmith",)),
    ("my daughter Sofie lost her first tooth today and was way too excited about the tooth "
     "fairy money",
     "what's my kid's name?", ("sofie",)),
    ("our two chickens Hilda and Gertrud have stopped laying since it got cold, lazy birds",
     "what animals do we keep out back?", ("chicken",)),
    ("knee's still sore from the ACL surgery in the summer, did my rehab exercises and now "
     "I'm lying on the sofa feeling sorry for myself",
     "what injury am I recovering from?", ("acl", "cruciate")),
    ("our flight to see the in-laws in Reykjavik leaves at 6:45 on Saturday morning, who "
     "books these things",
     "what time is our flight?", ("6:45", "6.45", "quarter to seven")),
    ("I've gotten really into baking sourdough, my starter is called Brian and he's "
     "thriving",
     "what have I been making in the kitchen lately?", ("sourdough", "bread")),
    ("I cycle 14 km to work every day, rain or shine, very Danish of me",
     "how do I get to my job each day?", ("cycle", "bicycle")),
    ("I could honestly eat pickled herring for every meal, my wife thinks it's disgusting",
     "what food could I eat every day?", ("herring",)),
    ("after school I spent a year teaching English in Vietnam, mostly in Hanoi. still "
     "miss the street food",
     "where did I live abroad for a year?", ("vietnam", "hanoi")),
]
HELDOUT12_NEVER_SAID: list[str] = [
    "what's my wife's name?",
    "what school does my daughter go to?",
    "what breed are the hens?",
    "who did the surgery on my knee?",
    "which airline are we flying to Iceland with?",
    "what's my favourite beer?",
    "what's my dentist called?",
    "which streaming service do I use?",
    "what's my neighbour's dog called?",
    "what was my grandad's job?",
]
# The thirteenth held-out set (`--set heldout13`): written on 2026-12-02 by a helper who
# was told not to read the grounding code, the other sets' results or bench/results (blind
# to how questions are matched to facts), and committed before its first run; nothing was
# tuned on it.
HELDOUT13_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("hola! Ignacio here. I live up in the hills of Valparaíso, in one of those painted "
     "houses that's slowly sliding down the cerro, but the view of the bay is worth it",
     "remind me, what town am I living in?", ("valparaíso", "valparaiso")),
    ("sorry for the late reply, only got back from the port around 11. I'm a crane "
     "operator at the container terminal and we're on twelve hour shifts this week, my "
     "back is destroyed",
     "what's my occupation?", ("crane",)),
    ("big news at home, my little brother Joaquín got into uni in Santiago! mum cried for "
     "an hour and I pretended I didn't",
     "what's my younger sibling called?", ("joaquín", "joaquin")),
    ("we kind of have a cat now? a scruffy tabby started sleeping on our roof and my "
     "girlfriend named her Pelusa, so I guess she lives here",
     "what's our kitty's name?", ("pelusa",)),
    ("went for a checkup and the doc says my blood pressure is way too high for someone "
     "my age, so no more salt on everything. kill me",
     "what did the doctor say was wrong with me?", ("blood pressure", "hypertension")),
    ("we're saving every peso because over the summer holidays we're going to hike Torres "
     "del Paine down in Patagonia, already bought the tent and everything",
     "where are my girlfriend and I heading on holiday?", ("torres del paine", "patagonia")),
    ("been getting up stupid early on saturdays to surf at Ritoque, the water's freezing "
     "thanks to the Humboldt current and I look like a seal in my wetsuit, but I'm hooked",
     "what sport have I taken up?", ("surf",)),
    ("my uncle sold me his old Suzuki jeep for basically nothing, no roof, one working "
     "door, perfect for these hills",
     "what am I driving these days?", ("suzuki", "jeep")),
    ("turning 29 this weekend and the guys at work have threatened a surprise asado, which "
     "is not much of a surprise if they tell me about it",
     "what age am I about to be?", ("29", "twenty-nine", "twenty nine")),
    ("nothing on earth beats my abuela's pastel de choclo, I'd cross the whole country for "
     "one plate of it",
     "what's my all-time favourite dish?", ("pastel de choclo", "choclo")),
]
HELDOUT13_NEVER_SAID: list[str] = [
    "how old is our cat?",
    "what's my girlfriend called?",
    "which company runs the terminal I work at?",
    "which blood group am I?",
    "what is my brother going to study?",
    "what was my dad's job?",
    "which football club do I follow?",
    "what colour is my car?",
    "how much did the tent cost?",
    "which band do I listen to most?",
]
# The fourteenth held-out set (`--set heldout14`): written on 2026-12-02 by a helper who
# was told not to read the grounding code, the other sets' results or bench/results (blind
# to how questions are matched to facts), and committed before its first run; nothing was
# tuned on it.
HELDOUT14_FACTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("cześć, Dorota here, writing from Gdańsk where it hasn't stopped raining in about "
     "three weeks, the sea is grey, the sky is grey and honestly so am I",
     "which place do I call home?", ("gdańsk", "gdansk")),
    ("just got in, eight patients today and every single one swore they floss daily. they "
     "do not. being a dental hygienist teaches you that everybody lies",
     "what kind of work do I do?", ("hygienist",)),
    ("my oldest friend Agnieszka is moving to Oslo for work and I'm pretending to be happy "
     "for her, we've been inseparable since we were six",
     "what's the name of the friend I've known longest?", ("agnieszka",)),
    ("our dachshund (my husband named him Kiełbasa, yes that means sausage) ate a whole "
     "sock yesterday, 200 złoty at the vet later he's completely fine and very proud",
     "what breed is our dog?", ("dachshund",)),
    ("I've got an underactive thyroid so it's levothyroxine every morning on an empty "
     "stomach and no coffee for half an hour after, which is pure torture",
     "why am I on tablets every morning?", ("thyroid", "levothyroxine")),
    ("we're taking the kids to Crete for two weeks this summer, first proper holiday since "
     "the twins were born, I've already packed in my head",
     "where's the family going on holiday this year?", ("crete",)),
    ("tuesdays are choir night, we're doing a Rachmaninoff piece for the christmas concert "
     "and us altos are really struggling with it",
     "what do I do every tuesday night?", ("choir",)),
    ("we finally got rid of the old diesel and bought an electric Hyundai, now I have range "
     "anxiety every time I drive to my mum's",
     "what's our car now?", ("hyundai",)),
    ("our flat is on the 9th floor and the lift has been broken for a week, with two "
     "toddlers and the shopping, I am going to lose my mind",
     "which storey is our apartment on?", ("9th", "ninth")),
    ("I've started Norwegian lessons online twice a week, partly so when I visit I'm not "
     "completely useless",
     "what language am I learning?", ("norwegian",)),
]
HELDOUT14_NEVER_SAID: list[str] = [
    "how old is our dog?",
    "what are the twins called?",
    "what's my husband's job?",
    "what does my friend do for a living?",
    "which hotel are we staying at on holiday?",
    "what's my favourite flower?",
    "what's my mother's name?",
    "which clinic do I work at?",
    "what did I study at university?",
    "what's my shoe size?",
]
# name -> (the user's handle, facts, never-said questions)
SETS: dict[str, tuple[str, list[tuple[str, str, tuple[str, ...]]], list[str]]] = {
    "dev": ("dana", FACTS, NEVER_SAID),
    "heldout": ("tomas", HELDOUT_FACTS, HELDOUT_NEVER_SAID),
    "heldout2": ("maren", HELDOUT2_FACTS, HELDOUT2_NEVER_SAID),
    "heldout3": ("kofi", HELDOUT3_FACTS, HELDOUT3_NEVER_SAID),
    "heldout4": ("niamh", HELDOUT4_FACTS, HELDOUT4_NEVER_SAID),
    "heldout5": ("ilse", HELDOUT5_FACTS, HELDOUT5_NEVER_SAID),
    "heldout6": ("oskar", HELDOUT6_FACTS, HELDOUT6_NEVER_SAID),
    "heldout7": ("beatriz", HELDOUT7_FACTS, HELDOUT7_NEVER_SAID),
    "heldout8": ("hamid", HELDOUT8_FACTS, HELDOUT8_NEVER_SAID),
    "heldout9": ("greta", HELDOUT9_FACTS, HELDOUT9_NEVER_SAID),
    "heldout10": ("yusuf", HELDOUT10_FACTS, HELDOUT10_NEVER_SAID),
    "heldout11": ("thandi", HELDOUT11_FACTS, HELDOUT11_NEVER_SAID),
    "heldout12": ("rasmus", HELDOUT12_FACTS, HELDOUT12_NEVER_SAID),
    "heldout13": ("ignacio", HELDOUT13_FACTS, HELDOUT13_NEVER_SAID),
    "heldout14": ("dorota", HELDOUT14_FACTS, HELDOUT14_NEVER_SAID),
}
# What a report says about the set it ran.
SET_NOTES: dict[str, str] = {
    "dev": "The grounded-reply thresholds (agent/domain/grounded.py, GroundedConfig) were "
           "chosen on this set: its facts and \"I don't know\" counts are fitted, not held "
           "out.",
    "heldout": "Written before its first run and not changed after it; but its misses were "
               "then looked at and the grounded path changed for them, so from that change "
               "on it is dev data, not held out.",
    "heldout2": "Written and committed before the grounded-path changes that followed the "
                "first held-out run, and run once after them (7/10, 2026-11-28); its misses "
                "were then looked at and the grounded path changed for them (2026-12-02), "
                "so from that change on it is dev data, not held out.",
    "heldout3": "Written by a helper who did not read the grounding code, committed before "
                "the grounded-path changes that followed heldout2's misses, and run once "
                "after them (8/10, 2026-12-02); its misses were then looked at and the "
                "grounded path changed for them (the own-words pool, word rules), so from "
                "that change on it is dev data, not held out.",
    "heldout4": "Written by a helper who did not read the grounding code, committed before "
                "the grounded-path changes that followed heldout3's misses, and run once "
                "after them (5/10, 2026-12-02, bench/results/factchat-bundled-heldout4-"
                "2026-12-02.md); its misses were then looked at and the grounded path "
                "changed for them (the whole turn said back, word rules), so from that "
                "change on it is dev data, not held out.",
    "heldout5": "Written by a helper who did not read the grounding code, committed before "
                "the grounded-path changes that followed heldout4's misses, and run once "
                "after them (7/10 facts, 6/10 never-said, 2026-12-02, bench/results/"
                "factchat-bundled-heldout5-2026-12-02.md); its misses were then looked at "
                "and the grounded path changed for them (the asked-detail heuristic, word "
                "rules), so from that change on it is dev data, not held out.",
    "heldout6": "Written by a helper who did not read the grounding code, committed before "
                "the grounded-path changes that followed heldout5's misses, and run once "
                "after them (2/10 facts, 10/10 never-said, 2026-12-02, bench/results/"
                "factchat-bundled-heldout6-2026-12-02.md); its misses were then looked at "
                "and the grounded path changed for them (word rules, the whole turn's "
                "words counted), so from that change on it is dev data, not held out. The "
                "helper's report named its never-said topics to the lead before the run.",
    "heldout7": "Written by a helper who did not read the grounding code, committed before "
                "the grounded-path changes that followed heldout6's misses, and run once "
                "after them (6/10 facts, 9/10 never-said, 2026-12-02, bench/results/"
                "factchat-bundled-heldout7-2026-12-02.md); its misses were then looked at "
                "and the grounded path changed for them (word rules, the asked-detail "
                "heuristic's noun phrase and age), so from that change on it is dev data.",
    "heldout8": "Written by a helper who did not read the grounding code, committed before "
                "the grounded-path changes that followed heldout7's misses, and run once "
                "after them (6/10 facts, 9/10 never-said, 2026-12-02, bench/results/"
                "factchat-bundled-heldout8-2026-12-02.md); its misses were then looked at "
                "and the grounded path changed for them (word rules, a place named after a "
                "preposition, full cover from cosine 0.10), so from that change on it is dev "
                "data.",
    "heldout9": "Written by a helper who did not read the grounding code, committed before "
                "the grounded-path changes that followed heldout8's misses, and run once "
                "after them (5/10 facts, 8/10 never-said, 2026-12-02, bench/results/"
                "factchat-bundled-heldout9-2026-12-02.md); its misses were then looked at "
                "and the grounded path changed for them (word rules, the job of someone "
                "named needs a job said), so from that change on it is dev data.",
    "heldout10": "Written by a helper who did not read the grounding code, committed before "
                 "the grounded-path changes that followed heldout9's misses, and run once "
                 "after them (6/10 facts, 10/10 never-said, 2026-12-02, bench/results/"
                 "factchat-bundled-heldout10-2026-12-02.md), and again on 0470215 with the "
                 "class-words heuristic (6/10, 10/10, bench/results/"
                 "factchat-bundled-heldout10-rerun-2026-12-02.md). Its replies were not "
                 "looked at and nothing was changed for it.",
    "heldout11": "Written by a helper who did not read the grounding code, committed before "
                 "its first run, and run once on 0470215 (with the class-words heuristic): "
                 "7/10 facts (4 of them hedged), 10/10 never-said, 2026-12-02, "
                 "bench/results/factchat-bundled-heldout11-2026-12-02.md. "
                 "Nothing was changed for it; its misses were looked at afterwards (the "
                 "same day, through the grounded path without the model), so it is dev "
                 "data now.",
    "heldout12": "Written by a helper who did not read the grounding code, committed before "
                 "its first run, and run once on 0470215 (with the class-words heuristic): "
                 "4/10 facts (2 hedged), 9/10 never-said, 2026-12-02, "
                 "bench/results/factchat-bundled-heldout12-2026-12-02.md. "
                 "Nothing was changed for it; its misses were looked at afterwards (the "
                 "same day, through the grounded path without the model), so it is dev "
                 "data now.",
    "heldout13": "Written by a helper who did not read the grounding code, committed before "
                 "its first run (04accc2), and run once on 04accc2: 5/10 facts (1 hedged), "
                 "9/10 never-said (2 hedged), 2026-12-02, "
                 "bench/results/factchat-bundled-heldout13-2026-12-02.md. "
                 "Its replies were not looked at and nothing was tuned on it.",
    "heldout14": "Written by a helper who did not read the grounding code, committed before "
                 "its first run (04accc2), and run once on 04accc2: 4/10 facts (3 hedged), "
                 "8/10 never-said, 2026-12-02, "
                 "bench/results/factchat-bundled-heldout14-2026-12-02.md. "
                 "Its replies were not looked at and nothing was tuned on it.",
}
