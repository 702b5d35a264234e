"""Dates in text: what span of days a date expression names, and relative expressions resolved.

Two users: the judge, which compares the days an answer names with the days a
reference names (`date_spans`), and the offline answerer, which turns "last
weekend" said on 17 July 2023 into "the weekend before 17 July 2023"
(`resolve_relative`). Everything is pure and calendar-only (no clock, no zone).

A :class:`DaySpan` is an inclusive range of days. A date without a year ("21 June")
is kept as a month/day pattern and matches that day in any year. The anchored forms
the answerer writes are read back here, so what it says the judge can check:

- ``7 May 2023``, ``May 7th, 2023``, ``2023-05-07``, ``5/7/2023`` (US order unless
  the first number exceeds 12), ``21 June``, ``June 2023``, ``2023``,
  ``November 5-6, 2022``, ``early/mid/late June 2023``, ``summer 2022``;
- ``the day/week/weekend/month/year before|after D``, ``the <weekday> before D``,
  ``N days/weeks/weekends/months/years before|after D``, ``a few days before D``,
  ``the week/weekend of D``.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"), ("dec", "december")],
        start=1,
    )
    for name in names
}
WEEKDAYS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        [("mon", "monday"), ("tue", "tues", "tuesday"), ("wed", "wednesday"), ("thu", "thur", "thurs", "thursday"),
         ("fri", "friday"), ("sat", "saturday"), ("sun", "sunday")]
    )
    for name in names
}
SMALL_NUMBERS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "a couple of": 2,
}
SEASONS: dict[str, tuple[int, int]] = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11)}


@dataclass(frozen=True)
class DaySpan:
    """An inclusive range of days; `start.year` is meaningless when `year_known` is false."""

    start: date
    end: date
    year_known: bool = True

    def within(self, other: DaySpan) -> bool:
        """Every day of this span lies inside `other` (month/day only when either lacks a year)."""
        if self.year_known and other.year_known:
            return other.start <= self.start and self.end <= other.end
        if self.year_known != other.year_known and (self.end - self.start).days > 31:
            return False
        a, b = (self.start.month, self.start.day), (self.end.month, self.end.day)
        lo, hi = (other.start.month, other.start.day), (other.end.month, other.end.day)
        return lo <= a and b <= hi

    def overlaps(self, other: DaySpan) -> bool:
        if self.year_known and other.year_known:
            return self.start <= other.end and other.start <= self.end
        return self.within(other) or other.within(self)


def _day(d: date) -> DaySpan:
    return DaySpan(d, d)


def _month(year: int, month: int) -> DaySpan:
    return DaySpan(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _add_months(year: int, month: int, n: int) -> tuple[int, int]:
    total = year * 12 + (month - 1) + n
    return total // 12, total % 12 + 1


def fmt_day(d: date) -> str:
    """`7 May 2023`: the form the answerer writes."""
    return f"{d.day} {calendar.month_name[d.month]} {d.year}"


def fmt_month(year: int, month: int) -> str:
    return f"{calendar.month_name[month]} {year}"


# -- absolute dates -------------------------------------------------------------------------------
_MON = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
       r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DD = r"(\d{1,2})(?:st|nd|rd|th)?"
_YYYY = r"((?:19|20)\d{2})"
_ABSOLUTE = [
    ("iso", re.compile(rf"\b{_YYYY}-(\d{{1,2}})-(\d{{1,2}})\b")),
    ("slash", re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})\b")),
    ("d_range_m_y", re.compile(rf"\b{_DD}\s*(?:-|–|to|and)\s*{_DD}(?:\s+of)?\s*{_MON},?\s+{_YYYY}\b", re.I)),
    ("m_d_range_y", re.compile(rf"\b{_MON}\s+{_DD}\s*(?:-|–|to|and)\s*{_DD},?\s+{_YYYY}\b", re.I)),
    ("d_m_y", re.compile(rf"\b(?:the\s+)?{_DD}(?:\s+of)?\s*{_MON},?\s+{_YYYY}\b", re.I)),
    ("m_d_y", re.compile(rf"\b{_MON}\s+(?:the\s+)?{_DD},?\s+{_YYYY}\b", re.I)),
    ("nth_week_m_y", re.compile(rf"\b(?:the\s+)?(first|second|third|fourth|last)\s+(week|weekend)\s+(?:of|in)\s+"
                                rf"{_MON},?\s+{_YYYY}\b", re.I)),
    ("part_m_y", re.compile(rf"\b(early|mid|middle of|late|the beginning of|the start of|the end of)\s*-?\s*"
                            rf"{_MON},?\s+{_YYYY}\b", re.I)),
    ("season_y", re.compile(rf"\b(spring|summer|autumn|fall|winter)(?:\s+of)?\s+{_YYYY}\b", re.I)),
    ("m_y", re.compile(rf"\b{_MON},?\s+(?:of\s+)?{_YYYY}\b", re.I)),
    ("d_m", re.compile(rf"\b(?:the\s+)?{_DD}(?:\s+of)?\s+{_MON}(?![a-z])", re.I)),
    ("m_d", re.compile(rf"\b{_MON}\s+(?:the\s+)?{_DD}\b(?!\s*(?:,\s*)?(?:19|20)\d\d)", re.I)),
    ("y", re.compile(rf"(?<![\d/-]){_YYYY}(?![\d/-])")),
]


def _mon(token: str) -> int:
    return MONTHS[token.lower().rstrip(".")[:3] if token.lower().rstrip(".") not in MONTHS else token.lower().rstrip(".")]


def _safe(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _absolute(kind: str, g: tuple[str, ...]) -> DaySpan | None:
    if kind == "iso":
        d = _safe(int(g[0]), int(g[1]), int(g[2]))
        return _day(d) if d else None
    if kind == "slash":
        a, b, y = int(g[0]), int(g[1]), int(g[2])
        y = y + 2000 if y < 100 else y
        month, day = (b, a) if a > 12 else (a, b)
        d = _safe(y, month, day)
        return _day(d) if d else None
    if kind == "d_range_m_y":
        m, y = _mon(g[2]), int(g[3])
        a, b = _safe(y, m, int(g[0])), _safe(y, m, int(g[1]))
        return DaySpan(a, b) if a and b and a <= b else None
    if kind == "m_d_range_y":
        m, y = _mon(g[0]), int(g[3])
        a, b = _safe(y, m, int(g[1])), _safe(y, m, int(g[2]))
        return DaySpan(a, b) if a and b and a <= b else None
    if kind == "d_m_y":
        d = _safe(int(g[2]), _mon(g[1]), int(g[0]))
        return _day(d) if d else None
    if kind == "m_d_y":
        d = _safe(int(g[2]), _mon(g[0]), int(g[1]))
        return _day(d) if d else None
    if kind == "nth_week_m_y":
        nth, unit, m, y = g[0].lower(), g[1].lower(), _mon(g[2]), int(g[3])
        last = calendar.monthrange(y, m)[1]
        if unit == "week":
            if nth == "last":
                return DaySpan(date(y, m, last - 6), date(y, m, last))
            k = ("first", "second", "third", "fourth").index(nth)
            return DaySpan(date(y, m, 1 + 7 * k), date(y, m, 7 + 7 * k))
        saturdays = [d for d in range(1, last + 1) if date(y, m, d).weekday() == 5]
        sat = saturdays[-1] if nth == "last" else saturdays[("first", "second", "third", "fourth").index(nth)]
        start = date(y, m, sat)
        return DaySpan(start, start + timedelta(days=1))
    if kind == "part_m_y":
        m, y = _mon(g[1]), int(g[2])
        last = calendar.monthrange(y, m)[1]
        part = g[0].lower()
        lo, hi = {"early": (1, 10), "the beginning of": (1, 10), "the start of": (1, 10),
                  "mid": (11, 20), "middle of": (11, 20), "late": (21, last), "the end of": (21, last)}[part]
        return DaySpan(date(y, m, lo), date(y, m, hi))
    if kind == "season_y":
        y = int(g[1])
        if g[0].lower() == "winter":
            return DaySpan(date(y, 12, 1), date(y + 1, 2, calendar.monthrange(y + 1, 2)[1]))
        a, b = SEASONS[g[0].lower()]
        return DaySpan(date(y, a, 1), date(y, b, calendar.monthrange(y, b)[1]))
    if kind == "m_y":
        return _month(int(g[1]), _mon(g[0]))
    if kind == "d_m":
        d = _safe(2000, _mon(g[1]), int(g[0]))  # 2000 is a leap year: 29 February stays possible
        return DaySpan(d, d, year_known=False) if d else None
    if kind == "m_d":
        d = _safe(2000, _mon(g[0]), int(g[1]))
        return DaySpan(d, d, year_known=False) if d else None
    if kind == "y":
        y = int(g[0])
        return DaySpan(date(y, 1, 1), date(y, 12, 31))
    return None


def absolute_matches(text: str) -> list[tuple[int, int, DaySpan]]:
    """Non-overlapping absolute date expressions, most specific pattern first."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, int, DaySpan]] = []
    for kind, pattern in _ABSOLUTE:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            if kind == "m_d" and m.group(1).lower() == "may" and not m.group(0)[0].isupper():
                continue  # "may 2 people come" is a verb
            span = _absolute(kind, m.groups())
            if span is not None:
                taken.append((m.start(), m.end()))
                found.append((m.start(), m.end(), span))
    return sorted(found, key=lambda f: f[0])


# -- anchored relative forms ("the week before 9 June 2023") --------------------------------------
_COUNT = r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|couple of|a few|few|several)"
_UNIT = r"(day|week|weekend|month|year)s?"
_WD = r"(mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)"
_ANCHORED = [
    ("n_units", re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+(before|after)\s+$", re.I)),
    ("the_unit", re.compile(rf"\b(?:the\s+)?{_UNIT}\s+(before|after|of)\s+$", re.I)),
    ("the_weekday", re.compile(rf"\b(?:the\s+)?{_WD}\.?\s+(before|after|of)\s+$", re.I)),
]


def _count(token: str) -> int | None:
    t = token.lower()
    if t.isdigit():
        return int(t)
    if t in ("a few", "few", "several"):
        return None
    return SMALL_NUMBERS.get(t)


def last_weekend(anchor: date, k: int = 1) -> DaySpan:
    """The k-th Saturday-Sunday entirely before `anchor` (k=1: last weekend)."""
    sunday = anchor - timedelta(days=(anchor.weekday() - 6) % 7 or 7)
    sunday -= timedelta(days=7 * (k - 1))
    return DaySpan(sunday - timedelta(days=1), sunday)


def next_weekend(anchor: date, k: int = 1) -> DaySpan:
    saturday = anchor + timedelta(days=(5 - anchor.weekday()) % 7 or 7)
    saturday += timedelta(days=7 * (k - 1))
    return DaySpan(saturday, saturday + timedelta(days=1))


def _week_of(anchor: date) -> DaySpan:
    monday = anchor - timedelta(days=anchor.weekday())
    return DaySpan(monday, monday + timedelta(days=6))


def _shift(anchor: DaySpan, unit: str, n: int | None, direction: str) -> DaySpan | None:
    """`n` units before/after the anchor span (n None: "a few", 2-5)."""
    sign = -1 if direction == "before" else 1
    ref = anchor.start if sign < 0 else anchor.end
    if unit == "day":
        if n is None:
            lo, hi = 2, 6
            return DaySpan(ref - timedelta(days=hi), ref - timedelta(days=lo)) if sign < 0 else \
                DaySpan(ref + timedelta(days=lo), ref + timedelta(days=hi))
        d = ref + timedelta(days=sign * n)
        return _day(d)
    if unit == "week":
        if n is None:
            n = 3
        if n == 1:
            return DaySpan(ref - timedelta(days=7), ref - timedelta(days=1)) if sign < 0 else \
                DaySpan(ref + timedelta(days=1), ref + timedelta(days=7))
        centre = ref + timedelta(days=sign * 7 * n)
        return DaySpan(centre - timedelta(days=4), centre + timedelta(days=4))
    if unit == "weekend":
        k = n or 2
        return last_weekend(ref, k) if sign < 0 else next_weekend(ref, k)
    if unit == "month":
        y, m = _add_months(ref.year, ref.month, sign * (n or 2))
        return _month(y, m)
    if unit == "year":
        y = ref.year + sign * (n or 2)
        return DaySpan(date(y, 1, 1), date(y, 12, 31))
    return None


def anchored(prefix: str, anchor: DaySpan) -> tuple[int, DaySpan] | None:
    """An anchored relative phrase ending `prefix` (just before the anchor date): (start, span)."""
    if not anchor.year_known:
        return None
    for kind, pattern in _ANCHORED:
        m = pattern.search(prefix)
        if not m:
            continue
        if kind == "the_unit":
            unit, rel = m.group(1).lower(), m.group(2).lower()
            if rel == "of":
                if unit == "week":
                    return m.start(), _week_of(anchor.start)
                if unit == "weekend":
                    return m.start(), next_weekend(anchor.start - timedelta(days=1)) if anchor.start.weekday() < 5 \
                        else DaySpan(anchor.start - timedelta(days=anchor.start.weekday() - 5),
                                     anchor.start - timedelta(days=anchor.start.weekday() - 6))
                return m.start(), anchor
            return m.start(), _shift(anchor, unit, 1, rel)
        if kind == "the_weekday":
            wd, rel = WEEKDAYS[m.group(1).lower()], m.group(2).lower()
            if rel == "of":
                return m.start(), anchor
            if rel == "before":
                d = anchor.start - timedelta(days=(anchor.start.weekday() - wd) % 7 or 7)
            else:
                d = anchor.end + timedelta(days=(wd - anchor.end.weekday()) % 7 or 7)
            return m.start(), _day(d)
        if kind == "n_units":
            span = _shift(anchor, m.group(2).lower(), _count(m.group(1)), m.group(3).lower())
            return (m.start(), span) if span else None
    return None


def date_spans(text: str, keep: Callable[[int, int], bool] | None = None) -> list[DaySpan]:
    """Every date expression in `text` as the days it names, in order of appearance; with `keep`,
    only those whose (start, end) in `text` it keeps."""
    out: list[DaySpan] = []
    for start, end, span in absolute_matches(text):
        if keep is not None and not keep(start, end):
            continue
        rel = anchored(text[max(0, start - 40):start], span)
        out.append(rel[1] if rel else span)
    return out


def whole_date(text: str) -> DaySpan | None:
    """The span a text names when the text is nothing but one date expression (a reference)."""
    core = re.sub(r"^\s*(on|in|at|around|about|during|by|sometime in)\s+", "", text.strip(), flags=re.I)
    core = core.strip(" .,;:!?\"'")
    found = absolute_matches(core)
    if len(found) != 1:
        return None
    start, end, span = found[0]
    rel = anchored(core[:start], span)
    if rel is not None:
        start, span = rel
    leftover = (core[:start] + core[end:]).strip(" .,;:-")
    if re.sub(r"\b(on|in|the|of|sometime|around|about|between|during)\b", "", leftover, flags=re.I).strip():
        return None
    return span


# -- resolving what a speaker said relative to when they said it ----------------------------------
_RELATIVE = re.compile(
    r"\b(?:(the day before yesterday|the day after tomorrow|the other day|the other night)|(yesterday)|(last night)|(today|tonight|this morning|this afternoon|"
    r"this evening|earlier today)|(tomorrow)|"
    rf"{_COUNT}\s+{_UNIT}\s+ago|"
    r"(?:(last|this past|past|this coming|coming|upcoming|this|next|the other|on)\s+(week|weekend|month|year|summer|winter|spring|fall|autumn|"
    rf"{_WD[1:-1]})\.?(?![a-z]))|"
    rf"(recently|a while ago|lately)|"
    rf"{_COUNT}\s+{_UNIT}\s+(later|from now)|in\s+{_COUNT}\s+{_UNIT})\b",
    re.I,
)


def _weekday_before(anchor: date, wd: int) -> date:
    return anchor - timedelta(days=(anchor.weekday() - wd) % 7 or 7)


def resolve_relative(phrase_match: re.Match[str], anchor: date) -> str | None:
    """The absolute form of one relative expression matched by :data:`RELATIVE`, said on `anchor`."""
    g = phrase_match.groups()
    when = fmt_day(anchor)
    if g[0]:
        if g[0].lower() in ("the other day", "the other night"):
            return f"a few days before {when}"
        if g[0].lower() == "the day after tomorrow":
            return fmt_day(anchor + timedelta(days=2))
        return fmt_day(anchor - timedelta(days=2))
    if g[1] or g[2]:
        return fmt_day(anchor - timedelta(days=1))
    if g[3]:
        return when
    if g[4]:
        return fmt_day(anchor + timedelta(days=1))
    if g[5]:
        n, unit = _count(g[5]), g[6].lower()
        if unit == "day":
            return f"{n} days before {when}" if n and n > 1 else (
                fmt_day(anchor - timedelta(days=1)) if n == 1 else f"a few days before {when}")
        if unit == "week":
            return f"the week before {when}" if n == 1 else f"{n or 'a few'} weeks before {when}"
        if unit == "weekend":
            return f"the weekend before {when}" if n == 1 else f"{n or 'a few'} weekends before {when}"
        if unit == "month":
            if n is None:
                return f"a few months before {when}"
            y, m = _add_months(anchor.year, anchor.month, -n)
            return fmt_month(y, m)
        if unit == "year":
            return str(anchor.year - n) if n else f"a few years before {when}"
    if g[10] or g[13]:
        n = _count(g[10] or g[13])
        unit = (g[11] or g[14]).lower()
        if unit == "day" and n == 1:
            return fmt_day(anchor + timedelta(days=1))
        if unit in ("week", "weekend") and n == 1:
            return f"the {unit} after {when}"
        if unit == "month" and n:
            y, m = _add_months(anchor.year, anchor.month, n)
            return fmt_month(y, m)
        if unit == "year" and n:
            return str(anchor.year + n)
        return f"{n or 'a few'} {unit}s after {when}"
    if g[7]:
        which, unit = g[7].lower(), g[8].lower().rstrip(".")
        if which == "on":
            if unit not in WEEKDAYS:
                return None
            ahead = re.search(r"\b(will|'ll|going to|gonna|planning|plan to|next)\b",
                              phrase_match.string[max(0, phrase_match.start() - 60):phrase_match.end() + 20], re.I)
            which = "next" if ahead else "last"
        if which == "the other":
            return f"a few days before {when}" if unit == "day" else None
        past = which in ("last", "this past", "past")
        if unit == "week":
            if which == "this":
                return f"the week of {when}"
            return f"the week before {when}" if past else f"the week after {when}"
        if unit == "weekend":
            if which == "this":
                return f"the weekend of {when}"
            return f"the weekend before {when}" if past else f"the weekend after {when}"
        if unit == "month":
            y, m = _add_months(anchor.year, anchor.month, -1 if past else 0 if which == "this" else 1)
            return fmt_month(y, m)
        if unit == "year":
            return str(anchor.year + (-1 if past else 0 if which == "this" else 1))
        if unit in SEASONS or unit == "winter":
            y = anchor.year + (-1 if past else 0 if which == "this" else 1)
            return f"{'fall' if unit == 'autumn' else unit} {y}"
        if unit in WEEKDAYS:
            wd = WEEKDAYS[unit]
            if past or which == "this" and wd < anchor.weekday():
                return fmt_day(_weekday_before(anchor, wd))
            d = anchor + timedelta(days=(wd - anchor.weekday()) % 7 or 7)
            return fmt_day(d)
    return None


RELATIVE = _RELATIVE
"""Relative time expressions ("yesterday", "two weeks ago", "last Fri", "next month", ...)."""


_SINCE_FOR = re.compile(
    r"\b(?:have|has|'ve|had)\s+(?:been\s+\w+ing|had\s+\w+|had|been|known)\b[^.!?]*?\bfor\s+(?:about\s+|around\s+|"
    r"almost\s+|nearly\s+|just under\s+|over\s+)?(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve)\s+(year|month)s?\b"
    r"|\b(?:started|began)\b[^.!?]*?\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    r"\s+(year|month)s?\s+ago\b", re.I)
_DAY_OF_MONTH = re.compile(r"\bon the (\d{1,2})(?:st|nd|rd|th)\b", re.I)


def resolve_since(text: str, anchor: date) -> str | None:
    """When something began, from "I've had them for 3 years" (said on `anchor`): "2020"; months: "August 2023"."""
    m = _SINCE_FOR.search(text)
    if not m:
        return None
    count, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    n = _count(count)
    if not n:
        return None
    if unit.lower() == "year":
        return str(anchor.year - n)
    y, mo = _add_months(anchor.year, anchor.month, -n)
    return fmt_month(y, mo)


def resolve_day_of_month(text: str, anchor: date) -> str | None:
    """ "on the 15th" said on 17 August 2023: "15 August 2023" (the latest such day not after `anchor`)."""
    m = _DAY_OF_MONTH.search(text)
    if not m:
        return None
    day = int(m.group(1))
    y, mo = anchor.year, anchor.month
    if day > anchor.day:
        y, mo = _add_months(y, mo, -1)
    d = _safe(y, mo, day)
    return fmt_day(d) if d else None
