"""Task classification, routing and the explicit-memory cue (seed-systems 3.3.11-3.3.12).

The categories and the routing rule are [SEED]; the keyword rules are [CHOICE]: ordered,
first match wins.
"""

from __future__ import annotations

import re

from .contracts import Route, TaskCategory

_WORDS = lambda *ws: re.compile(r"\b(" + "|".join(ws) + r")\b", re.IGNORECASE)  # noqa: E731

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_CODE = (
    re.compile(r"```"),
    re.compile(r"(?:^|\s)(?:\.{0,2}/)?[\w.-]+/[\w./-]+"),          # file paths
    re.compile(r"\b\w+\.(?:py|js|ts|rs|go|java|c|cpp|h|json|yaml|yml|toml|sh|md)\b"),
    re.compile(r"\b[A-Za-z]+_[A-Za-z0-9_]+\b"),                      # snake_case identifiers
    re.compile(r"\w\(\)"),                                          # calls
    _WORDS("error", "function", "deploy", "stack trace", "exception", "traceback"),
)
RULES: tuple[tuple[TaskCategory, tuple[re.Pattern[str], ...]], ...] = (
    ("code", _CODE),
    ("knowledge-update", (_WORDS("now", "currently", "still", "changed", "updated", "latest",
                                 "anymore", "switched"),)),
    ("temporal", (_WORDS("when", "what date", "how long", "before", "after", "ago", "first",
                         "last", *_MONTHS, *_DAYS),)),
    ("multi-session", (_WORDS("across", "in total", "how many", "all the", "sessions",
                              "each time"),)),
    ("preference", (_WORDS("prefer", "favorite", "favourite", "like", "recommend", "rather"),)),
)
"""Ordered keyword rules [CHOICE]; `single-session` is everything else."""

REACT_CATEGORIES: frozenset[str] = frozenset({"multi-session", "code", "knowledge-update"})
"""Routed read -> integrate (-> retry) [SEED; multi-hop read as multi-session, INFER]."""

_CUE = r"(?:remember|don't forget|do not forget|note|keep in mind|save this|memorize)"
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|us|our)\b", re.IGNORECASE)
_LEADING_CUE = re.compile(rf"^(?:please[,\s]+)?{_CUE}(?P<that>\s+that|\s*:)?(?:\s*,)?\s+(?P<rest>.+)$",
                          re.IGNORECASE)
_SPECIFIC = re.compile(r"\d|\s[A-Z][a-z]")
_TRAILING_CUE = re.compile(r"[,;-]\s*(?:please\s+)?(?:remember|note|memorize|don't forget|do not forget)"
                           r"\s+(?:that|this|it)\s*[.!]*$", re.IGNORECASE)
_NOT_A_REQUEST = re.compile(r"^(?:please[,\s]+)?(?:remember|don't forget|do not forget)\s+(?:when|how|what|to)\b",
                            re.IGNORECASE)
MEMORY_CUE = re.compile(rf"\b{_CUE}\b", re.IGNORECASE)
"""A cue word anywhere: the candidate for x_N, which `explicit_memory_request` then makes precise."""

_CUE_STRIP = re.compile(
    r"^\s*(?:please[,\s]+)?(?:remember|don't forget|do not forget|note|keep in mind|save this|"
    r"memorize)(?:\s+that)?\s*[:,-]?\s*", re.IGNORECASE)
_TRAILING_STRIP = re.compile(
    r"\s*[,;-]\s*(?:please\s+)?(?:remember|note|memorize|don't forget|do not forget)\s+(?:that|this|it)\s*[.!]*$",
    re.IGNORECASE)

_UPDATE = (
    re.compile(r"\b(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+(?:now|currently|no longer)\b", re.IGNORECASE),
    re.compile(r"\b(?:my|our)\b[^.!?]{0,40}?\b(?:is|are)\s+(?:now|currently|no longer)\b", re.IGNORECASE),
    re.compile(r"\b(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?"
               r"(?:moved|switched|changed|quit|joined(?!\s+in\b))\b", re.IGNORECASE),
    re.compile(r"\b(?:i|we)(?:'m|'re|\s+am|\s+are)\s+not\b[^.!?]*\banymore\b", re.IGNORECASE),
    re.compile(r"\b(?:my|our)\s+new\s+(?:job|home|house|apartment|flat|address|number|phone|email|car|"
               r"partner|boss|manager|school|role|position|city|team)\b", re.IGNORECASE),
    # A sentence-final "now" on a possessive fact or a where-I-live/work statement ("my office is
    # in Munich now", "I live in Porto now"); "right now", "for now", "just now" are the moment.
    re.compile(r"\b(?:my|our)\b[^.!?]*\b(?:is|are)\b[^.!?]*(?<!right )(?<!for )(?<!just )\bnow\s*[.!]*$",
               re.IGNORECASE),
    re.compile(r"\b(?:i|we)\s+(?:live|work|stay|study)\b[^.!?]*(?<!right )(?<!for )(?<!just )\bnow\s*[.!]*$",
               re.IGNORECASE),
    # A pursuit, membership or status taken up: "I just started agility classes", "I've started a
    # new diet", "I took up community work", "I decided to run for office", "I signed up for a
    # course", "I'm learning German", "I'm taking a cooking class", "I've been looking into
    # counseling as a career". Not "I joined in", "I started to cry", "I'm taking a break".
    re.compile(r"\b(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+|also\s+|even\s+)?"
               r"(?:started|began|took\s+up|signed\s+up|enrolled|decided\s+to|applied\s+(?:to|for)|"
               r"adopted|got\s+(?:a\s+|my\s+)?new)\b"
               r"(?=\s+\w)(?!\s+(?:in|to|with|back|out|it|this|that)\b)", re.IGNORECASE),
    re.compile(r"\b(?:i|we)(?:'m|'re|\s+am|\s+are|'ve\s+been|\s+have\s+been)\s+"
               r"(?:now\s+|currently\s+|also\s+|still\s+)?"
               r"(?:learning(?!\s+(?:a\s+(?:ton|lot)|so\s+much|a\s+great\s+deal))|looking\s+into|"
               r"training\s+(?:for|to)|studying|exploring\s+\w+\s+opportunities|"
               r"taking\s+(?:a\s+|an\s+|some\s+)?(?:\w+\s+)?(?:class|classes|course|courses|lessons))\b",
               re.IGNORECASE),
    # A lasting attribute of the speaker: "I'm allergic", "we're engaged".
    re.compile(r"\b(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:now\s+|also\s+|still\s+)?"
               r"(?:allergic|vegan|vegetarian|lactose[-\s]intolerant|diabetic|pregnant|engaged|married|"
               r"divorced|retired)\b", re.IGNORECASE),
)
_PREFERENCE = (
    # "my favorite X is ...", "one of my favorite hobbies", "here's my favorite, ..." -- not
    # the favourite part of an event ("my favorite part was").
    re.compile(r"\b(?:my|one\s+of\s+my)\s+(?:all[-\s]time\s+)?(?:fave|favou?rite)s?\b"
               r"(?!\s+(?:part|moment|memory|memories|thing\s+about)\b)(?![^.!?]*\bwas\b)",
               re.IGNORECASE),
    # "I'm a huge fan of ...", "I'm a fan too", "I'm really into ..."; not "I'm into it".
    re.compile(r"\bi(?:'m|\s+am)\s+(?:also\s+|really\s+|such\s+|definitely\s+)?(?:a\s+)?"
               r"(?:huge\s+|big\s+|massive\s+|real\s+)?fan\b", re.IGNORECASE),
    re.compile(r"\bi(?:'m|\s+am)\s+(?:also\s+|really\s+|so\s+|totally\s+|super\s+)?into\s+"
               r"(?!(?:it|that|this|the\s+idea)\b)\w", re.IGNORECASE),
    # "I love coconut milk", "I love making cakes", "I also enjoy reading", "I really like this
    # quote", "I love to." -- a taste, not a reaction to what was just shown or said ("I love
    # that!", "I love the colors", "I love your painting", "I love hearing that", "I'd love to").
    re.compile(r"\bi\s+(?:also\s+|really\s+|just\s+|absolutely\s+|totally\s+|truly\s+|genuinely\s+|"
               r"still\s+)*(?:love|enjoy|adore|like|prefer)\s+"
               r"(?!(?:it|that|this|those|these|them|you|your|yours|his|her|their|our|how|when|what|"
               r"the|seeing|hearing|reading\s+about|watching\s+you|to\s+(?:hear|see|help|chat|talk))\b)\w",
               re.IGNORECASE),
    # "I've always loved birds", "I've always been fascinated by ...".
    re.compile(r"\bi(?:'ve|\s+have)\s+always\s+(?:loved|liked|enjoyed|adored|"
               r"been\s+(?:into|awed|fascinated|passionate|interested|a\s+fan))\b", re.IGNORECASE),
    # A standing habit: "X is my thing", "cooking is therapy for me", "... twice a week".
    re.compile(r"\b(?:is|are)\s+(?:my\s+thing|therapy\s+for\s+me|my\s+chill\s+time|my\s+go-to|"
               r"my\s+happy\s+place)\b", re.IGNORECASE),
    re.compile(r"\b(?:i|we)\s+(?:\w+\s+){1,6}(?:every\s+(?:day|morning|evening|night|week|weekend)|"
               r"(?:once|twice|three\s+times)\s+a\s+(?:day|week|month))\b", re.IGNORECASE),
)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")
def classify_task(text: str) -> TaskCategory:
    """c_q: the first rule whose pattern matches; `single-session` otherwise."""
    for category, patterns in RULES:
        if any(p.search(text) for p in patterns):
            return category
    return "single-session"


def route_for(category: str) -> Route:
    return "react" if category in REACT_CATEGORIES else "single-pass"


def _statements(text: str) -> list[str]:
    """The declarative sentences of a text (questions dropped)."""
    return [x.strip() for x in _SENTENCE_SPLIT.split(" ".join(text.split()))
            if x.strip() and not x.strip().endswith("?")]


def explicit_memory_request(text: str) -> bool:
    """x_N: the speaker asks for something about themselves to be kept [CHOICE rule].

    A cue ("remember", "note", "keep in mind", ...) opening a declarative sentence whose rest is
    about the speaker ("Remember that my flight is on Tuesday") or states a specific fact after
    "that"/":" (a number or a name: "Remember that the cabin code is 4411"), or closing one ("I
    drive a blue car, remember that"). Not a request: advice to the listener ("Remember to take breaks",
    "Remember that staying positive is important"), reminiscence ("I remember our trip",
    "Remember when we..."), questions ("Do you remember...?"). Measured on real dialogue in
    tests/systems/thalia/test_thalia_gate_precision.py.
    """
    if not MEMORY_CUE.search(text):
        return False
    for sentence in _statements(text):
        if _TRAILING_CUE.search(sentence):
            return True
        if _NOT_A_REQUEST.search(sentence):
            continue
        lead = _LEADING_CUE.match(sentence)
        if lead is None:
            continue
        rest = lead.group("rest")
        if _FIRST_PERSON.search(rest):
            return True
        if lead.group("that") and _SPECIFIC.search(" " + rest):  # "Remember that the cabin code is 4411"
            return True
    return False


def update_statement(text: str) -> bool:
    """A first-person statement that a fact about the speaker changed [CHOICE rule]: "I now live
    in Lisbon", "my bike is currently red", "I just switched teams", "I'm not vegan anymore",
    "my new job". Questions and remarks about the moment ("right now", "for now") are not."""
    return any(p.search(s) for s in _statements(text) for p in _UPDATE)


def preference_statement(text: str) -> bool:
    """A first-person statement of a standing taste or habit [CHOICE rule]: "I love coconut
    milk", "my favorite genre is fantasy", "I'm a huge fan of Bach", "cooking is therapy for me",
    "I take them to the park twice a week". Reactions to what was just said or shown ("I love
    that!", "I love your painting", "I'd love to") and questions are not."""
    return any(p.search(s) for s in _statements(text) for p in _PREFERENCE)


def requires_consolidation(category: str, text: str) -> bool:
    """r_N: a knowledge update or an explicit memory cue [SEED]; for the words of a turn, a
    knowledge update is a first-person change statement (`update_statement`) or a stated
    standing taste or habit (`preference_statement`), new knowledge about the speaker [CHOICE];
    the task category (`category`) routes questions and no longer decides it alone. Recall and
    precision on hand-labelled LoCoMo turns: tests/systems/thalia/test_thalia_gate_locomo.py."""
    return update_statement(text) or preference_statement(text) or explicit_memory_request(text)


def strip_cue(text: str) -> str:
    """The fact without a leading cue phrase: 'Remember that X' -> 'X' [CHOICE]."""
    stripped = _CUE_STRIP.sub("", " ".join(text.split()), count=1).strip()
    stripped = _TRAILING_STRIP.sub("", stripped).strip()
    return stripped[:1].upper() + stripped[1:] if stripped else " ".join(text.split())
