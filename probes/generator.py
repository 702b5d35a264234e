"""Seeded synthetic trajectories whose facts change, with probes of every kind.

A persona talks to an assistant over dated sessions. Storylines plant facts in
user turns, in order, across sessions:

- ``city``: lives in A; announces a move to B "next month" (not yet true);
  later says the move is done (B becomes true there); where sessions allow,
  moves back to A (a reversal). Probes: ``current``, ``historical`` (the city
  before B), ``evolution`` (the cities in order).
- ``job``: works at X, later starts at Y. Probes: ``current``, ``historical``.
- ``wedding``: a sibling's wedding date, later corrected. Probe: ``current``.
- ``pet``: adopts a pet part-way through. Probe: ``current``, ``before_first: abstain``.
- ``class``: announces an evening class, later starts it. Probe: ``current``,
  ``before_first: abstain``, true from the start, not from the announcement.
- ``hobby``: one stable fact. Probe: ``current``.
- Facts never mentioned (a brother, a car, ...): ``abstention`` probes.

Other user turns are filler (everyday talk from a small grammar, so turns
vary) or, at ``distractor_rate``, distractors that reuse the answers' words
about someone or something else. ``turn_tokens`` is the density knob: filler
is added until a turn reaches that many estimated tokens. A storyline that
cannot fit the sessions given is left out with its probes and named in
``GeneratedTrajectory.omitted``. Everything is drawn from one
``random.Random(seed)``, so a spec always gives the same bytes.

:func:`generate_longmemeval_file` writes a LongMemEval-schema file (S scale by
default) for loader tests and benchmarks, one record at a time.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lsrep.probes.native import session_turn_times, write_probes, write_trajectory
from pydantic import BaseModel, ConfigDict, Field

from lsrep.protocol.models import Probe, ReferenceVersion, Trajectory, Turn
from lsrep.text import estimate_tokens

# --- vocabulary -------------------------------------------------------------
# Answer pools are proper nouns the filler never uses, so a filler turn cannot
# state or contradict a fact by accident.

NAMES = ["Ana", "Tomasz", "Ingrid", "Kwame", "Lucia", "Rahul", "Mei", "Oskar", "Farah", "Declan"]
SISTERS = ["Clara", "Ines", "Maja", "Leila", "Rosa", "Yuki", "Greta", "Noor"]
FRIENDS = ["Jonas", "Priya", "Elena", "Marcus", "Sofia", "Hugo", "Amara", "Felix", "Nadia", "Theo"]
CITIES = ["Lisbon", "Porto", "Valencia", "Leeds", "Graz", "Tampere", "Utrecht", "Ghent", "Bergen",
          "Krakow", "Bologna", "Aarhus", "Cork", "Nantes"]
EMPLOYERS = ["Halvorsen Logistics", "Brightwater Labs", "Northwind Bakery", "Copperleaf Studio",
             "Meridian Health", "Bluefin Analytics", "Alder & Rowe", "Kestrel Robotics",
             "Lumen Print Works", "Orchard Lane Foods"]
JOB_ROLES = ["data analyst", "pastry chef", "project manager", "graphic designer", "nurse",
             "quality engineer", "copywriter", "warehouse supervisor"]
PETS = [("dog", ["Biscuit", "Pepper", "Juniper", "Waffles", "Nova"]),
        ("cat", ["Mochi", "Clementine", "Pixel", "Saffron", "Tofu"]),
        ("rabbit", ["Hazel", "Thistle", "Bramble", "Dot", "Pip"])]
CLASSES = ["pottery", "salsa", "Italian", "watercolour", "woodworking", "improv"]
INSTRUMENTS = ["cello", "banjo", "trumpet", "ukulele", "clarinet", "harp"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]

NEVER_MENTIONED: list[tuple[str, str]] = [
    ("brother", "What is my brother's name?"),
    ("car", "What car do I drive?"),
    ("blood type", "What is my blood type?"),
    ("university", "Which university did I study at?"),
    ("allergy", "What am I allergic to?"),
    ("birthday", "When is my birthday?"),
]
"""Subjects no turn ever states about the persona, with their abstention questions."""

_OPENERS = ["This morning I", "Yesterday I", "Over the weekend I", "After work I", "On Sunday I",
            "Last night I", "Earlier today I", "Before breakfast I"]
_ACTIVITIES = ["reorganised the kitchen cupboards", "tried a new lentil soup recipe",
               "walked along the canal for an hour", "fixed the wobbly shelf in the hallway",
               "finished a mystery novel", "listened to a podcast about volcanoes",
               "repotted the basil on the windowsill", "cleaned out the freezer",
               "went for a long run in the rain", "sorted through a box of old photos",
               "baked banana bread", "watched a documentary about octopuses",
               "helped a neighbour carry her groceries", "washed all the windows",
               "tried a new stretching routine", "planned meals for the whole week",
               "caught up on laundry", "rearranged the bookshelf by colour",
               "made a big pot of vegetable curry", "went to the farmers market"]
_REACTIONS = ["It was more relaxing than I expected.", "Honestly, it took way longer than it should have.",
              "I felt pretty good afterwards.", "Not the most exciting thing, but it had to be done.",
              "I might make it a weekly habit.", "The weather made it harder than usual.",
              "I was surprised how quickly the time went.", "It left me tired but in a good way."]
_THOUGHTS = ["I keep meaning to get to bed earlier.", "My to-do list never seems to get shorter.",
             "I should drink more water during the day.", "The evenings are getting lighter again.",
             "I'm trying to spend less time scrolling on my phone.", "I need to remember to call the plumber.",
             "The supermarket had run out of oat milk again.", "The bus was late twice this week.",
             "I've been sleeping better since I stopped drinking coffee after lunch.",
             "The neighbours are renovating and the drilling starts at eight."]
_QUESTIONS = ["Any tips for keeping houseplants alive?", "What's a good way to wind down before sleep?",
              "How do you stay motivated to exercise when it's cold?", "Is a slow cooker worth buying?",
              "What's an easy dinner for a busy weeknight?", "How do people keep a tidy desk?"]
_REPLY_OPENERS = ["That sounds like a full day.", "Thanks for telling me about that.", "I'm glad to hear it.",
                  "That makes a lot of sense.", "Good question.", "That sounds really worthwhile.",
                  "Oh, that's a nice change."]
_ADVICE = ["A small routine usually helps more than a perfect plan.",
           "Try breaking it into short steps and see what sticks.",
           "Writing things down can take a surprising load off your mind.",
           "Consistency tends to matter more than intensity.",
           "A short walk often helps reset the day.",
           "It can help to prepare the night before so the morning feels calmer.",
           "Keeping a glass of water nearby is an easy reminder.",
           "Asking a friend to join can make it easier to keep going."]
_FOLLOW_UPS = ["How did it go in the end?", "What would you like to try next?",
               "Do you want a few ideas for that?", "How are you feeling about it?",
               "Is there anything you'd change next time?"]


def filler_sentence(rng: random.Random) -> str:
    """One sentence of everyday user talk."""
    pick = rng.random()
    if pick < 0.45:
        return f"{rng.choice(_OPENERS)} {rng.choice(_ACTIVITIES)}."
    if pick < 0.7:
        return rng.choice(_REACTIONS)
    if pick < 0.92:
        return rng.choice(_THOUGHTS)
    return rng.choice(_QUESTIONS)


def reply_sentence(rng: random.Random) -> str:
    """One sentence of assistant talk."""
    pick = rng.random()
    if pick < 0.3:
        return rng.choice(_REPLY_OPENERS)
    if pick < 0.8:
        return rng.choice(_ADVICE)
    return rng.choice(_FOLLOW_UPS)


def pad_to_tokens(core: list[str], target: int, rng: random.Random, make: Callable[[random.Random], str]) -> str:
    """Insert ``core`` sentences among generated ones until the text reaches ``target`` tokens."""
    sentences = list(core)
    while estimate_tokens(" ".join(sentences)) < target or not sentences:
        sentence = make(rng)
        for _ in range(3):  # avoid saying the same thing twice in one turn, within reason
            if sentence not in sentences:
                break
            sentence = make(rng)
        sentences.insert(rng.randint(0, len(sentences)), sentence)
    return " ".join(sentences)


# --- specification and result ------------------------------------------------


class GeneratorSpec(BaseModel):
    """Everything that determines a generated trajectory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    """Seed of the one random stream."""
    trajectory_id: str = "synthetic"
    """Trajectory id (and probe-id prefix)."""
    sessions: int = Field(12, ge=1)
    """Number of sessions."""
    turns_per_session: int = Field(10, ge=1)
    """Turns per session, alternating user then assistant."""
    turn_tokens: int = Field(40, ge=1)
    """Density: each turn is filled to at least this many estimated tokens."""
    distractor_rate: float = Field(0.3, ge=0.0, le=1.0)
    """Chance that a user turn without a fact carries a distractor."""
    never_mentioned: int = Field(3, ge=0, le=len(NEVER_MENTIONED))
    """Abstention probes about facts never mentioned."""
    start: datetime = datetime(2024, 1, 8, 9, 0, tzinfo=UTC)
    """Date of the first session."""
    max_gap_days: int = Field(7, ge=1)
    """Sessions are 1 to this many days apart."""


@dataclass(frozen=True)
class GeneratedTrajectory:
    """A generated trajectory with its probes."""

    trajectory_id: str
    """Trajectory id."""
    persona: dict[str, str]
    """The persona's drawn values (name and every answer)."""
    turns: tuple[Turn, ...]
    """Turns in replay order."""
    probes: tuple[Probe, ...]
    """Probes over those turns."""
    omitted: tuple[str, ...] = ()
    """Storylines (or their optional beats) that did not fit the sessions."""

    def trajectory(self) -> Trajectory:
        """The turns as a validated :class:`Trajectory`."""
        return Trajectory(trajectory_id=self.trajectory_id, turns=self.turns)


# --- storylines -------------------------------------------------------------


@dataclass
class _Beat:
    key: str
    sentence: str
    min_gap: int = 0
    """Sessions after the storyline's previous beat (0: same session, a later turn)."""
    earliest: float = 0.0
    """Earliest session as a fraction of the trajectory (first beat only)."""


@dataclass
class _Story:
    name: str
    beats: list[_Beat]
    probes: Callable[[dict[str, str]], list[Probe]]
    distractors: list[str]
    optional_tail: int = 0


def _persona(rng: random.Random) -> dict[str, str]:
    city_a, city_b = rng.sample(CITIES, 2)
    job_x, job_y = rng.sample(EMPLOYERS, 2)
    species, pet_names = rng.choice(PETS)
    month = rng.randrange(12)
    day = rng.randint(3, 20)
    corrected = day + rng.choice([1, 2, 7, 8])
    return {
        "name": rng.choice(NAMES),
        "city_a": city_a, "city_b": city_b,
        "job_x": job_x, "job_y": job_y, "role": rng.choice(JOB_ROLES),
        "sibling": rng.choice(SISTERS),
        "date_1": f"{day} {MONTHS[month]}", "date_2": f"{corrected} {MONTHS[month]}",
        "date_2_alias": f"{MONTHS[month]} {corrected}",
        "species": species, "pet": rng.choice(pet_names),
        "class": rng.choice(CLASSES), "instrument": rng.choice(INSTRUMENTS),
    }


def _stories(tid: str, p: dict[str, str], rng: random.Random) -> list[_Story]:
    def pid(name: str) -> str:
        return f"{tid}:{name}"

    def one(answer: str, start: str, *evidence: str, until: str | None = None,
            aliases: tuple[str, ...] = ()) -> ReferenceVersion:
        return ReferenceVersion(answer=answer, aliases=aliases, valid_from=start,
                                valid_until=until, evidence=tuple(evidence))

    def city_probes(at: dict[str, str]) -> list[Probe]:
        versions = [one(p["city_a"], at["live"], at["live"], until=at["moved"]),
                    one(p["city_b"], at["moved"], at["announce"], at["moved"], until=at.get("back"))]
        if "back" in at:
            versions.append(one(p["city_a"], at["back"], at["back"]))
        return [
            Probe(probe_id=pid("city-current"), question="Which city do I live in now?",
                  kind="current", category="relocation", references=tuple(versions)),
            Probe(probe_id=pid("city-before-move"),
                  question=f"Which city did I live in before I moved to {p['city_b']}?",
                  kind="historical", category="relocation",
                  references=(one(p["city_a"], at["moved"], at["live"], at["moved"]),)),
            Probe(probe_id=pid("city-history"),
                  question="Which cities have I lived in since we started talking, in order?",
                  kind="evolution", category="relocation", references=tuple(versions)),
        ]

    def job_probes(at: dict[str, str]) -> list[Probe]:
        return [
            Probe(probe_id=pid("job-current"), question="Which company do I work for?",
                  kind="current", category="job-change",
                  references=(one(p["job_x"], at["work"], at["work"], until=at["switch"]),
                              one(p["job_y"], at["switch"], at["switch"]))),
            Probe(probe_id=pid("job-before"),
                  question=f"Which company did I work for before {p['job_y']}?",
                  kind="historical", category="job-change",
                  references=(one(p["job_x"], at["switch"], at["work"], at["switch"]),)),
        ]

    def wedding_probes(at: dict[str, str]) -> list[Probe]:
        return [Probe(
            probe_id=pid("wedding-date"), question=f"When is my sister {p['sibling']}'s wedding?",
            kind="current", category="date-correction",
            references=(one(p["date_1"], at["date"], at["date"], until=at["correct"]),
                        one(p["date_2"], at["correct"], at["correct"],
                            aliases=(p["date_2_alias"],))),
        )]

    def pet_probes(at: dict[str, str]) -> list[Probe]:
        return [Probe(
            probe_id=pid("pet-name"), question=f"What is my {p['species']}'s name?",
            kind="current", category="late-fact", before_first="abstain",
            references=(one(p["pet"], at["adopt"], at["adopt"]),),
        )]

    def class_probes(at: dict[str, str]) -> list[Probe]:
        return [Probe(
            probe_id=pid("class-current"), question="Which evening class am I taking?",
            kind="current", category="announced-change", before_first="abstain",
            references=(one(p["class"], at["start"], at["announce"], at["start"]),),
        )]

    def hobby_probes(at: dict[str, str]) -> list[Probe]:
        return [Probe(
            probe_id=pid("hobby"), question="Which instrument do I play?",
            kind="current", category="stable",
            references=(one(p["instrument"], at["mention"], at["mention"]),),
        )]

    c = rng.choice
    other_city = c([x for x in CITIES if x not in (p["city_a"], p["city_b"])])
    other_instrument = c([x for x in INSTRUMENTS if x != p["instrument"]])
    return [
        _Story("city", [
            _Beat("live", c([f"I've lived in {p['city_a']} for a few years now, in a flat near the old market.",
                             f"Home for me is {p['city_a']}; I settled here after finishing my studies."])),
            _Beat("announce", c([f"Big news: we're moving to {p['city_b']} next month, the lease is signed.",
                                 f"We've decided to relocate to {p['city_b']}. The move is planned for next month, so for now we're still in {p['city_a']}."])),
            _Beat("moved", c([f"The move is finally done, we're living in {p['city_b']} now.",
                              f"First full week living in {p['city_b']} and I already love the neighbourhood."]), min_gap=1),
            _Beat("back", c([f"{p['city_b']} didn't work out for us, so we moved back to {p['city_a']} last week.",
                             f"We're back in {p['city_a']} as of this weekend; {p['city_b']} just never felt like home."]), min_gap=1),
        ], city_probes, [
            f"My colleague {c(FRIENDS)} just got back from a weekend in {p['city_b']}.",
            f"There's a documentary about {other_city} on TV tonight.",
            f"{c(FRIENDS)} keeps saying {p['city_a']} is overrated, which is funny.",
        ], optional_tail=1),
        _Story("job", [
            _Beat("work", f"I've been a {p['role']} at {p['job_x']} for two years now."),
            _Beat("switch", c([f"Today was my first day at {p['job_y']}; I handed in my notice at {p['job_x']} last month.",
                               f"I've officially left {p['job_x']} and started at {p['job_y']} this week."]), min_gap=1),
        ], job_probes, [
            f"{c(FRIENDS)} had an interview at {p['job_y']} yesterday.",
            f"I saw an advert for {p['job_x']} on the side of a bus.",
        ]),
        _Story("wedding", [
            _Beat("date", f"My sister {p['sibling']} is getting married on {p['date_1']}, and I'm giving a speech."),
            _Beat("correct", c([f"Correction to what I said earlier: {p['sibling']}'s wedding is on {p['date_2']}, not {p['date_1']}.",
                                f"I had the date wrong before, the wedding is actually on {p['date_2']}."])),
        ], wedding_probes, [
            f"{c(FRIENDS)}'s birthday party is on {p['date_1']}.",
            f"The library is closed for repairs until {p['date_2']}.",
        ]),
        _Story("pet", [
            _Beat("adopt", f"We adopted a {p['species']} from the shelter this weekend and named her {p['pet']}.",
                  earliest=0.3),
        ], pet_probes, [f"Our neighbour has a {p['species']} called {p['pet']}, believe it or not."]),
        _Story("class", [
            _Beat("announce", f"I signed up for a {p['class']} class that starts next month.", earliest=0.2),
            _Beat("start", f"My first {p['class']} class was last night and it was great fun.", min_gap=1),
        ], class_probes, [f"{c(FRIENDS)} used to teach {p['class']} years ago."]),
        _Story("hobby", [
            _Beat("mention", f"I've played the {p['instrument']} since I was a kid, mostly in the evenings."),
        ], hobby_probes, [f"{c(FRIENDS)} is learning the {other_instrument} and practises far too loudly."]),
    ]


# --- placement and rendering ------------------------------------------------


def _place(beats: list[_Beat], free: list[list[int]], n_sessions: int,
           rng: random.Random) -> list[tuple[int, int]] | None:
    """Choose (session, user-slot) for each beat in order, or None if they do not fit."""
    taken: list[tuple[int, int]] = []
    for j, beat in enumerate(beats):
        room_after = sum(b.min_gap for b in beats[j + 1:])
        lo = int(beat.earliest * n_sessions) if j == 0 else taken[-1][0] + beat.min_gap
        hi = n_sessions - 1 - room_after
        candidates = []
        for s in range(lo, hi + 1):
            slots = [k for k in free[s] if (s, k) not in taken
                     and not (taken and taken[-1][0] == s and k <= taken[-1][1])]
            if slots:
                candidates.append((s, slots))
        if not candidates:
            return None
        session, slots = rng.choice(candidates)
        taken.append((session, rng.choice(slots)))
    return taken


def generate_trajectory(spec: GeneratorSpec) -> GeneratedTrajectory:
    """Generate one persona's trajectory and probes from ``spec``."""
    rng = random.Random(spec.seed)
    persona = _persona(rng)
    tid = spec.trajectory_id
    stories = _stories(tid, persona, rng)
    user_slots = (spec.turns_per_session + 1) // 2
    free = [list(range(user_slots)) for _ in range(spec.sessions)]
    facts: dict[tuple[int, int], tuple[str, str, str]] = {}
    placed: list[tuple[_Story, list[str]]] = []
    omitted: list[str] = []
    for story in stories:
        beats = story.beats
        spots = _place(beats, free, spec.sessions, rng)
        if spots is None and story.optional_tail:
            beats = beats[: len(beats) - story.optional_tail]
            spots = _place(beats, free, spec.sessions, rng)
            if spots is not None:
                omitted.append(f"{story.name}:{','.join(b.key for b in story.beats[len(beats):])}")
        if spots is None:
            omitted.append(story.name)
            continue
        for beat, spot in zip(beats, spots, strict=True):
            free[spot[0]].remove(spot[1])
            facts[spot] = (story.name, beat.key, beat.sentence)
        placed.append((story, [b.key for b in beats]))
    distractors = [d for story in stories for d in story.distractors]

    turns: list[Turn] = []
    beat_turn: dict[tuple[str, str], str] = {}
    total = spec.sessions * spec.turns_per_session
    width, session_width = max(4, len(str(total))), max(2, len(str(spec.sessions)))
    start = spec.start
    for s in range(spec.sessions):
        day = start.replace(hour=0, minute=0, second=0, microsecond=0)
        following = day + timedelta(days=rng.randint(1, spec.max_gap_days), hours=rng.randint(8, 21),
                                    minutes=rng.randint(0, 59))
        session_id = f"s{s + 1:0{session_width}d}"
        times = session_turn_times(start, spec.turns_per_session, next_start=following)
        for position, when in enumerate(times):
            turn_id = f"t{len(turns) + 1:0{width}d}"
            if position % 2 == 0:
                fact = facts.get((s, position // 2))
                if fact is not None:
                    core = [fact[2]]
                    beat_turn[(fact[0], fact[1])] = turn_id
                elif distractors and rng.random() < spec.distractor_rate:
                    core = [rng.choice(distractors)]
                else:
                    core = []
                content = pad_to_tokens(core, spec.turn_tokens, rng, filler_sentence)
                turns.append(Turn(turn_id=turn_id, session_id=session_id, timestamp=when,
                                  role="user", speaker=persona["name"], content=content))
            else:
                content = pad_to_tokens([], spec.turn_tokens, rng, reply_sentence)
                turns.append(Turn(turn_id=turn_id, session_id=session_id, timestamp=when,
                                  role="assistant", content=content))
        start = following

    probes: list[Probe] = []
    for story, keys in placed:
        probes.extend(story.probes({k: beat_turn[(story.name, k)] for k in keys}))
    for subject, question in rng.sample(NEVER_MENTIONED, spec.never_mentioned):
        probes.append(Probe(probe_id=f"{tid}:never-{subject.replace(' ', '-')}", question=question,
                            kind="abstention", category="never-mentioned"))
    return GeneratedTrajectory(tid, persona, tuple(turns), tuple(probes), tuple(omitted))


def generate_trajectories(spec: GeneratorSpec, count: int) -> list[GeneratedTrajectory]:
    """``count`` personas: ids ``<trajectory_id>-000``..., seeds derived from ``spec.seed``."""
    seeds = random.Random(spec.seed)
    return [
        generate_trajectory(spec.model_copy(update={
            "seed": seeds.getrandbits(63), "trajectory_id": f"{spec.trajectory_id}-{i:03d}",
        }))
        for i in range(count)
    ]


def write_generated(out_dir: Path | str, spec: GeneratorSpec, count: int = 1) -> list[GeneratedTrajectory]:
    """Write ``<id>.trajectory.jsonl`` and ``<id>.probes.jsonl`` for each generated persona.

    With ``count == 1`` the trajectory id is ``spec.trajectory_id`` itself.
    """
    out = Path(out_dir)
    made = [generate_trajectory(spec)] if count == 1 else generate_trajectories(spec, count)
    for item in made:
        write_trajectory(out / f"{item.trajectory_id}.trajectory.jsonl", item.turns)
        write_probes(out / f"{item.trajectory_id}.probes.jsonl", item.probes)
    return made


# --- LongMemEval-schema files ------------------------------------------------

LONGMEMEVAL_TYPE_WEIGHTS: dict[str, int] = {
    "single-session-user": 70,
    "single-session-assistant": 56,
    "single-session-preference": 30,
    "temporal-reasoning": 133,
    "knowledge-update": 78,
    "multi-session": 133,
}
"""Question-type split of the official 500 questions (paper figures)."""

_ABSTAINABLE = ("single-session-user", "temporal-reasoning", "knowledge-update", "multi-session")
_WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_TASKS = ["fixing the garden fence", "painting the spare room", "servicing the boiler",
          "clearing out the garage", "replacing the kitchen tap", "planting the tomato seedlings"]
_PLANTS = ["snake plant", "fern", "pothos", "monstera", "peace lily", "rubber plant", "calathea"]
_HOTELS = ["Hotel Aurora", "the Linden Inn", "Casa Verde", "the Harbour Lodge", "Pension Edelweiss"]
_TASTES = [("spicy", "bland"), ("vegetarian", "meat-heavy"), ("light", "creamy"), ("Asian-style", "fried")]


def _lme_date(when: datetime) -> str:
    return f"{when:%Y/%m/%d} ({_WEEKDAYS[when.weekday()]}) {when:%H:%M}"


def _lme_question(qtype: str, abstain: bool, rng: random.Random) -> tuple[str, str, list[list[tuple[str, str]]]]:
    """(question, answer, evidence sessions as [(role, fact sentence)]) for one question."""
    if qtype == "single-session-user":
        species, names = rng.choice(PETS)
        pet = rng.choice(names)
        facts = [[("user", f"I adopted a {species} called {pet} last week.")]]
        if abstain:
            return "What is the name of the parrot I adopted?", "You did not mention adopting a parrot.", facts
        return f"What is the name of the {species} I adopted?", pet, facts
    if qtype == "single-session-assistant":
        hotel, city = rng.choice(_HOTELS), rng.choice(CITIES)
        facts = [[("assistant", f"For your trip to {city} I'd recommend staying at {hotel}, close to the station.")]]
        return f"Which hotel did you recommend for my trip to {city}?", hotel, facts
    if qtype == "single-session-preference":
        like, dislike = rng.choice(_TASTES)
        facts = [[("user", f"I really prefer {like} food when I cook at home, nothing too {dislike}.")]]
        return ("Can you suggest something to cook for dinner tonight?",
                f"The user would prefer {like} dishes rather than {dislike} ones.", facts)
    if qtype == "temporal-reasoning":
        first, second = rng.sample(_TASKS, 2)
        facts = [[("user", f"I finally finished {first} today.")], [("user", f"I finished {second} this afternoon.")]]
        if abstain:
            return (f"Which did I do first, {first} or buying a new lawnmower?",
                    f"The information provided is not enough. You mentioned {first} but not buying a lawnmower.",
                    facts)
        return f"Which did I do first, {first} or {second}?", first, facts
    if qtype == "knowledge-update":
        old, new = rng.sample(EMPLOYERS, 2)
        facts = [[("user", f"I work at {old} at the moment.")], [("user", f"I just started a new job at {new}.")]]
        if abstain:
            return "Where does my partner work now?", "You did not mention where your partner works.", facts
        return "Where do I work now?", new, facts
    count = rng.randint(2, 4)
    facts = [[("user", f"I bought another houseplant today, a {plant}.")] for plant in rng.sample(_PLANTS, count)]
    if abstain:
        return "How many garden chairs did I buy?", "You did not mention buying garden chairs.", facts
    return "How many houseplants did I buy?", str(count), facts


def _lme_session(facts: list[tuple[str, str]], turns: int, pools: tuple[list[str], list[str]],
                 per_turn: int, rng: random.Random) -> list[dict[str, object]]:
    session: list[dict[str, object]] = []
    slots = {role: [i for i in range(turns) if (i % 2 == 0) == (role == "user")] for role in ("user", "assistant")}
    where = {}
    for role, sentence in facts:
        spots = [i for i in slots[role] if i not in where] or [0]
        where[rng.choice(spots)] = sentence
    for i in range(turns):
        sentences = rng.choices(pools[i % 2], k=per_turn)
        turn: dict[str, object] = {"role": "user" if i % 2 == 0 else "assistant"}
        if i in where:
            sentences.insert(rng.randint(0, len(sentences)), where[i])
        turn["content"] = " ".join(sentences)
        if i in where:
            turn["has_answer"] = True
        elif facts:  # as in the official files: every turn of an evidence session is labelled
            turn["has_answer"] = False
        session.append(turn)
    return session


def generate_longmemeval_file(
    path: Path | str,
    n_questions: int = 500,
    sessions_per_question: int = 50,
    seed: int = 0,
    *,
    turns_per_session: int = 10,
    turn_tokens: int = 230,
    abstention_rate: float = 0.072,
) -> Path:
    """Write a LongMemEval-schema JSON file (official fields), one record at a time.

    The defaults approach ``longmemeval_s`` (500 questions, ~50 sessions, ~115k
    tokens of history per question, ~270 MB). Evidence sessions get ``answer_``
    ids and ``has_answer: true`` on their evidence turns only (as in S files);
    the others are filler. Dates are sorted, the question comes after them.
    About 30 of 500 questions are ``_abs`` (``abstention_rate`` of the four
    types that have abstention variants), as in the official split.
    """
    rng = random.Random(seed)
    user_pool = [filler_sentence(rng) for _ in range(400)]
    reply_pool = [reply_sentence(rng) for _ in range(400)]
    mean_chars = sum(map(len, user_pool + reply_pool)) / (len(user_pool) + len(reply_pool)) + 1
    per_turn = max(1, round(turn_tokens * 4 / mean_chars))
    pools = (user_pool, reply_pool)
    types, weights = list(LONGMEMEVAL_TYPE_WEIGHTS), list(LONGMEMEVAL_TYPE_WEIGHTS.values())
    seen: set[str] = set()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        handle.write("[")
        for number in range(n_questions):
            qtype = rng.choices(types, weights)[0]
            abstain = qtype in _ABSTAINABLE and rng.random() < abstention_rate
            question, answer, facts = _lme_question(qtype, abstain, rng)
            qid = f"{rng.getrandbits(32):08x}"
            while qid in seen:
                qid = f"{rng.getrandbits(32):08x}"
            seen.add(qid)
            total = max(sessions_per_question, len(facts))
            evidence_at = sorted(rng.sample(range(total), len(facts)))
            when = datetime(2023, 1, 1, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 150_000))
            dates, ids, sessions = [], [], []
            for i in range(total):
                when += timedelta(minutes=rng.randint(30, 3000))
                dates.append(_lme_date(when))
                if i in evidence_at:
                    k = evidence_at.index(i)
                    ids.append(f"answer_{qid}_{k + 1}")
                    sessions.append(_lme_session(facts[k], turns_per_session, pools, per_turn, rng))
                else:
                    ids.append(f"{rng.choice(['sharegpt', 'ultrachat'])}_{rng.getrandbits(32):08x}_{i}")
                    sessions.append(_lme_session([], turns_per_session, pools, per_turn, rng))
            record = {
                "question_id": qid + ("_abs" if abstain else ""),
                "question_type": qtype,
                "question": question,
                "answer": answer,
                "question_date": _lme_date(when + timedelta(minutes=rng.randint(5, 2000))),
                "haystack_dates": dates,
                "haystack_session_ids": ids,
                "haystack_sessions": sessions,
                "answer_session_ids": [ids[i] for i in evidence_at],
            }
            handle.write(("\n" if number == 0 else ",\n") + json.dumps(record, ensure_ascii=False))
        handle.write("\n]\n")
    return path
