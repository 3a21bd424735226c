"""A synthetic conversational memory with known answers, for benches/retrieval.py.

Pairs of friends chat over about ten sessions each, weeks apart (English,
German, French, Spanish, Chinese, Japanese and Thai). Along the way each
speaker mentions personal facts (a new pet, a job, a trip, a favourite dish,
a hobby, a wedding in the family, ...) in exactly one turn, the evidence;
around it are the other speaker's reactions, later mentions of the same topic
that do not hold the answer, and small talk. Every fact has two or three
questions about it, phrased as a person would ask them (stop words and all,
in the conversation's language), each tagged:

- `overlap`: the question shares a topic word with its evidence besides the
  speaker's name ("Where does Maria volunteer on Saturdays?");
- `paraphrase`: it shares only the name ("How does Maria give back to the
  community?" for "On Saturday mornings I volunteer at the food bank");
- `temporal`: it asks when ("When did Maria go to Lisbon?").

Everything is drawn from a seeded random generator: the same scale gives the
same corpus, byte for byte. Written for this project (no third-party text),
so it is the project's licence. A turn's stored text is "Speaker: what they
said"; each text is unique in the corpus.
"""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass, field


@dataclass
class Turn:
    key: int
    conversation: int
    session: int
    speaker: str
    text: str
    date: str  # the session's day, YYYY-MM-DD
    language: str

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass
class Question:
    text: str
    evidence: list[int]  # Turn.key of the turns that answer it
    category: str  # overlap | paraphrase | temporal
    language: str
    kind: str  # the fact's kind (pet, job, ...)


@dataclass
class Kind:
    """A kind of personal fact: its slots (each a list of str or of dicts of
    coupled values), the evidence turn's forms, the questions about it, later
    mentions of the topic without the answer, and the other's reactions."""
    name: str
    slots: dict[str, list]
    turns: list[str]
    questions: list[tuple[str, str]]
    later: list[str]
    reactions: list[str]
    asks: list[str] = field(default_factory=list)  # the other asks about it later ({O}: the owner)


@dataclass
class Language:
    code: str
    names: list[str]
    kinds: list[Kind]
    openers: list[str]  # {O}: the other speaker
    replies: list[str]
    leads: list[str]  # the other asks for news
    interjections: list[str]
    smalltalk: list[str]
    closers: list[str]
    joiner: str = " "  # between an interjection and small talk
    reactions: list[str] = field(default_factory=list)  # generic


EN = Language(
    code="en",
    names=("Maria Tom Priya Kenji Aisha Lucas Sofia Daniel Mei Omar Hannah Carlos Grace Ravi Elena "
           "Jamal Chloe Mateo Nora Ethan Leila Samuel Yuki Fatima Liam Zoe Arjun Isabel Noah Amara "
           "Felix Rosa Victor Ines Malik Ava Diego Tara Jonah Keiko").split(),
    kinds=[
        Kind("pet",
             {"pet": [{"breed": "beagle", "animal": "dog"}, {"breed": "golden retriever", "animal": "dog"},
                      {"breed": "dachshund", "animal": "dog"}, {"breed": "border collie", "animal": "dog"},
                      {"breed": "Maine Coon", "animal": "cat"}, {"breed": "Siamese kitten", "animal": "cat"},
                      {"breed": "cockatiel", "animal": "bird"}, {"breed": "lop-eared rabbit", "animal": "rabbit"}],
              "petname": "Biscuit Pepper Mochi Luna Waffles Ziggy Noodle Pumpkin Oreo Maple Pickles Juniper".split()},
             ["Big news: we adopted a {breed} from the shelter on Saturday, and we named her {petname}!",
              "Meet {petname}, our new {breed} from the shelter! She already thinks the sofa belongs to her."],
             [("overlap", "What did {P} name the {breed} from the shelter?"),
              ("paraphrase", "Which animal joined {P}'s household recently?")],
             ["The little one woke me up at five again, I need so much coffee.",
              "I spent a fortune at the pet shop today: toys, treats, a tiny bed.",
              "Vet appointment this morning, just the usual vaccinations, all good."],
             ["Oh my goodness, you have to send me pictures!", "A new furry friend, I'm so jealous!"]),
        Kind("job",
             {"role": ["nurse", "pharmacist", "graphic designer", "data analyst", "paramedic", "architect",
                       "sous-chef", "librarian", "physiotherapist", "electrician"],
              "workplace": ["St. Mary's hospital", "the city library", "a small design studio downtown",
                            "Northwind Logistics", "Riverside High School", "the bakery on Elm Street",
                            "the county council", "Harbor View clinic"]},
             ["I got the job! Starting Monday as a {role} at {workplace}.",
              "First week as a {role} at {workplace} is done, and I think I'm going to like the job."],
             [("overlap", "Where did {P} get a job as a {role}?"),
              ("paraphrase", "What does {P} do for a living these days?")],
             ["Long shift today, my feet are killing me.",
              "My manager asked me to stay late again, I said yes, of course.",
              "Still getting used to the new commute, it's almost an hour each way."],
             ["Congratulations, that's huge!", "You totally deserve it, well done!"]),
        Kind("trip",
             {"city": ["Lisbon", "Kyoto", "Reykjavik", "Marrakesh", "Prague", "Buenos Aires", "Vancouver",
                       "Edinburgh", "Istanbul", "Cape Town", "Hanoi", "Seville"]},
             ["Just got back from {city}! The old town was gorgeous and I ate way too much.",
              "We spent five days in {city}, I'm still dreaming about the view from the hotel."],
             [("temporal", "When did {P} go to {city}?"),
              ("paraphrase", "Where did {P} travel for the last vacation?")],
             ["Still sorting through the photos from the trip, there are hundreds of them.",
              "I already miss being on holiday, honestly."],
             ["That sounds like a dream, I need a holiday too.", "Lucky you! Was the weather nice?"]),
        Kind("hobby",
             {"hobby": ["pottery", "rock climbing", "salsa dancing", "watercolour painting", "woodworking",
                        "improv theatre", "birdwatching", "beekeeping", "archery", "sourdough baking"]},
             ["I signed up for {hobby} classes at the community centre, first lesson is on Thursday.",
              "I've picked up {hobby} at the community centre, the class is my favourite way to unwind after work."],
             [("overlap", "Which classes did {P} sign up for at the community centre?"),
              ("paraphrase", "What new pastime has {P} started?")],
             ["Class ran late tonight, but it was so much fun.",
              "My instructor says I'm improving. Slowly, but still!"],
             ["That sounds like a great way to relax.", "Ooh, I'd love to try that someday."]),
        Kind("music",
             {"genre": ["jazz", "K-pop", "bluegrass", "90s hip hop", "classical piano", "reggae", "synth-pop",
                        "flamenco", "heavy metal", "bossa nova"]},
             ["Nothing beats {genre} on a lazy Sunday morning, I've been listening to it on repeat all weekend.",
              "Lazy Sunday mornings are for {genre}, I've been listening to so much of it lately."],
             [("overlap", "What does {P} listen to on lazy Sunday mornings?"),
              ("paraphrase", "What kind of music does {P} enjoy?")],
             ["I finally bought decent headphones, what a difference they make.",
              "Can't get that one song out of my head today."],
             ["Good taste, honestly.", "Ha, I never pictured you as a fan of that!"]),
        Kind("food",
             {"dish": ["ramen", "paella", "butter chicken", "pad thai", "lasagna", "pho", "shakshuka", "sushi",
                       "tacos al pastor", "mushroom risotto"]},
             ["I could eat {dish} every single day, it's hands down my favourite.",
              "Made {dish} again tonight. My favourite dish, no contest."],
             [("overlap", "What is {P}'s favourite dish?"),
              ("paraphrase", "Which meal would {P} happily have for the rest of their life?")],
             ["I tried cooking something new tonight and set off the smoke alarm, oops.",
              "Grocery prices are wild lately, I spent twice what I planned."],
             ["Now I'm hungry, thanks a lot.", "Save me a plate next time!"]),
        Kind("family",
             {"relation": ["sister", "brother", "cousin"],
              "sibling": "Anna Ben Clara David Emily Frank Gina Hugo".split(),
              "month": ["May", "June", "August", "September", "October"]},
             ["My {relation} {sibling} just got engaged! The wedding is planned for {month}.",
              "Guess what, my {relation} {sibling} got engaged last night! The wedding will be in {month}."],
             [("temporal", "When is the wedding of {P}'s {relation}?"),
              ("paraphrase", "Who in {P}'s family is getting married?")],
             ["Family dinner on Sunday was loud as always.",
              "Helping with all the planning is more work than I expected."],
             ["Oh, that's wonderful news, congratulations to them!", "A wedding! Are you giving a speech?"]),
        Kind("book",
             {"book": [{"title": "Pride and Prejudice", "author": "Jane Austen"},
                       {"title": "Moby-Dick", "author": "Herman Melville"},
                       {"title": "Frankenstein", "author": "Mary Shelley"},
                       {"title": "Jane Eyre", "author": "Charlotte Bronte"},
                       {"title": "Dracula", "author": "Bram Stoker"},
                       {"title": "Middlemarch", "author": "George Eliot"},
                       {"title": "The Count of Monte Cristo", "author": "Alexandre Dumas"},
                       {"title": "Great Expectations", "author": "Charles Dickens"}]},
             ["I'm halfway through {title} by {author} and I can't put the book down.",
              "Started reading {title} last week, {author} really knew how to write a good book."],
             [("overlap", "What book is {P} reading at the moment?"),
              ("paraphrase", "Which novel is {P} enjoying right now?")],
             ["Stayed up way too late reading again, classic me.",
              "The library finally has the next one I wanted on hold."],
             ["I read that years ago, no spoilers!", "Is it any good? I keep meaning to pick it up."]),
        Kind("car",
             {"car": ["a used Toyota Prius", "an electric Kia Niro", "a Ford Transit camper van",
                      "a red Mini Cooper", "a Volvo estate", "a Tesla Model 3", "a Vespa scooter",
                      "a Subaru Outback"]},
             ["We finally sold the old car and bought {car}.",
              "Picked up our new car from the dealer today, {car}! It still smells new."],
             [("overlap", "What car did {P} buy?"),
              ("paraphrase", "What is {P} driving around in these days?")],
             ["Traffic on the ring road was a nightmare this morning.",
              "Parking downtown is impossible on Saturdays."],
             ["Ooh, fancy! Road trip soon?", "Nice, the old one was on its last legs."]),
        Kind("race",
             {"city": ["Berlin", "Chicago", "Valencia", "Dublin", "Amsterdam", "Copenhagen", "Boston"],
              "time": ["1 hour 52 minutes", "2 hours 5 minutes", "1 hour 47 minutes", "2 hours 14 minutes",
                       "1 hour 58 minutes"]},
             ["I ran the {city} half marathon yesterday and finished in {time}!",
              "Crossed the finish line of the {city} half marathon in {time}, I could cry."],
             [("overlap", "How long did it take {P} to finish the {city} half marathon?"),
              ("paraphrase", "Which race did {P} complete recently?")],
             ["My knees are not thanking me for all this training.",
              "Did a ten kilometre training run in the rain today."],
             ["You're a machine, amazing!", "I get tired just thinking about it, well done."]),
        Kind("allergy",
             {"allergen": ["peanuts", "shellfish", "cats", "pollen", "gluten", "strawberries", "penicillin",
                           "dairy"]},
             ["The allergist confirmed it: I'm allergic to {allergen}, which explains a lot.",
              "Test results are in, I'm allergic to {allergen}. No wonder I kept getting those rashes."],
             [("overlap", "What is {P} allergic to?"),
              ("paraphrase", "What does {P} have to avoid for health reasons?")],
             ["The pharmacy queue was ridiculous today.",
              "Feeling much better this week, thanks for asking."],
             ["Oh no, at least you know now.", "That must be a relief to finally have an answer."]),
        Kind("language",
             {"tongue": ["Japanese", "Portuguese", "Italian", "Korean", "Swahili", "Greek", "Dutch", "Arabic",
                         "Polish", "Turkish"]},
             ["I've been practicing {tongue} on my commute every morning with an app.",
              "Three months of practicing {tongue} on the commute and I can finally order food without panicking."],
             [("overlap", "Which language is {P} practicing on the commute?"),
              ("paraphrase", "What language is {P} learning?")],
             ["I keep mixing up the grammar, it's very humbling.",
              "Learned twenty new words this week, small wins!"],
             ["That's so impressive, I gave up after a week.", "Say something for me next time!"]),
        Kind("move",
             {"city": ["Denver", "Rotterdam", "Melbourne", "Montreal", "Porto", "Glasgow", "Austin", "Lyon"]},
             ["We signed the lease, we're moving to {city} in the spring! The new flat even has a balcony.",
              "It's official, we're relocating to {city} this spring, boxes everywhere already."],
             [("overlap", "Where is {P} moving in the spring?"),
              ("paraphrase", "Which city will {P} be living in soon?")],
             ["Packing boxes everywhere, I can't find anything.",
              "So much paperwork for the new place, I'm drowning in forms."],
             ["Exciting! I'll miss having you around, though.", "Big change, but it sounds great."]),
        Kind("instrument",
             {"instrument": ["cello", "ukulele", "banjo", "saxophone", "drum kit", "violin", "harmonica",
                             "trumpet"]},
             ["I bought a second-hand {instrument} and I'm teaching myself to play it.",
              "Guess who found a second-hand {instrument}? Lessons start next week."],
             [("overlap", "What instrument did {P} buy second-hand?"),
              ("paraphrase", "Which musical hobby has {P} picked up?")],
             ["My neighbours must hate me, practice was loud tonight.",
              "My fingers hurt after practice, is that normal?"],
             ["You'll have to give us a concert!", "That's such a cool thing to learn."]),
        Kind("volunteer",
             {"place": ["the animal shelter", "a soup kitchen", "the food bank", "the children's hospital",
                        "the botanical garden", "the wildlife rescue centre", "the homeless shelter"]},
             ["On Saturday mornings I volunteer at {place}, it's the best part of my week.",
              "I've started to volunteer at {place} on Saturdays, it really puts things in perspective."],
             [("overlap", "Where does {P} volunteer on Saturdays?"),
              ("paraphrase", "How does {P} give back to the community?")],
             ["Saturday was busy, we had more people than ever.",
              "They asked me to coordinate the new helpers next month."],
             ["That's really lovely of you.", "I admire that so much."]),
    ],
    openers=["Hey {O}! How has your week been?", "Hi {O}, long time no talk!",
             "Morning {O}! Got a minute to catch up?", "{O}! I've been meaning to message you.",
             "Hey {O}, how are things on your end?", "Hi {O}! Sorry I went quiet for a while."],
    replies=["Hi! It's been a wild couple of weeks, honestly.", "Hey! So good to hear from you.",
             "All good here, busy as usual.", "Hey you! I was just thinking about you.",
             "Not bad at all, a bit tired but fine."],
    leads=["So, any news on your side?", "What else is new with you?", "How's everything else going?",
           "Tell me something good that happened lately."],
    interjections=["Haha,", "Honestly,", "Oh wow,", "Ugh,", "Well,", "You know what,", "Ha, true,", "Hmm,",
                   "Oh nice,", "Same here,", "No way,", "Right?", "Totally,", "Lol,", "Aw,"],
    smalltalk=["the weather has been so grey all week, I miss the sun.",
               "I slept in until ten this morning, best feeling ever.",
               "work has been a lot lately but I'm hanging in there.",
               "I finally cleaned out the garage and found so much old stuff.",
               "we watched a documentary about octopuses last night, they're so clever.",
               "my phone screen cracked again, third time this year.",
               "I've been trying to drink more water, it's harder than it sounds.",
               "the new cafe near my place makes amazing cinnamon rolls.",
               "I need a new name for my plant, any ideas?",
               "my favourite mug broke this morning, RIP.",
               "the neighbours are renovating and the drilling starts at eight.",
               "I started a puzzle with a thousand pieces, big mistake.",
               "is it just me or is everyone sick this month?",
               "I finally learned how to fold a fitted sheet.",
               "my family group chat is pure chaos today.",
               "I've been going to bed earlier and it actually helps.",
               "we had a power cut last night, candles and board games.",
               "someone at work brought homemade brownies, dangerous.",
               "I'm trying to spend less time on my phone, not going well.",
               "the train was cancelled again, so I walked.",
               "I can't believe it's almost the end of the month already.",
               "I reorganised my bookshelf by colour, it looks great.",
               "my sister sent me the funniest video of her kids.",
               "I've been meaning to call you for ages.",
               "the park was full of people enjoying the sun today.",
               "I'm thinking of repainting the kitchen, maybe green?",
               "my laptop decided to update right before a meeting.",
               "I found a great new podcast about history.",
               "I burned the toast twice this morning, not my day.",
               "there's a new bakery opening down the street.",
               "I finally replied to all my emails, victory.",
               "I forgot my umbrella and of course it poured.",
               "we tried a new board game and I lost every round.",
               "the cat next door keeps visiting our garden.",
               "my plants are finally growing again.",
               "I did absolutely nothing this weekend and loved it.",
               "there's a movie night at the cinema this Friday.",
               "I need to book a dentist appointment, I keep forgetting.",
               "my coffee machine broke, which is a true emergency.",
               "we had friends over for dinner and stayed up far too late.",
               "I learned something new about the moon today.",
               "my running shoes finally fell apart.",
               "the days are getting longer, I love it.",
               "I'm so behind on my favourite series.",
               "the supermarket rearranged everything again.",
               "I'm trying out a new recipe book this month.",
               "my car needs a wash, it's embarrassing.",
               "a bird built a nest right outside my window.",
               "I got a parking ticket, five minutes late.",
               "we're planning a picnic if the weather holds."],
    closers=["Anyway, I should get going. Talk soon!", "Gotta run, let's catch up again next week!",
             "Okay, dinner's ready, bye for now!", "Speak soon, {O}!", "Take care, {O}, chat later!"],
    reactions=["Ha, I know the feeling.", "That's so you.", "Oh no, hope it gets better!", "Love that.",
               "Same thing happened to me last week.", "Ha, classic!", "Honestly, relatable.",
               "That made me laugh.", "Fair enough!", "Sounds lovely."],
)

DE = Language(
    code="de",
    names="Jana Moritz Ulrike Henrik".split(),
    kinds=[
        Kind("pet",
             {"breed": ["Beagle", "Dackel", "Labrador", "Kater", "Wellensittich", "Golden Retriever"],
              "petname": "Keks Bello Krümel Flocke Lotte Pünktchen".split()},
             ["Wir haben am Wochenende einen {breed} aus dem Tierheim geholt, er heißt {petname}!",
              "Darf ich vorstellen: {petname}, unser neuer {breed} aus dem Tierheim. Er schläft schon auf dem Sofa."],
             [("overlap", "Wie heißt der {breed}, den {P} aus dem Tierheim geholt hat?"),
              ("paraphrase", "Was für ein Haustier hat {P} jetzt?")],
             ["Der Kleine hat uns heute Nacht wieder alle geweckt.", "Ich war heute beim Tierarzt, nur zur Impfung."],
             ["Wie süß! Schick mir unbedingt Fotos!", "Ein neues Familienmitglied, wie schön!"]),
        Kind("job",
             {"role": ["Bibliothekar", "Apotheker", "Grafikdesigner", "Elektriker", "Architekt", "Koch"],
              "workplace": ["bei Siemens", "in der Stadtbibliothek", "im Klinikum Nord",
                            "bei einer kleinen Agentur in Köln", "in einer Bäckerei am Markt", "beim Landratsamt"]},
             ["Ich habe den Job! Ab Montag arbeite ich als {role} {workplace}.",
              "Die erste Woche als {role} {workplace} ist geschafft, es gefällt mir richtig gut."],
             [("overlap", "Wo arbeitet {P} als {role}?"), ("paraphrase", "Was macht {P} jetzt beruflich?")],
             ["Heute war ein langer Tag, ich bin total erschöpft.",
              "Mein Chef will, dass ich am Wochenende einspringe."],
             ["Herzlichen Glückwunsch, das ist ja toll!", "Das hast du dir verdient!"]),
        Kind("trip",
             {"city": ["Lissabon", "Wien", "Kopenhagen", "Rom", "Krakau", "Edinburgh"]},
             ["Ich bin gerade aus {city} zurück! Die Altstadt war wunderschön.",
              "Wir waren fünf Tage in {city}, ich träume immer noch vom Essen dort."],
             [("temporal", "Wann war {P} in {city}?"), ("paraphrase", "Wohin ist {P} in den Urlaub gefahren?")],
             ["Ich sortiere immer noch die Fotos von der Reise.", "Ich vermisse den Urlaub jetzt schon."],
             ["Das klingt traumhaft!", "Du Glückliche! War das Wetter gut?"]),
        Kind("food",
             {"dish": ["Käsespätzle", "Sauerbraten", "Flammkuchen", "Rouladen", "Kartoffelsuppe", "Schnitzel"]},
             ["Ich könnte jeden Tag {dish} essen, das ist mein absolutes Lieblingsessen.",
              "Heute gab es wieder {dish}, mein Lieblingsessen, davon bekomme ich nie genug."],
             [("overlap", "Was ist das Lieblingsessen von {P}?"),
              ("paraphrase", "Welches Gericht mag {P} am liebsten?")],
             ["Ich habe heute etwas Neues gekocht und fast die Küche abgefackelt.",
              "Der Einkauf war heute wieder so teuer."],
             ["Jetzt habe ich Hunger, danke auch!", "Heb mir nächstes Mal was auf!"]),
        Kind("hobby",
             {"course": ["Töpferkurs", "Kletterkurs", "Salsakurs", "Aquarellkurs", "Bogenschießkurs", "Imkerkurs"]},
             ["Ich habe mich für einen {course} im Gemeindezentrum angemeldet, die erste Stunde ist am Donnerstag.",
              "Seit zwei Wochen gehe ich im Gemeindezentrum zum {course}, das ist jetzt mein Ausgleich nach der Arbeit."],
             [("overlap", "Für welchen Kurs hat sich {P} im Gemeindezentrum angemeldet?"),
              ("paraphrase", "Welches neue Hobby hat {P}?")],
             ["Der Kurs ging heute länger, aber es hat Spaß gemacht.", "Meine Lehrerin sagt, ich werde besser."],
             ["Das klingt entspannend.", "Das würde ich auch gern mal ausprobieren."]),
        Kind("family",
             {"relation": [{"rel": "Meine Schwester", "relq": "der Schwester"},
                           {"rel": "Mein Bruder", "relq": "des Bruders"},
                           {"rel": "Meine Cousine", "relq": "der Cousine"}],
              "sibling": "Anna Jonas Lena Felix".split(), "month": ["Mai", "Juni", "September", "Oktober"]},
             ["{rel} {sibling} hat sich verlobt! Die Hochzeit ist im {month}.",
              "{rel} {sibling} hat gestern einen Antrag bekommen! Die Hochzeit ist im {month}."],
             [("temporal", "Wann ist die Hochzeit {relq} von {P}?"),
              ("paraphrase", "Wer aus der Familie von {P} heiratet bald?")],
             ["Das Familienessen am Sonntag war laut wie immer.", "Die ganze Planung ist mehr Arbeit als gedacht."],
             ["Wie schön, herzlichen Glückwunsch an die beiden!", "Eine Hochzeit! Hältst du eine Rede?"]),
    ],
    openers=["Hallo {O}! Wie war deine Woche?", "Hi {O}, lange nichts gehört!", "Guten Morgen {O}! Hast du kurz Zeit?",
             "{O}! Ich wollte dir schon ewig schreiben."],
    replies=["Hallo! Die letzten Wochen waren ziemlich verrückt.", "Hey! Schön, von dir zu hören.",
             "Alles gut hier, viel zu tun wie immer.", "Nicht schlecht, ein bisschen müde, aber gut."],
    leads=["Und, gibt es bei dir was Neues?", "Was gibt es sonst Neues bei dir?", "Wie läuft es sonst so?"],
    interjections=["Haha,", "Ehrlich gesagt,", "Oh wow,", "Na ja,", "Weißt du was,", "Hmm,", "Stimmt,", "Echt jetzt,"],
    smalltalk=["das Wetter war die ganze Woche so grau.", "ich habe heute bis zehn geschlafen, herrlich.",
               "auf der Arbeit ist gerade viel los.", "ich habe endlich den Keller aufgeräumt.",
               "wir haben gestern eine Doku über Kraken gesehen.", "mein Handy ist schon wieder kaputt.",
               "das neue Café bei mir um die Ecke hat tolle Zimtschnecken.", "die Nachbarn bohren schon seit acht Uhr.",
               "ich habe ein Puzzle mit tausend Teilen angefangen, großer Fehler.", "der Zug ist wieder ausgefallen.",
               "ich gehe jetzt früher ins Bett und es hilft wirklich.", "wir hatten gestern Abend einen Stromausfall.",
               "ich versuche, weniger am Handy zu sein.", "ich habe mein Bücherregal nach Farben sortiert.",
               "im Park waren heute so viele Leute.", "ich will die Küche neu streichen, vielleicht grün?",
               "mein Laptop hat sich mitten im Meeting aktualisiert.", "ich habe einen tollen Podcast entdeckt.",
               "ich habe meinen Regenschirm vergessen und natürlich hat es geschüttet.",
               "wir haben ein neues Brettspiel ausprobiert.", "die Tage werden endlich länger.",
               "ich muss dringend einen Zahnarzttermin machen.", "meine Kaffeemaschine ist kaputt, ein Notfall.",
               "wir hatten Freunde zum Essen da und sind viel zu lange aufgeblieben."],
    closers=["Ich muss los, bis bald!", "Lass uns nächste Woche wieder quatschen!", "Mach's gut, {O}!"],
    reactions=["Kenne ich.", "Das ist so typisch du.", "Oh nein, gute Besserung!", "Herrlich.", "Ha, klassisch!"],
)

FR = Language(
    code="fr",
    names="Margaux Julien Élodie Bastien".split(),
    kinds=[
        Kind("pet",
             {"breed": ["un beagle", "un labrador", "un teckel", "un chaton", "un lapin nain", "un perroquet"],
              "petname": "Biscuit Caramel Praline Filou Pistache Moka".split()},
             ["Ça y est, on a adopté {breed} au refuge ce week-end, il s'appelle {petname} !",
              "Je te présente {petname}, adopté au refuge : {breed} qui dort déjà sur le canapé."],
             [("overlap", "Comment s'appelle l'animal que {P} a adopté au refuge ?"),
              ("paraphrase", "Quel nouvel animal vit maintenant chez {P} ?")],
             ["Le petit nous a encore réveillés à cinq heures.", "Rendez-vous chez le vétérinaire ce matin, juste les vaccins."],
             ["Trop mignon ! Envoie-moi des photos !", "Un nouveau membre de la famille, génial !"]),
        Kind("job",
             {"role": ["architecte", "bibliothécaire", "photographe", "journaliste", "comptable", "graphiste"],
              "workplace": ["à la mairie de Lyon", "dans une petite agence à Nantes", "à l'hôpital Saint-Louis",
                            "chez Renault", "à la médiathèque du quartier", "dans une librairie du centre"]},
             ["J'ai décroché le poste ! Je commence lundi comme {role} {workplace}.",
              "Première semaine comme {role} {workplace} terminée, je crois que je vais m'y plaire."],
             [("overlap", "Où est-ce que {P} travaille comme {role} ?"),
              ("paraphrase", "Quel est le nouveau métier de {P} ?")],
             ["Longue journée aujourd'hui, je suis épuisée.", "Mon chef veut encore que je reste tard."],
             ["Félicitations, c'est énorme !", "Tu le mérites vraiment, bravo !"]),
        Kind("trip",
             {"city": ["Lisbonne", "Vienne", "Copenhague", "Rome", "Cracovie", "Édimbourg"]},
             ["Je rentre tout juste de {city} ! La vieille ville était magnifique.",
              "On est restés cinq jours à {city}, je rêve encore de la vue depuis l'hôtel."],
             [("temporal", "Quand est-ce que {P} a visité {city} ?"),
              ("paraphrase", "Où est-ce que {P} a passé ses vacances ?")],
             ["Je trie encore les photos du voyage, il y en a des centaines.", "Les vacances me manquent déjà."],
             ["Ça a l'air génial !", "Quelle chance ! Il faisait beau ?"]),
        Kind("food",
             {"dish": ["la raclette", "le bœuf bourguignon", "la ratatouille", "la quiche lorraine", "le cassoulet",
                       "la tartiflette"]},
             ["Je pourrais manger {dish} tous les jours, c'est mon plat préféré.",
              "Encore {dish} ce soir, mon plat préféré, je ne m'en lasse pas."],
             [("overlap", "Quel est le plat préféré de {P} ?"),
              ("paraphrase", "Qu'est-ce que {P} adore le plus dans son assiette ?")],
             ["J'ai essayé une nouvelle recette et déclenché l'alarme incendie.", "Les courses coûtent une fortune en ce moment."],
             ["J'ai faim maintenant, merci bien.", "Garde-m'en une part la prochaine fois !"]),
        Kind("hobby",
             {"course": ["un cours de poterie", "un cours d'escalade", "un cours de salsa", "un cours d'aquarelle",
                         "un cours de tir à l'arc", "un atelier d'apiculture"]},
             ["Je viens de m'inscrire à {course} au centre culturel, la première séance est jeudi.",
              "Depuis deux semaines je suis {course} au centre culturel, c'est devenu ma façon de décompresser."],
             [("overlap", "À quel cours est-ce que {P} s'est inscrit au centre culturel ?"),
              ("paraphrase", "Quel est le nouveau passe-temps de {P} ?")],
             ["Le cours a fini tard ce soir, mais c'était super.", "Ma prof dit que je progresse, doucement."],
             ["Ça a l'air relaxant.", "J'aimerais bien essayer un jour."]),
        Kind("family",
             {"relation": [{"rel": "Ma sœur", "relq": "de la sœur"}, {"rel": "Mon frère", "relq": "du frère"},
                           {"rel": "Ma cousine", "relq": "de la cousine"}],
              "sibling": "Claire Hugo Camille Léo".split(), "month": ["mai", "juin", "septembre", "octobre"]},
             ["{rel} {sibling} vient de se fiancer ! Le mariage est prévu en {month}.",
              "Devine quoi, {rel} {sibling} prépare son mariage pour {month} !"],
             [("temporal", "Quand a lieu le mariage {relq} de {P} ?"),
              ("paraphrase", "Qui va se marier dans la famille de {P} ?")],
             ["Le repas de famille dimanche était bruyant comme toujours.",
              "Aider à tout organiser, c'est plus de travail que prévu."],
             ["Quelle belle nouvelle, félicitations à eux !", "Un mariage ! Tu vas faire un discours ?"]),
    ],
    openers=["Salut {O} ! Ta semaine s'est bien passée ?", "Coucou {O}, ça fait longtemps !",
             "Bonjour {O} ! Tu as une minute ?", "{O} ! Je voulais t'écrire depuis des jours."],
    replies=["Salut ! Les dernières semaines ont été folles.", "Coucou ! Ça fait plaisir d'avoir de tes nouvelles.",
             "Tout va bien ici, beaucoup de travail comme d'habitude.", "Pas mal, un peu fatiguée mais ça va."],
    leads=["Et toi, quoi de neuf ?", "Quoi d'autre de nouveau chez toi ?", "Et à part ça, comment ça va ?"],
    interjections=["Haha,", "Franchement,", "Oh là là,", "Bon,", "Tu sais quoi,", "Hmm,", "C'est vrai,", "Sérieux,"],
    smalltalk=["il a fait gris toute la semaine.", "j'ai dormi jusqu'à dix heures ce matin, le bonheur.",
               "il y a beaucoup de travail en ce moment.", "j'ai enfin rangé la cave.",
               "on a regardé un documentaire sur les pieuvres hier soir.", "l'écran de mon téléphone est encore cassé.",
               "le nouveau café près de chez moi fait des brioches incroyables.", "les voisins font des travaux depuis huit heures.",
               "j'ai commencé un puzzle de mille pièces, grosse erreur.", "le train a encore été annulé.",
               "je me couche plus tôt et ça aide vraiment.", "on a eu une coupure de courant hier soir.",
               "j'essaie de passer moins de temps sur mon téléphone.", "j'ai rangé ma bibliothèque par couleur.",
               "il y avait tellement de monde au parc aujourd'hui.", "je pense repeindre la cuisine, en vert peut-être ?",
               "mon ordinateur a fait une mise à jour en pleine réunion.", "j'ai découvert un super podcast d'histoire.",
               "j'ai oublié mon parapluie et bien sûr il a plu.", "on a essayé un nouveau jeu de société.",
               "les jours rallongent enfin.", "il faut vraiment que je prenne rendez-vous chez le dentiste.",
               "ma machine à café est en panne, c'est la crise.", "on a eu des amis à dîner et on s'est couchés trop tard."],
    closers=["Je dois filer, à bientôt !", "On se reparle la semaine prochaine !", "Bonne soirée, {O} !"],
    reactions=["Je connais ça.", "C'est tellement toi.", "Oh non, courage !", "J'adore.", "Ha, classique !"],
)

ES = Language(
    code="es",
    names="Lucía Álvaro Carmen Iker".split(),
    kinds=[
        Kind("pet",
             {"breed": ["un beagle", "un labrador", "un gatito", "un perro salchicha", "un periquito", "un conejo"],
              "petname": "Canela Churro Lola Toby Nube Chispa".split()},
             ["¡Por fin adoptamos {breed} en el refugio este fin de semana y se llama {petname}!",
              "Te presento a {petname}, del refugio: {breed} que ya duerme en el sofá."],
             [("overlap", "¿Cómo se llama la mascota que {P} adoptó en el refugio?"),
              ("paraphrase", "¿Qué animal tiene ahora {P} en casa?")],
             ["El pequeño nos despertó otra vez a las cinco.", "Hoy fuimos al veterinario, solo las vacunas."],
             ["¡Qué monada! ¡Mándame fotos!", "¡Un nuevo miembro de la familia, qué bien!"]),
        Kind("job",
             {"role": ["periodista", "dentista", "recepcionista", "electricista", "economista", "analista de datos"],
              "workplace": ["en el hospital de La Paz", "en una agencia pequeña de Valencia", "en la biblioteca municipal",
                            "en el ayuntamiento", "en una panadería del barrio", "en Telefónica"]},
             ["¡Me dieron el trabajo! Empiezo el lunes como {role} {workplace}.",
              "Terminé mi primera semana como {role} {workplace} y creo que me va a encantar."],
             [("overlap", "¿Dónde trabaja {P} como {role}?"), ("paraphrase", "¿A qué se dedica {P} ahora?")],
             ["Hoy fue un día larguísimo, estoy agotada.", "Mi jefe quiere que me quede tarde otra vez."],
             ["¡Enhorabuena, qué notición!", "¡Te lo mereces, bravo!"]),
        Kind("trip",
             {"city": ["Lisboa", "Viena", "Copenhague", "Roma", "Cracovia", "Edimburgo"]},
             ["¡Acabo de volver de {city}! El casco antiguo era precioso.",
              "Pasamos cinco días en {city} y todavía sueño con la comida de allí."],
             [("temporal", "¿Cuándo visitó {P} {city}?"), ("paraphrase", "¿Adónde se fue {P} de vacaciones?")],
             ["Todavía estoy ordenando las fotos del viaje.", "Ya echo de menos las vacaciones."],
             ["¡Suena de maravilla!", "¡Qué suerte! ¿Hizo buen tiempo?"]),
        Kind("food",
             {"dish": ["la paella", "el gazpacho", "la tortilla de patatas", "el pulpo a la gallega", "las croquetas",
                       "el cocido madrileño"]},
             ["Podría comer {dish} todos los días, es mi plato favorito.",
              "Otra vez {dish} para cenar, mi plato favorito de siempre."],
             [("overlap", "¿Cuál es el plato favorito de {P}?"), ("paraphrase", "¿Qué comida le gusta más a {P}?")],
             ["Probé una receta nueva y salté la alarma de incendios.", "La compra está carísima últimamente."],
             ["Ahora tengo hambre, gracias.", "¡Guárdame un plato la próxima vez!"]),
        Kind("hobby",
             {"course": ["un curso de cerámica", "clases de escalada", "clases de salsa", "un taller de acuarela",
                         "clases de tiro con arco", "un curso de apicultura"]},
             ["Me apunté a {course} en el centro cultural, la primera clase es el jueves.",
              "Llevo dos semanas con {course} en el centro cultural y se ha convertido en mi forma de desconectar."],
             [("overlap", "¿A qué curso se apuntó {P} en el centro cultural?"),
              ("paraphrase", "¿Qué nuevo pasatiempo tiene {P}?")],
             ["La clase terminó tarde hoy, pero fue genial.", "Mi profesora dice que voy mejorando."],
             ["Suena muy relajante.", "Me encantaría probarlo algún día."]),
        Kind("family",
             {"relation": [{"rel": "Mi hermana", "relq": "de la hermana"}, {"rel": "Mi hermano", "relq": "del hermano"},
                           {"rel": "Mi prima", "relq": "de la prima"}],
              "sibling": "Marta Pablo Sara Diego".split(), "month": ["mayo", "junio", "septiembre", "octubre"]},
             ["¡{rel} {sibling} se acaba de comprometer! La boda será en {month}.",
              "¿Sabes qué? ¡{rel} {sibling} ya tiene fecha de boda: {month}!"],
             [("temporal", "¿Cuándo es la boda {relq} de {P}?"),
              ("paraphrase", "¿Quién se va a casar en la familia de {P}?")],
             ["La comida familiar del domingo fue ruidosa como siempre.",
              "Ayudar con la organización es más trabajo de lo que pensaba."],
             ["¡Qué buena noticia, felicidades a los dos!", "¡Una boda! ¿Vas a dar un discurso?"]),
    ],
    openers=["¡Hola {O}! ¿Qué tal tu semana?", "Hola {O}, ¡cuánto tiempo!", "¡Buenos días {O}! ¿Tienes un momento?",
             "¡{O}! Llevo días queriendo escribirte."],
    replies=["¡Hola! Las últimas semanas han sido una locura.", "¡Hola! Qué alegría saber de ti.",
             "Todo bien por aquí, mucho trabajo como siempre.", "No me quejo, un poco cansada pero bien."],
    leads=["¿Y tú, qué hay de nuevo?", "¿Qué más me cuentas?", "¿Y aparte de eso, cómo va todo?"],
    interjections=["Jaja,", "La verdad,", "¡Madre mía!", "Bueno,", "¿Sabes qué?", "Mmm,", "Es verdad,", "En serio,"],
    smalltalk=["ha estado nublado toda la semana.", "hoy dormí hasta las diez, qué gusto.",
               "hay muchísimo trabajo estos días.", "por fin ordené el trastero.",
               "anoche vimos un documental sobre pulpos.", "se me rompió la pantalla del móvil otra vez.",
               "la cafetería nueva de mi calle tiene unos bollos increíbles.", "los vecinos están de obras desde las ocho.",
               "empecé un puzle de mil piezas, gran error.", "cancelaron el tren otra vez.",
               "me acuesto más temprano y de verdad ayuda.", "anoche se fue la luz en todo el barrio.",
               "intento pasar menos tiempo con el móvil.", "ordené mi estantería por colores.",
               "el parque estaba lleno de gente hoy.", "quiero pintar la cocina, ¿quizás de verde?",
               "el portátil se actualizó en plena reunión.", "descubrí un pódcast de historia buenísimo.",
               "olvidé el paraguas y claro, diluvió.", "probamos un juego de mesa nuevo.",
               "por fin los días son más largos.", "tengo que pedir cita con el dentista.",
               "se rompió la cafetera, es una emergencia.", "vinieron amigos a cenar y nos acostamos tardísimo."],
    closers=["Me tengo que ir, ¡hablamos pronto!", "¡Hablamos la semana que viene!", "¡Cuídate, {O}!"],
    reactions=["Te entiendo.", "Eso es muy tuyo.", "¡Ay, ánimo!", "Me encanta.", "¡Ja, clásico!"],
)

ZH = Language(
    code="zh",
    names=["王芳", "李伟", "张静", "刘洋"],
    kinds=[
        Kind("pet",
             {"breed": ["柯基", "金毛", "布偶猫", "橘猫", "鹦鹉", "垂耳兔"],
              "petname": ["豆豆", "团子", "可乐", "年糕", "布丁", "馒头"]},
             ["周末我们从救助站领养了一只{breed}，给它取名叫{petname}！", "介绍一下，这是{petname}，从救助站领养的{breed}，已经霸占沙发了。"],
             [("overlap", "{P}从救助站领养的{breed}叫什么名字？"), ("paraphrase", "{P}最近养了什么宠物？")],
             ["小家伙今天早上五点又把我们吵醒了。", "今天带去打疫苗了，一切正常。"],
             ["太可爱了！快发照片给我！", "家里添了新成员，真好！"]),
        Kind("job",
             {"role": ["护士", "建筑师", "图书管理员", "数据分析师", "平面设计师", "药剂师"],
              "workplace": ["市第一医院", "一家小设计公司", "市图书馆", "华为", "一家面包店", "区政府"]},
             ["我拿到工作了！下周一开始在{workplace}当{role}。", "在{workplace}当{role}的第一周结束了，我挺喜欢的。"],
             [("overlap", "{P}在哪里当{role}？"), ("paraphrase", "{P}现在做什么工作？")],
             ["今天加班到很晚，累死了。", "老板又让我周末去帮忙。"],
             ["恭喜恭喜，太棒了！", "这是你应得的！"]),
        Kind("trip",
             {"city": ["里斯本", "京都", "维也纳", "罗马", "清迈", "伊斯坦布尔"]},
             ["我刚从{city}回来！老城区太美了。", "我们在{city}待了五天，到现在还在想那里的美食。"],
             [("temporal", "{P}什么时候去了{city}？"), ("paraphrase", "{P}去哪里度假了？")],
             ["旅行的照片还在整理，有好几百张。", "已经开始怀念假期了。"],
             ["听起来太棒了！", "真羡慕！天气好吗？"]),
        Kind("food",
             {"dish": ["麻婆豆腐", "小笼包", "火锅", "牛肉面", "煎饼果子", "北京烤鸭"]},
             ["我每天都可以吃{dish}，这是我最喜欢的菜。", "今晚又吃了{dish}，这是我最喜欢的菜，一辈子都吃不腻。"],
             [("overlap", "{P}最喜欢的菜是什么？"), ("paraphrase", "{P}最爱吃什么？")],
             ["今天试了个新菜谱，差点把厨房烧了。", "最近买菜好贵啊。"],
             ["说得我都饿了。", "下次给我留一份！"]),
        Kind("hobby",
             {"hobby": ["陶艺", "攀岩", "萨尔萨舞", "水彩画", "射箭", "养蜂"]},
             ["我报名了社区中心的{hobby}课，周四第一节课。", "我在社区中心报了{hobby}课，下班后上课特别放松。"],
             [("overlap", "{P}在社区中心报名了什么课？"), ("paraphrase", "{P}最近有什么新爱好？")],
             ["今天的课上到很晚，但是很好玩。", "老师说我进步了。"],
             ["听起来很解压。", "我也想试试。"]),
        Kind("family",
             {"relation": [{"rel": "我姐姐", "relq": "姐姐"}, {"rel": "我弟弟", "relq": "弟弟"},
                           {"rel": "我表妹", "relq": "表妹"}],
              "sibling": ["小雨", "小明", "小丽", "阿杰"], "month": ["五月", "六月", "九月", "十月"]},
             ["{rel}{sibling}订婚了！婚礼定在{month}。", "告诉你个好消息，{rel}{sibling}昨晚被求婚了，婚礼在{month}！"],
             [("temporal", "{P}的{relq}什么时候举行婚礼？"), ("paraphrase", "{P}家里谁要结婚了？")],
             ["周日的家庭聚餐还是那么热闹。", "帮忙筹备比想象中累多了。"],
             ["太好了，替他们高兴！", "婚礼！你要上台致辞吗？"]),
    ],
    openers=["{O}，这周过得怎么样？", "嗨{O}，好久不见！", "早上好{O}！有空聊聊吗？"],
    replies=["最近几周忙疯了。", "好久没聊了，真高兴！", "挺好的，就是有点累。"],
    leads=["你那边有什么新鲜事吗？", "最近还有什么新消息？", "其他的都还好吗？"],
    interjections=["哈哈，", "说实话，", "哇，", "唉，", "对了，", "嗯，"],
    smalltalk=["这周天气一直阴沉沉的。", "今天睡到十点，太舒服了。", "最近工作特别多。", "终于把储藏室收拾好了。",
               "昨晚看了一部关于章鱼的纪录片。", "手机屏幕又摔碎了。", "楼下新开的咖啡店肉桂卷很好吃。",
               "邻居从早上八点就开始装修。", "地铁又停运了。", "最近早睡确实有用。", "昨晚整个小区停电了。",
               "我在努力少看手机。", "公园里今天人好多。", "电脑在开会的时候自动更新了。", "发现了一个很好听的历史播客。",
               "忘带伞了，结果下了大雨。", "白天终于变长了。", "咖啡机坏了，简直是紧急情况。"],
    closers=["我得走了，回头聊！", "下周再聊！", "保重，{O}！"],
    joiner="",
    reactions=["我懂。", "太像你了。", "哎呀，加油！", "真好。", "哈哈，经典！"],
)

JA = Language(
    code="ja",
    names=["さくら", "健太", "美咲", "大輔"],
    kinds=[
        Kind("pet",
             {"breed": ["柴犬", "トイプードル", "三毛猫", "ハムスター", "インコ", "ウサギ"],
              "petname": ["ポチ", "モモ", "ココ", "きなこ", "マロン", "ソラ"]},
             ["週末に保護施設から{breed}を迎えました。名前は{petname}です！", "紹介します、保護施設から来た{breed}の{petname}です。もうソファを占領しています。"],
             [("overlap", "{P}が保護施設から迎えた{breed}の名前は何ですか？"), ("paraphrase", "{P}は最近どんなペットを飼い始めましたか？")],
             ["今朝も五時に起こされました。", "今日は動物病院で予防接種でした。"],
             ["かわいい！写真送って！", "新しい家族、いいですね！"]),
        Kind("job",
             {"role": ["看護師", "建築士", "司書", "データアナリスト", "デザイナー", "薬剤師"],
              "workplace": ["市民病院", "小さなデザイン事務所", "市立図書館", "トヨタ", "駅前のパン屋", "区役所"]},
             ["内定をもらいました！月曜日から{workplace}で{role}として働きます。", "{workplace}で{role}として働き始めて一週間、楽しくやっています。"],
             [("overlap", "{P}はどこで{role}として働いていますか？"), ("paraphrase", "{P}の今の仕事は何ですか？")],
             ["今日は残業でくたくたです。", "上司にまた週末出勤を頼まれました。"],
             ["おめでとう！すごいね！", "よかったね、当然だよ！"]),
        Kind("trip",
             {"city": ["リスボン", "ウィーン", "ローマ", "台北", "ソウル", "バルセロナ"]},
             ["{city}から帰ってきたところです！旧市街がとてもきれいでした。", "{city}に五日間いました。まだあそこの料理が忘れられません。"],
             [("temporal", "{P}はいつ{city}に行きましたか？"), ("paraphrase", "{P}は休暇にどこへ行きましたか？")],
             ["旅行の写真をまだ整理しています。", "もう休みが恋しいです。"],
             ["最高ですね！", "いいなあ！天気はよかった？"]),
        Kind("food",
             {"dish": ["ラーメン", "お好み焼き", "カレーライス", "寿司", "天ぷら", "たこ焼き"]},
             ["{dish}なら毎日でも食べられます。一番好きな料理です。", "今夜もまた{dish}でした。やっぱり一番好きな料理です。"],
             [("overlap", "{P}の一番好きな料理は何ですか？"), ("paraphrase", "{P}の大好物は何ですか？")],
             ["新しいレシピに挑戦して火災報知器を鳴らしてしまいました。", "最近スーパーが高すぎます。"],
             ["お腹すいてきた。", "今度少し残しておいて！"]),
        Kind("hobby",
             {"hobby": ["陶芸", "ボルダリング", "サルサ", "水彩画", "弓道", "養蜂"]},
             ["公民館の{hobby}教室に申し込みました。初回は木曜日です。", "最近公民館の{hobby}教室に通っています。仕事の後のいい息抜きです。"],
             [("overlap", "{P}は公民館で何の教室に申し込みましたか？"), ("paraphrase", "{P}の新しい趣味は何ですか？")],
             ["今日の教室は長引いたけど楽しかったです。", "先生に上達したと言われました。"],
             ["リラックスできそうですね。", "私もいつかやってみたい。"]),
        Kind("family",
             {"relation": [{"rel": "姉の", "relq": "お姉さん"}, {"rel": "兄の", "relq": "お兄さん"},
                           {"rel": "いとこの", "relq": "いとこ"}],
              "sibling": ["由美", "拓也", "香織", "悠斗"], "month": ["五月", "六月", "九月", "十月"]},
             ["{rel}{sibling}が婚約しました！結婚式は{month}の予定です。", "聞いて、{rel}{sibling}が昨日プロポーズされたの！結婚式は{month}です。"],
             [("temporal", "{P}の{relq}の結婚式はいつですか？"), ("paraphrase", "{P}の家族で誰が結婚しますか？")],
             ["日曜日の家族の食事会はいつも通りにぎやかでした。", "準備の手伝いは思ったより大変です。"],
             ["おめでとうございます！", "結婚式！スピーチするの？"]),
    ],
    openers=["{O}さん、今週はどうでしたか？", "{O}さん、お久しぶりです！", "おはようございます、{O}さん！少し話せますか？"],
    replies=["ここ数週間、本当に忙しかったです。", "連絡ありがとう、うれしいです！", "元気です、ちょっと疲れていますけど。"],
    leads=["そちらは何か新しいことありましたか？", "ほかに何かニュースはありますか？", "ほかは順調ですか？"],
    interjections=["はは、", "正直、", "わあ、", "うーん、", "そういえば、", "たしかに、"],
    smalltalk=["今週はずっと曇りでした。", "今日は十時まで寝ました、最高です。", "最近仕事がとても忙しいです。", "やっと物置を片付けました。",
               "昨日の夜タコのドキュメンタリーを見ました。", "スマホの画面がまた割れました。", "近所の新しいカフェのシナモンロールがおいしいです。",
               "隣の家が朝八時から工事しています。", "電車がまた運休しました。", "早く寝るようにしたら調子がいいです。",
               "昨夜は停電でした。", "スマホを見る時間を減らそうとしています。", "公園は今日人がいっぱいでした。",
               "会議中にパソコンが勝手に更新されました。", "面白い歴史のポッドキャストを見つけました。",
               "傘を忘れたら大雨でした。", "日が長くなってきましたね。", "コーヒーメーカーが壊れて大変です。"],
    closers=["そろそろ行かなきゃ、またね！", "また来週話しましょう！", "{O}さん、お元気で！"],
    joiner="",
    reactions=["わかります。", "らしいですね。", "大変でしたね。", "いいですね。", "ははは、あるある！"],
)

TH = Language(
    code="th",
    names=["มาลี", "สมชาย", "ปิยะ", "อนันต์"],
    kinds=[
        Kind("pet",
             {"breed": ["สุนัขพันธุ์บีเกิ้ล", "แมวเปอร์เซีย", "กระต่าย", "นกแก้ว", "สุนัขพันธุ์ชิวาวา", "แมวส้ม"],
              "petname": ["ถั่วแดง", "ขนมปัง", "มะลิ", "โกโก้", "ส้มโอ", "ข้าวปั้น"]},
             ["สุดสัปดาห์นี้เรารับ{breed}มาจากศูนย์พักพิงสัตว์ ตั้งชื่อว่า{petname}!", "ขอแนะนำ{petname} {breed}จากศูนย์พักพิงสัตว์ ยึดโซฟาไปแล้ว"],
             [("overlap", "{breed}ที่{P}รับมาจากศูนย์พักพิงสัตว์ชื่ออะไร"), ("paraphrase", "ช่วงนี้{P}เลี้ยงสัตว์อะไร")],
             ["เจ้าตัวเล็กปลุกเราตอนตีห้าอีกแล้ว", "วันนี้พาไปฉีดวัคซีนมา ทุกอย่างปกติดี"],
             ["น่ารักมาก! ส่งรูปมาให้ดูหน่อย", "มีสมาชิกใหม่ในบ้านแล้ว ดีใจด้วย!"]),
        Kind("job",
             {"role": ["พยาบาล", "สถาปนิก", "บรรณารักษ์", "นักวิเคราะห์ข้อมูล", "นักออกแบบกราฟิก", "เภสัชกร"],
              "workplace": ["โรงพยาบาลศิริราช", "บริษัทออกแบบเล็กๆ", "ห้องสมุดประชาชน", "ธนาคารกสิกรไทย",
                            "ร้านเบเกอรี่ใกล้บ้าน", "ที่ว่าการอำเภอ"]},
             ["ได้งานแล้ว! เริ่มวันจันทร์นี้เป็น{role}ที่{workplace}", "ทำงานเป็น{role}ที่{workplace}ครบสัปดาห์แรกแล้ว ชอบมาก"],
             [("overlap", "{P}ทำงานเป็น{role}ที่ไหน"), ("paraphrase", "ตอนนี้{P}ทำอาชีพอะไร")],
             ["วันนี้ทำงานดึกมาก เหนื่อยสุดๆ", "หัวหน้าขอให้มาช่วยวันเสาร์อีกแล้ว"],
             ["ยินดีด้วย เก่งมาก!", "สมควรได้แล้วล่ะ!"]),
        Kind("trip",
             {"city": ["เชียงใหม่", "โตเกียว", "ลิสบอน", "โซล", "ปารีส", "ฮานอย"]},
             ["เพิ่งกลับมาจาก{city}! เมืองเก่าสวยมาก", "ไปอยู่{city}มาห้าวัน ยังคิดถึงอาหารที่นั่นอยู่เลย"],
             [("temporal", "{P}ไป{city}เมื่อไหร่"), ("paraphrase", "{P}ไปเที่ยวพักร้อนที่ไหน")],
             ["ยังจัดรูปจากทริปไม่เสร็จเลย มีเป็นร้อยรูป", "คิดถึงวันหยุดแล้ว"],
             ["ฟังดูดีมาก!", "อิจฉาจัง! อากาศดีไหม"]),
        Kind("food",
             {"dish": ["ต้มยำกุ้ง", "ผัดไทย", "ส้มตำ", "ข้าวซอย", "แกงเขียวหวาน", "ข้าวมันไก่"]},
             ["กิน{dish}ได้ทุกวันเลย เป็นอาหารที่ชอบที่สุด", "เย็นนี้กิน{dish}อีกแล้ว เป็นอาหารที่ชอบที่สุดจริงๆ"],
             [("overlap", "อาหารที่{P}ชอบที่สุดคืออะไร"), ("paraphrase", "{P}ชอบกินอะไรมากที่สุด")],
             ["ลองทำเมนูใหม่แล้วสัญญาณเตือนไฟไหม้ดัง", "ช่วงนี้ของที่ตลาดแพงมาก"],
             ["หิวเลยเนี่ย", "คราวหน้าเก็บไว้ให้บ้างนะ!"]),
        Kind("hobby",
             {"hobby": ["ปั้นเซรามิก", "ปีนผา", "เต้นซัลซ่า", "วาดสีน้ำ", "ยิงธนู", "เลี้ยงผึ้ง"]},
             ["สมัครเรียน{hobby}ที่ศูนย์ชุมชนแล้ว เริ่มเรียนวันพฤหัส", "ช่วงนี้ไปเรียน{hobby}ที่ศูนย์ชุมชน ทำหลังเลิกงานแล้วผ่อนคลายสุดๆ"],
             [("overlap", "{P}สมัครเรียนอะไรที่ศูนย์ชุมชน"), ("paraphrase", "งานอดิเรกใหม่ของ{P}คืออะไร")],
             ["วันนี้เรียนเลิกดึก แต่สนุกมาก", "ครูบอกว่าเก่งขึ้นแล้ว"],
             ["ฟังดูผ่อนคลายดี", "อยากลองบ้างจัง"]),
        Kind("family",
             {"relation": [{"rel": "พี่สาวของฉัน", "relq": "พี่สาว"}, {"rel": "น้องชายของฉัน", "relq": "น้องชาย"},
                           {"rel": "ลูกพี่ลูกน้องของฉัน", "relq": "ลูกพี่ลูกน้อง"}],
              "sibling": ["แนน", "บอย", "ฝน", "ต้น"], "month": ["พฤษภาคม", "มิถุนายน", "กันยายน", "ตุลาคม"]},
             ["{rel} {sibling} หมั้นแล้ว! งานแต่งจะจัดเดือน{month}", "รู้ไหม {rel} {sibling} โดนขอแต่งงานเมื่อคืน งานแต่งจัดเดือน{month}"],
             [("temporal", "งานแต่งงานของ{relq}ของ{P}จัดเมื่อไหร่"), ("paraphrase", "ใครในครอบครัวของ{P}กำลังจะแต่งงาน")],
             ["กินข้าวกับครอบครัววันอาทิตย์ยังวุ่นวายเหมือนเดิม", "ช่วยเตรียมงานเหนื่อยกว่าที่คิด"],
             ["ยินดีด้วยนะ!", "งานแต่ง! จะขึ้นพูดไหม"]),
    ],
    openers=["{O} สัปดาห์นี้เป็นไงบ้าง", "หวัดดี {O} ไม่ได้คุยกันนานเลย!", "อรุณสวัสดิ์ {O}! ว่างคุยไหม"],
    replies=["ช่วงนี้ยุ่งมากเลย", "ดีใจที่ได้คุยกันนะ!", "สบายดี แค่เหนื่อยนิดหน่อย"],
    leads=["มีอะไรใหม่ๆ บ้างไหม", "ช่วงนี้มีข่าวอะไรบ้าง", "เรื่องอื่นเป็นไงบ้าง"],
    interjections=["ฮ่าๆ ", "จริงๆ นะ ", "ว้าว ", "เฮ้อ ", "อ้อ ", "อืม "],
    smalltalk=["สัปดาห์นี้ฟ้าครึ้มทั้งสัปดาห์", "วันนี้นอนถึงสิบโมง ฟินมาก", "ช่วงนี้งานเยอะมาก", "ในที่สุดก็เก็บห้องเก็บของเสร็จ",
               "เมื่อคืนดูสารคดีเรื่องปลาหมึก", "จอมือถือแตกอีกแล้ว", "ร้านกาแฟใหม่ใกล้บ้านขนมอร่อยมาก",
               "ข้างบ้านรีโนเวทตั้งแต่แปดโมง", "รถไฟฟ้าเสียอีกแล้ว", "ช่วงนี้นอนเร็วขึ้นแล้วรู้สึกดี", "เมื่อคืนไฟดับทั้งซอย",
               "พยายามเล่นมือถือให้น้อยลง", "วันนี้คนไปสวนสาธารณะเยอะมาก", "คอมอัปเดตเองตอนประชุม",
               "เจอพอดแคสต์ประวัติศาสตร์ดีมาก", "ลืมร่มแล้วฝนก็ตกหนัก", "กลางวันยาวขึ้นแล้ว", "เครื่องชงกาแฟเสีย วิกฤตมาก"],
    closers=["ต้องไปแล้ว ไว้คุยกันนะ!", "สัปดาห์หน้าคุยกันใหม่!", "ดูแลตัวเองนะ {O}!"],
    joiner="",
    reactions=["เข้าใจเลย", "เหมือนเธอมาก", "โถ สู้ๆ นะ", "ดีจัง", "ฮ่าๆ คลาสสิก!"],
)

# A third question about each English fact.
for _kind, _question in zip(EN.kinds, [
        ("temporal", "When did {P} adopt the {breed}?"),
        ("temporal", "When did {P} start working as a {role}?"),
        ("overlap", "What did {P} think of {city}?"),
        ("overlap", "What is {P} doing at the community centre?"),
        ("overlap", "Which music is {P} listening to on repeat?"),
        ("overlap", "Which dish does {P} call a favourite?"),
        ("overlap", "Which relative of {P} got engaged?"),
        ("overlap", "Who wrote the book {P} is halfway through?"),
        ("temporal", "When did {P} buy the new car?"),
        ("temporal", "When did {P} run the {city} half marathon?"),
        ("temporal", "When did {P} find out about being allergic to {allergen}?"),
        ("overlap", "What does {P} practice every morning?"),
        ("temporal", "When is {P} moving to {city}?"),
        ("temporal", "When did {P} get the {instrument}?"),
        ("overlap", "What does {P} do on Saturday mornings?")]):
    _kind.questions.append(_question)

# What the other asks about a fact told before, naming its owner: turns that
# share the questions' words and meaning but do not hold the answer.
ASKS = {
    "en": {"pet": ["How is the new pet settling in, {O}?", "{O}, is your little furball house-trained yet?"],
           "job": ["How's the new job treating you, {O}?", "{O}, do you still like working there?"],
           "trip": ["{O}, how was the trip? I want to hear everything.", "Did you take lots of photos on vacation, {O}?"],
           "hobby": ["{O}, how are the classes going?", "Still enjoying your new pastime, {O}?"],
           "music": ["{O}, what are you listening to these days?", "Any new music recommendations, {O}?"],
           "food": ["{O}, cooked anything good lately?", "What's for dinner tonight, {O}?"],
           "family": ["{O}, how are the wedding plans going?", "Is your family excited about the wedding, {O}?"],
           "book": ["{O}, did you finish that book yet?", "Any good novels you'd recommend, {O}?"],
           "car": ["{O}, how's the new car?", "Have you taken your new ride on a road trip yet, {O}?"],
           "race": ["{O}, have you recovered from the race?", "Signed up for another race yet, {O}?"],
           "allergy": ["{O}, how are you feeling these days?", "Did the doctor give you anything for it, {O}?"],
           "language": ["{O}, how is the language learning going?", "Can you hold a conversation in it yet, {O}?"],
           "move": ["{O}, when is the big move?", "Have you found movers for the new city yet, {O}?"],
           "instrument": ["{O}, how's the music practice going?", "Can you play a full song yet, {O}?"],
           "volunteer": ["{O}, still volunteering on weekends?", "How was the volunteering this week, {O}?"]},
    "de": {"pet": ["Wie gewöhnt sich das neue Haustier ein, {O}?"], "job": ["Wie läuft der neue Job, {O}?"],
           "trip": ["{O}, wie war der Urlaub? Erzähl alles!"], "food": ["{O}, hast du in letzter Zeit was Leckeres gekocht?"],
           "hobby": ["{O}, wie läuft dein neues Hobby?"], "family": ["{O}, wie laufen die Vorbereitungen für die Hochzeit?"]},
    "fr": {"pet": ["Comment s'habitue le nouvel animal, {O} ?"], "job": ["Alors {O}, ce nouveau métier, ça se passe bien ?"],
           "trip": ["{O}, c'était comment les vacances ? Raconte !"], "food": ["{O}, tu as cuisiné quelque chose de bon récemment ?"],
           "hobby": ["{O}, ça avance ton nouveau passe-temps ?"], "family": ["{O}, les préparatifs du mariage avancent ?"]},
    "es": {"pet": ["¿Qué tal se adapta la nueva mascota, {O}?"], "job": ["{O}, ¿qué tal el trabajo nuevo?"],
           "trip": ["{O}, ¿qué tal las vacaciones? ¡Cuéntamelo todo!"], "food": ["{O}, ¿has cocinado algo rico últimamente?"],
           "hobby": ["{O}, ¿qué tal va tu nuevo pasatiempo?"], "family": ["{O}, ¿cómo van los preparativos de la boda?"]},
    "zh": {"pet": ["{O}，新宠物适应得怎么样？"], "job": ["{O}，新工作怎么样？"], "trip": ["{O}，度假怎么样？快讲讲！"],
           "food": ["{O}，最近做了什么好吃的？"], "hobby": ["{O}，新爱好学得怎么样了？"], "family": ["{O}，婚礼准备得怎么样了？"]},
    "ja": {"pet": ["{O}さん、新しいペットは慣れましたか？"], "job": ["{O}さん、新しい仕事はどうですか？"],
           "trip": ["{O}さん、休暇はどうでしたか？"], "food": ["{O}さん、最近何かおいしいもの作りましたか？"],
           "hobby": ["{O}さん、新しい趣味は順調ですか？"], "family": ["{O}さん、結婚式の準備はどうですか？"]},
    "th": {"pet": ["{O} สัตว์เลี้ยงตัวใหม่เป็นไงบ้าง"], "job": ["{O} งานใหม่เป็นไงบ้าง"],
           "trip": ["{O} ไปเที่ยวพักร้อนเป็นไงบ้าง เล่าให้ฟังหน่อย"], "food": ["{O} ช่วงนี้ทำอะไรอร่อยๆ กินบ้าง"],
           "hobby": ["{O} งานอดิเรกใหม่เป็นไงบ้าง"], "family": ["{O} เตรียมงานแต่งไปถึงไหนแล้ว"]},
}

LANGUAGES = {lang.code: lang for lang in (EN, DE, FR, ES, ZH, JA, TH)}
for _lang in LANGUAGES.values():
    for _kind in _lang.kinds:
        _kind.asks = ASKS[_lang.code][_kind.name]
# Conversations per language at scale 1 (two speakers each).
CONVERSATIONS = {"en": 20, "de": 2, "fr": 2, "es": 2, "zh": 1, "ja": 1, "th": 1}
SESSIONS = 10


def _fill(template: str, values: dict[str, str]) -> str:
    return template.format(**values)


def _profile(rng: random.Random, kind: Kind) -> dict[str, str]:
    values: dict[str, str] = {}
    for slot, pool in kind.slots.items():
        pick = rng.choice(pool)
        if isinstance(pick, dict):
            values.update(pick)
        else:
            values[slot] = pick
    return values


def build(scale: float = 1.0, seed: int = 7) -> tuple[list[Turn], list[Question]]:
    """The corpus (turns in order) and the questions, at `scale`."""
    rng = random.Random(seed)
    turns: list[Turn] = []
    questions: list[Question] = []
    seen: set[str] = set()
    conversation = 0
    for code, count in CONVERSATIONS.items():
        lang = LANGUAGES[code]
        n = max(1, round(count * scale)) if code != "en" else max(2, round(count * scale))
        n = min(n, len(lang.names) // 2)
        for c in range(n):
            conversation += 1
            pair = lang.names[2 * c], lang.names[2 * c + 1]
            _conversation(rng, lang, conversation, pair, turns, questions, seen)
    return turns, questions


def _conversation(rng: random.Random, lang: Language, number: int, pair: tuple[str, str],
                  turns: list[Turn], questions: list[Question], seen: set[str]) -> None:
    day = datetime.date(2023, 1, 1) + datetime.timedelta(days=rng.randrange(0, 120))
    sessions = SESSIONS
    # Each speaker's facts, spread over the sessions in a random order.
    facts = [(speaker, kind, _profile(rng, kind)) for speaker in pair for kind in lang.kinds]
    rng.shuffle(facts)
    per_session = [facts[i::sessions] for i in range(sessions)]
    told: list[tuple[str, Kind]] = []

    for s in range(sessions):
        day += datetime.timedelta(days=rng.randrange(4, 21))
        date = day.isoformat()
        a, b = pair if rng.random() < 0.5 else pair[::-1]

        def other(sp: str) -> str:
            return pair[1] if sp == pair[0] else pair[0]

        def say(speaker: str, options: list[str], values: dict[str, str] | None = None) -> int | None:
            """Adds a turn (the first option not yet said by this speaker)."""
            opts = options[:]
            rng.shuffle(opts)
            for t in opts:
                text = _fill(t, {"O": other(speaker), **(values or {})})
                content = f"{speaker}: {text}"
                if content not in seen:
                    seen.add(content)
                    turns.append(Turn(len(turns), number, s + 1, speaker, text, date, lang.code))
                    return len(turns) - 1
            return None

        def chat(speaker: str) -> None:
            for _ in range(30):
                first, body = rng.choice(lang.interjections), rng.choice(lang.smalltalk)
                if first.endswith(("?", "!")):
                    body = body[0].upper() + body[1:]
                text = first + lang.joiner + body
                if say(speaker, [text]) is not None:
                    return

        say(a, lang.openers)
        say(b, lang.replies)
        speaker = a
        for owner, kind, values in per_session[s]:
            if rng.random() < 0.5:
                say(other(owner), lang.leads)
            evidence = say(owner, kind.turns, values)
            assert evidence is not None, (owner, kind.name)
            say(other(owner), kind.reactions)
            if rng.random() < 0.4:
                say(owner, kind.later)
            for category, template in kind.questions:
                questions.append(Question(_fill(template, {"P": owner, **values}), [evidence], category,
                                          lang.code, kind.name))
            told.append((owner, kind))
            for _ in range(rng.randrange(1, 4)):
                chat(speaker)
                say(other(speaker), lang.reactions) if rng.random() < 0.5 else chat(other(speaker))
                speaker = other(speaker)
        # Later mentions of topics told before (without the answer).
        for owner, kind in rng.sample(told, min(len(told), rng.randrange(1, 4))):
            if rng.random() < 0.6:
                say(other(owner), kind.asks)
            say(owner, kind.later)
            if rng.random() < 0.5:
                say(other(owner), lang.reactions)
        target = rng.randrange(16, 22)
        count = sum(1 for t in turns if t.conversation == number and t.session == s + 1)
        while count < target - 1:
            chat(speaker)
            speaker = other(speaker)
            count += 1
        say(speaker, lang.closers)


if __name__ == "__main__":
    # A look at the corpus: sizes, and for English the words each category of
    # question shares with its evidence besides the name (crudely stemmed).
    import collections
    import re
    import sys
    ts, qs = build(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
    print(len(ts), "turns,", len(qs), "questions")
    print(sorted(collections.Counter((q.language, q.category) for q in qs).items()))
    stop = set(("a an the of to in on at for and or is are was be been do does did what which who where when how "
                "i i'm i've it it's my me we our this that with from by as has have had there these days now "
                "s her she he his they their new into out up").split())

    def words(text: str) -> set[str]:
        return {w[:5] for w in re.findall(r"[a-z']+", text.lower()) if w not in stop}

    shared: dict[str, list[int]] = collections.defaultdict(list)
    for q in qs:
        if q.language == "en":
            e = ts[q.evidence[0]]
            shared[q.category].append(len(words(q.text) & words(e.text) - words(e.speaker)))
    for category, counts in shared.items():
        print(f"en {category}: questions sharing no word with their evidence: "
              f"{sum(1 for c in counts if c == 0)}/{len(counts)}")
    for t in ts[:25]:
        print(t.date, t.content)
    for q in qs[:6]:
        print(q.category, q.text, "->", ts[q.evidence[0]].content)
