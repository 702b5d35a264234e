"""Write the bundled trajectory of `campaigns/seed-findings/exia-defects-tools.toml` (EXIA E-1, E-4, E-5, E-9).

    python scripts/make_exia_defects_tools.py campaigns/seed-findings/exia-defects-tools

Three sessions of an ordinary chat between Ana, a Lisbon baker, and her assistant (2 March,
16 March, 6 April 2026). Nothing in it is written for a mechanism's keywords; each defect needs
only something people say:

- plans with a date ("Rita is getting married on June 6", "I'm seeing the dentist on March 10"):
  the consolidator files them as prospective facts with an event date and a deadline. Before
  the date they are future-dated (E-4: the read tool's neighbour trail and fallback return
  them); after it they are expired plans (E-5: the search tool returns them);
- short numeric answers to the assistant's questions ("About 120."): the rules consolidator
  proposes the line as a fact and the lexical checker rejects it (one content root, the seed
  needs two), so the line is journaled as integrated although nothing was kept (E-9);
- requests to keep something ("Please remember that Tomas is allergic to nuts", "Can you note
  that ..."): the
  offline host calls the note tool with the turn (adapter option `notes = "on-request"`), which
  a provider in a non-primary context admits (E-1).

Deterministic (no randomness); the files are committed, and `tests/core/test_seed_findings.py`
checks they are what this script writes.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

ANA = "Ana"
SESSIONS: tuple[tuple[str, datetime, tuple[str, ...]], ...] = (
    ("s01", datetime(2026, 3, 2, 8, 30, tzinfo=UTC), (
        "Morning! Writing from the bakery, the first tray of pastéis de nata is in the oven.",
        "Good morning, Ana! How is the week looking?",
        "Busy. My sister Rita called last night, she and Tomas finally picked a date.",
        "Oh, exciting! When is it?",
        "Rita is getting married on June 6 at the little chapel in Foz. She asked me to bake the cake.",
        "What an honour. How many guests will there be?",
        "About 120.",
        "That's a big cake! Have you settled on a flavour?",
        "Orange and almond, like our grandmother used to make.",
        "Lovely choice. Does anyone in the family have allergies?",
        "Good question! Please remember that Tomas is allergic to nuts, so the almonds are out.",
        "Noted. Anything else on your plate this week?",
        "I'm seeing the dentist on March 10 about the molar I cracked on a walnut.",
        "Ouch, I hope it's quick.",
        "And I will pick up the new deck oven from the supplier in Setúbal on March 12.",
        "Busy indeed. Does the venue need the cake order early?",
        "Yes, the cake order has to be confirmed with the venue by May 20.",
        "Big week! Good luck with everything.",
    )),
    ("s02", datetime(2026, 3, 16, 18, 10, tzinfo=UTC), (
        "Hi again. The dentist fixed the molar, it only took twenty minutes.",
        "Glad to hear it! How is the new oven?",
        "It's brilliant, I can fit twelve trays at once now.",
        "That must speed things up. How many loaves a day now?",
        "Roughly 400 on weekdays.",
        "Impressive.",
        "Rita came by on Saturday to taste the cake samples and she loved the orange one.",
        "Wonderful. Is everything set for the wedding then?",
        "Almost. Can you note that Tomas's parents are flying in from Recife on June 4?",
        "Of course.",
    )),
    ("s03", datetime(2026, 4, 6, 19, 0, tzinfo=UTC), (
        "Long time no talk! The Easter rush is over, we sold out of folares two days in a row.",
        "Congratulations! What's next?",
        "Rita wants a family tasting on April 18 before she signs off on the cake.",
        "How many people are coming to the tasting?",
        "About 15.",
        "That's a proper party.",
        "Please remember that the tasting is at my flat in Graça, not at the bakery.",
        "Got it. Enjoy the tasting!",
    )),
)
PROBES: tuple[tuple[str, str, str, str], ...] = (
    # (probe id, question, answer, turn that states it)
    ("wedding", "When is Ana's sister Rita getting married?", "June 6", "t0005"),
    ("guests", "How many guests are expected at Rita's wedding?", "About 120", "t0007"),
    ("dentist", "When is Ana's dentist appointment?", "March 10", "t0013"),
    ("oven", "Where does Ana pick up the new deck oven?", "Setúbal", "t0015"),
    ("allergy", "What is Tomas allergic to?", "nuts", "t0011"),
    ("confirm", "By when must the cake order be confirmed with the venue?", "May 20", "t0017"),
    ("parents", "Where are Tomas's parents flying in from?", "Recife", "t0027"),
    ("tasting", "Where is the family tasting for Rita's cake?", "at Ana's flat in Graça", "t0035"),
)


def build() -> tuple[list[dict], list[dict]]:
    turns: list[dict] = []
    for session, start, lines in SESSIONS:
        for k, text in enumerate(lines):
            user = k % 2 == 0
            turns.append({"turn_id": f"t{len(turns) + 1:04d}", "session_id": session,
                          "role": "user" if user else "assistant", **({"speaker": ANA} if user else {}),
                          "timestamp": (start + timedelta(minutes=2 * k)).isoformat(), "content": text})
    probes = [{"probe_id": pid, "question": q, "kind": "current", "category": "single-hop",
               "references": [{"answer": a, "valid_from": turn, "evidence": [turn]}]}
              for pid, q, a, turn in PROBES]
    return turns, probes


def write(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    turns, probes = build()
    for name, rows in (("trajectory.jsonl", turns), ("probes.jsonl", probes)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (directory / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "campaigns/seed-findings/exia-defects-tools"))
