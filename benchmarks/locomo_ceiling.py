"""Answerer-and-judge ceiling on LoCoMo: context = exactly each question's gold evidence turns.

    .venv/bin/python benchmarks/locomo_ceiling.py [PATH] [--conversations conv-26 conv-30] [--misses N]

Prints answerable accuracy overall and per LoCoMo category (lsrep.answer.ceiling).
"""

from __future__ import annotations

import argparse

from lsrep.probes.locomo import build_locomo

from lsrep.answer.ceiling import evidence_ceiling


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="../shared/datasets/locomo/locomo-dev7.json")
    parser.add_argument("--conversations", nargs="*", default=None)
    parser.add_argument("--misses", type=int, default=0, help="print this many misses")
    args = parser.parse_args()
    conversations = build_locomo(args.path, args.conversations)
    result = evidence_ceiling(conversations)
    print(f"conversations: {', '.join(c.sample_id for c in conversations)}")
    print(f"answerable accuracy {result.accuracy:.3f} ({result.correct}/{result.n})")
    for c in result.per_category:
        print(f"  {c.category:<12} {c.accuracy:.3f} ({c.correct}/{c.n})")
    for miss in result.misses[:args.misses]:
        print(f"- [{miss['category']}] {miss['question']} | ref {miss['reference']!r} | "
              f"answer {miss['answer']!r} -> {miss['outcome']}")


if __name__ == "__main__":
    main()
