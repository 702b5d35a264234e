"""Helpers for CLI tests: run `lsrep` in-process through main(argv) and capture its output."""

from __future__ import annotations

import pytest

from lsrep.cli import main


@pytest.fixture
def cli(capsys):
    """cli(*argv) -> (exit status, stdout, stderr)."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = main([str(a) for a in argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def add_condition(campaign, block: str) -> None:
    campaign.write_text(campaign.read_text().replace("[answerer]", block + "\n[answerer]"))


DECAY_SCHEDULE = '''
[schedule]
name = "with-decay"
[schedule.checkpoints]
at = ["session_end"]
[[schedule.maintenance]]
operation = "decay"
at = "session_end"'''


def with_decay(campaign) -> None:
    """Replace the campaign's schedule file by an inline one with decay at every session end."""
    text = campaign.read_text().replace('schedule = "../schedules/session-end.toml"', DECAY_SCHEDULE)
    head, _, rest = text.partition("\n[[trajectories]]")
    campaign.write_text(head + "\n[[trajectories]]" + rest)
