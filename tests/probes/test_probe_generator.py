"""The seeded generator: same seed, same bytes; every probe kind; valid at every size."""

from __future__ import annotations

import itertools

import pytest
from lsrep.probes.generator import (
    NEVER_MENTIONED,
    GeneratorSpec,
    generate_trajectories,
    generate_trajectory,
    write_generated,
)

from lsrep.protocol.loading import load_probes, load_trajectory
from lsrep.text import estimate_tokens


def by_id(generated):
    return {p.probe_id.split(":", 1)[1]: p for p in generated.probes}


def test_same_seed_gives_identical_bytes_and_another_seed_does_not(tmp_path):
    spec = GeneratorSpec(seed=11, sessions=8, turns_per_session=6)
    write_generated(tmp_path / "a", spec)
    write_generated(tmp_path / "b", spec)
    write_generated(tmp_path / "c", spec.model_copy(update={"seed": 12}))
    for name in ("synthetic.trajectory.jsonl", "synthetic.probes.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "synthetic.trajectory.jsonl").read_bytes() != (
        tmp_path / "c" / "synthetic.trajectory.jsonl"
    ).read_bytes()


def test_every_probe_kind_and_storyline_is_produced():
    generated = generate_trajectory(GeneratorSpec(seed=5, sessions=12))
    assert generated.omitted == ()
    probes = by_id(generated)
    assert {p.kind for p in generated.probes} == {"current", "historical", "evolution", "abstention"}
    assert {p.probe_id for p in generated.probes if p.before_first == "abstain"} == {
        "synthetic:pet-name", "synthetic:class-current",
    }
    p = generated.persona
    # A move and a move back: a reversal to an earlier answer.
    assert [v.answer for v in probes["city-current"].references] == [p["city_a"], p["city_b"], p["city_a"]]
    assert probes["city-history"].references == probes["city-current"].references
    assert probes["city-before-move"].kind == "historical"
    # A corrected date.
    assert [v.answer for v in probes["wedding-date"].references] == [p["date_1"], p["date_2"]]
    assert sum(1 for q in generated.probes if q.category == "never-mentioned") == 3


def test_announced_changes_become_true_only_when_they_happen():
    generated = generate_trajectory(GeneratorSpec(seed=5, sessions=12))
    index = {t.turn_id: i for i, t in enumerate(generated.turns)}
    content = {t.turn_id: t.content for t in generated.turns}
    probes = by_id(generated)
    for probe_name, answer in (("city-current", generated.persona["city_b"]),
                               ("class-current", generated.persona["class"])):
        version = next(v for v in probes[probe_name].references if v.answer == answer)
        announce = version.evidence[0]
        assert index[announce] < index[version.valid_from]
        assert "next month" in content[announce] and answer in content[announce]
        assert generated.turns[index[announce]].session_id != generated.turns[index[version.valid_from]].session_id


def test_never_mentioned_facts_are_never_stated_and_distractors_share_answer_words():
    for seed in range(5):
        generated = generate_trajectory(GeneratorSpec(seed=seed, sessions=10, distractor_rate=0.5))
        text = " ".join(t.content.lower() for t in generated.turns)
        for subject, _ in NEVER_MENTIONED:
            assert f"my {subject}" not in text
        evidence = {e for p in generated.probes for v in p.references for e in (v.valid_from, *v.evidence)}
        answers = {v.answer for p in generated.probes for v in p.references}
        distracting = [t for t in generated.turns if t.turn_id not in evidence
                       and any(a in t.content for a in answers)]
        assert distracting, f"seed {seed}: no distractor reuses an answer"


def test_density_knob_sets_turn_length_with_varied_filler():
    short = generate_trajectory(GeneratorSpec(seed=2, turn_tokens=20))
    long = generate_trajectory(GeneratorSpec(seed=2, turn_tokens=200))
    assert all(estimate_tokens(t.content) >= 20 for t in short.turns)
    assert all(estimate_tokens(t.content) >= 200 for t in long.turns)
    words = [w for t in long.turns for w in t.content.split()]
    assert len(set(words)) > 300
    assert len({t.content for t in long.turns}) == len(long.turns)


@pytest.mark.parametrize(("sessions", "turns"), list(itertools.product([1, 2, 3, 6, 15], [1, 2, 5, 12])))
def test_any_shape_gives_valid_loadable_files(tmp_path, sessions, turns):
    spec = GeneratorSpec(seed=sessions * 100 + turns, sessions=sessions, turns_per_session=turns)
    (generated,) = write_generated(tmp_path, spec)
    trajectory = load_trajectory(tmp_path / "synthetic.trajectory.jsonl")
    assert len(trajectory.turns) == sessions * turns
    assert len({t.session_id for t in trajectory.turns}) == sessions
    assert load_probes(tmp_path / "synthetic.probes.jsonl", trajectory).probes == generated.probes
    placed = {p.probe_id.split(":")[1].split("-")[0] for p in generated.probes}
    assert not placed & {name.split(":")[0] for name in generated.omitted if ":" not in name}
    if sessions == 1:
        assert "city" in generated.omitted  # a move needs a later session


def test_several_personas_get_their_own_ids_and_values():
    made = generate_trajectories(GeneratorSpec(seed=1, sessions=4), 3)
    assert [g.trajectory_id for g in made] == ["synthetic-000", "synthetic-001", "synthetic-002"]
    assert len({tuple(sorted(g.persona.items())) for g in made}) == 3
    assert all(p.probe_id.startswith(g.trajectory_id + ":") for g in made for p in g.probes)
