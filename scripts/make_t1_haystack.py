"""Write the bundled T-1 haystack (seed-systems T-1, THALIA's Inspector recall bottleneck).

    python scripts/make_t1_haystack.py campaigns/seed-findings/t1-haystack

1,500 short filler turns in 10 sessions. Five facts each share ONE rare word with their question
("passphrase", "pincode", ...); 40 long distractor turns share TWO common question words ("cabin
router"). Full-haystack BM25 ranks each short fact first (rare word, short line); an Inspector that
ranks windows by query-word overlap keeps the distractor blocks and drops the facts before
anything is ranked. The output is deterministic (seed 3); the files are committed, and
`tests/core/test_seed_findings.py` checks they are what this script writes.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

FILLER = ("garden budget museum recipe guitar marathon invoice puppy kitchen novel laptop concert dentist "
          "cousin painting hiking coffee bakery lecture tennis camera violin holiday bicycle apartment "
          "festival river market sandwich pottery").split()
FACTS = (("passphrase", "bluefish42", 300), ("pincode", "orchid7731", 620), ("lockword", "tangerine9", 900),
         ("keyphrase", "marble315", 1100), ("codeword", "falcon808", 1380))
N, SESSIONS, DISTRACTORS = 1500, 10, 40
START = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)


def build() -> tuple[list[dict], list[dict]]:
    rng = random.Random(3)
    texts = [" ".join(rng.choice(FILLER) for _ in range(rng.randint(6, 12))) for _ in range(N)]
    step = N // DISTRACTORS
    for k in range(DISTRACTORS):
        left = " ".join(rng.choice(FILLER) for _ in range(25))
        right = " ".join(rng.choice(FILLER) for _ in range(25))
        texts[k * step + 3] = f"{left} cabin router {right}"
    for word, answer, at in FACTS:
        texts[at] = f"the {word} is {answer}"
    per = N // SESSIONS
    turns = []
    for i, text in enumerate(texts):
        session = i // per
        when = START + timedelta(days=2 * session, minutes=i % per)
        turns.append({"turn_id": f"h{i:04d}", "session_id": f"s{session + 1:02d}", "timestamp": when.isoformat(),
                      "role": "user", "speaker": "Sam", "content": text})
    probes = [{"probe_id": f"t1-{word}", "question": f"What is the {word} for the cabin router?", "kind": "current",
               "category": "single-hop", "before_first": "abstain",
               "references": [{"answer": answer, "valid_from": f"h{at:04d}", "evidence": [f"h{at:04d}"]}]}
              for word, answer, at in FACTS]
    return turns, probes


def write(out: Path) -> None:
    turns, probes = build()
    out.mkdir(parents=True, exist_ok=True)
    (out / "trajectory.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    (out / "probes.jsonl").write_text("".join(json.dumps(p) + "\n" for p in probes))


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "campaigns/seed-findings/t1-haystack"))
