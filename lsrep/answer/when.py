"""Relative time expressions the shared resolver (`lsrep.temporal.RELATIVE`) leaves open, for the offline answerer.

Tried on a sentence only when it names no absolute date and no expression `RELATIVE` resolves; each is
resolved against the date the sentence was said, in the forms `lsrep.temporal` writes:

- "a couple weeks ago", "two years back": as "N <unit>s ago" ("2 weeks before 17 July 2023", "July 2021":
  years back keep the month said, as `lsrep.answer.extractive` does for "N years ago");
- "the previous week / weekend / month / year", "the week before last", "the other week";
- "over the weekend", "the weekend": the weekend just past (said on a weekend: that weekend);
- a bare weekday ("went Saturday with the kids"): the last such day, or the next one when the
  sentence speaks of the future ("will", "going to", "planning");
- "two Saturdays ago": that weekday, so many weeks back; "in the summer": that season of the year said;
- a month without a year ("in May", "early June", "since March"): that month of the year it was
  said in, or of the year before when that month is still ahead (a past-tense sentence) — and the
  reverse for a sentence about the future.

Plain English only; nothing here names a particular event.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

from lsrep.temporal import SMALL_NUMBERS, WEEKDAYS, fmt_day, fmt_month

_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
        "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple": 2, "a couple of": 2, "couple of": 2,
        "a pair of": 2}
_AGO = re.compile(r"\b(\d+|a couple(?: of)?|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                  r"twelve|a few|few|several)\s+(day|week|weekend|month|year)s?\s+(ago|back|earlier)\b", re.I)
_PREVIOUS = re.compile(r"\bthe\s+(?:previous|prior|preceding)\s+(week|weekend|month|year)\b|"
                       r"\bthe\s+(week|weekend|month)\s+before\s+last\b|\bthe\s+other\s+(week|month)\b", re.I)
_WEEKEND = re.compile(r"\b(?:over|during|on|at|for)\s+the\s+weekend\b", re.I)
_FUTURE = re.compile(r"\b(?:will|'ll|going to|gonna|planning|plan to|plans to|next|can't wait|cannot wait|"
                     r"looking forward|upcoming|hope to|want to)\b|(?:\b(?:am|are|is)|'re|'m)\s+going\b(?!\s+\w+ing\b)",
                     re.I)
_WEEKDAY = re.compile(r"\b(?:on\s+)?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b(?!\s+(?:before|"
                      r"after|of)\b)", re.I)
_WEEKDAYS_AGO = re.compile(r"\b(\d+|a couple(?: of)?|two|three|four|five)\s+(monday|tuesday|wednesday|thursday|friday|"
                           r"saturday|sunday)s\s+(?:ago|back)\b", re.I)
_SEASON = re.compile(r"\b(?:in|during|over|for)\s+the\s+(spring|summer|fall|autumn|winter)\b", re.I)
_MONTHS = "|".join(calendar.month_name[1:])
_MONTH = re.compile(rf"\b(?:(?:in|since|during|early|mid|late|end of|start of|beginning of|last|this|back in|"
                    rf"until|till|by|of)\s+(?:early\s+|mid-?\s*|late\s+)?|(?:early|mid|late)-)({_MONTHS})\b"
                    rf"(?!\s+\d)", re.I)


def _count(token: str) -> int | None:
    t = token.lower()
    return int(t) if t.isdigit() else _NUM.get(t)


def _shift_months(d: date, n: int) -> tuple[int, int]:
    k = d.year * 12 + d.month - 1 + n
    return k // 12, k % 12 + 1


def _ago(n: int | None, unit: str, anchor: date) -> str:
    when = fmt_day(anchor)
    if unit == "day":
        if n is None:
            return f"a few days before {when}"
        return fmt_day(anchor - timedelta(days=n))
    if unit in ("week", "weekend"):
        if n == 1:
            return f"the {unit} before {when}"
        return f"{n or 'a few'} {unit}s before {when}"
    if unit == "month":
        if n is None:
            return f"a few months before {when}"
        return fmt_month(*_shift_months(anchor, -n))
    return fmt_month(anchor.year - n, anchor.month) if n else f"a few years before {when}"


def resolve_more(text: str, anchor: date) -> str | None:
    """The first relative expression of `text` in the families above, resolved against `anchor`; else None."""
    found: list[tuple[int, str]] = []
    for m in _AGO.finditer(text):
        found.append((m.start(), _ago(_count(m.group(1)), m.group(2).lower(), anchor)))
    for m in _PREVIOUS.finditer(text):
        if m.group(1):
            found.append((m.start(), _ago(1, m.group(1).lower(), anchor)))
        elif m.group(2):
            found.append((m.start(), _ago(2, m.group(2).lower(), anchor)))
        else:
            found.append((m.start(), _ago(None, m.group(3).lower(), anchor)))
    ahead = bool(_FUTURE.search(text))
    for m in _WEEKDAYS_AGO.finditer(text):
        n = _count(m.group(1)) or 1
        wd = WEEKDAYS[m.group(2).lower()]
        found.append((m.start(), fmt_day(anchor - timedelta(days=(anchor.weekday() - wd) % 7 or 7) - timedelta(weeks=n - 1))))
    for m in _SEASON.finditer(text):
        season = m.group(1).lower()
        found.append((m.start(), f"{'fall' if season == 'autumn' else season} {anchor.year}"))
    for m in _WEEKEND.finditer(text):
        if anchor.weekday() >= 5:
            found.append((m.start(), f"the weekend of {fmt_day(anchor)}"))
        else:
            found.append((m.start(), f"the weekend {'after' if ahead else 'before'} {fmt_day(anchor)}"))
    for m in _WEEKDAY.finditer(text):
        if any(m.start() >= w.start() and m.end() <= w.end() for w in _WEEKDAYS_AGO.finditer(text)):
            continue
        wd = WEEKDAYS[m.group(1).lower()]
        if ahead:
            d = anchor + timedelta(days=(wd - anchor.weekday()) % 7 or 7)
        else:
            d = anchor - timedelta(days=(anchor.weekday() - wd) % 7 or 7)
        found.append((m.start(), fmt_day(d)))
    for m in _MONTH.finditer(text):
        month = list(calendar.month_name).index(m.group(1).capitalize())
        year = anchor.year
        if not ahead and month > anchor.month:
            year -= 1
        elif ahead and month < anchor.month:
            year += 1
        found.append((m.start(), fmt_month(year, month)))
    return min(found)[1] if found else None


_ONGOING = re.compile(r"\bhow long (?:has|have)\b", re.I)
_LENGTH = re.compile(r"^(?:about\s+|around\s+|almost\s+|nearly\s+|over\s+)?(\d+|an?|one|two|three|four|five|six|"
                     r"seven|eight|nine|ten|eleven|twelve)\s+(year|month)s?$", re.I)


def since(span: str, when: date, question: str) -> str:
    """"How long has X ...?" answered "seven years" on a 2023 line: "seven years, since 2016" (the same
    length anchored to when it began; months: "since March 2023")."""
    m = _LENGTH.match(span.strip())
    if not m or not _ONGOING.search(question):
        return span
    n = int(m.group(1)) if m.group(1).isdigit() else SMALL_NUMBERS.get(m.group(1).lower(), 1 if m.group(1).lower()
                                                                             in ("a", "an") else 0)
    if not n:
        return span
    if m.group(2).lower() == "year":
        return f"{span}, since {when.year - n}"
    k = when.year * 12 + when.month - 1 - n
    return f"{span}, since {calendar.month_name[k % 12 + 1]} {k // 12}"


_YEARS_AGO = re.compile(r"^(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+years?\s+ago$",
                        re.I)


def years_ago(phrase: str, when: date) -> str | None:
    """"About a year ago" said in August 2023: "August 2022" — the month it was said, so many years back (a
    year alone would be coarser than what was said)."""
    m = _YEARS_AGO.match(phrase.strip())
    if not m:
        return None
    word = m.group(1).lower()
    n = int(word) if word.isdigit() else (1 if word in ("a", "an") else SMALL_NUMBERS.get(word))
    return f"{calendar.month_name[when.month]} {when.year - n}" if n else None
