"""A value said before and said again later is stale, not a leak; "left X and started at Y" is no hedge."""

from __future__ import annotations

import pytest

from lsrep.judge.agreement_set import load_items
from lsrep.judge.deterministic import judge_deterministic

ITEMS = {i.item_id: i for i in load_items() if i.item_id.startswith(("revisit-", "transition-"))}


def test_the_items_are_in_the_set():
    assert len([k for k in ITEMS if k.startswith("revisit-")]) == 6
    assert len([k for k in ITEMS if k.startswith("transition-")]) == 7


@pytest.mark.parametrize("item_id", sorted(ITEMS))
def test_judge_labels_each_item_as_people_do(item_id):
    item = ITEMS[item_id]
    assert judge_deterministic(item.case).outcome == item.label, (item.case.answer, item.label)
