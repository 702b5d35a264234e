"""Every same-system comparison a bundled campaign declares varies exactly one factor.

A comparison between two conditions of one system is read as the effect of what differs between
them; when they differ in more than one option (or in options and schedule), the difference has
no single cause. Factors: each option key, the disabled-mechanism set, the schedule, the answer
mode and the context format.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

CAMPAIGNS = Path(__file__).resolve().parents[2] / "campaigns"


def factors(cond: dict) -> dict[str, object]:
    out: dict[str, object] = {f"option {k}": v for k, v in (cond.get("options") or {}).items()}
    out["disable"] = tuple(sorted(cond.get("disable") or ()))
    for key in ("schedule", "answer_mode", "context_format"):
        out[key] = cond.get(key)
    return out


def differing(a: dict, b: dict) -> list[str]:
    fa, fb = factors(a), factors(b)
    return sorted(k for k in fa.keys() | fb.keys() if fa.get(k) != fb.get(k))


def same_system_pairs(path: Path) -> list[tuple[str, str, list[str]]]:
    data = tomllib.loads(path.read_text())
    by_name = {c["name"]: c for c in data.get("conditions", [])}
    out = []
    for a, b in data.get("compare", []):
        if by_name[a]["system"] == by_name[b]["system"]:
            out.append((a, b, differing(by_name[a], by_name[b])))
    return out


@pytest.mark.parametrize("path", sorted([*CAMPAIGNS.glob("*.toml"), *CAMPAIGNS.glob("seed-findings/*.toml")]),
                         ids=lambda p: p.name)
def test_same_system_comparisons_vary_one_factor(path):
    for a, b, diff in same_system_pairs(path):
        assert len(diff) == 1, f"{path.name}: {a} vs {b} differ in {diff}"


def test_the_exia_campaign_compares_each_factor_against_the_seed():
    pairs = same_system_pairs(CAMPAIGNS / "exia.toml")
    assert {tuple(diff) for _, _, diff in pairs} == {
        ("option phase",), ("option tools",), ("option auto_consolidate",), ("option consolidator",)}


def test_a_confounded_comparison_is_caught(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('''name = "x"
compare = [["a", "b"]]
[[conditions]]
name = "a"
system = "exia-seed"
[[conditions]]
name = "b"
system = "exia-seed"
options = { phase = 2, tools = "off" }
''')
    assert same_system_pairs(bad) == [("a", "b", ["option phase", "option tools"])]
