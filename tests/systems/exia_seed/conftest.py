"""Fixtures for the EXIA SEED tests (helpers live in exia_testkit.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from exia_testkit import Rig, ScriptedModel
from lsrep.systems.exia_seed import ExiaSeedProvider, Fixes, Settings, StageEvent


@pytest.fixture
def rig(tmp_path: Path) -> Callable[..., Rig]:
    """Factory: `rig(context="primary", scripted=True, fault_hook=None, **settings, fix={...})`."""

    def make(*, context: str | None = "primary", scripted: bool = False, fault_hook=None,
             fix: dict[str, bool] | None = None, **settings: Any) -> Rig:
        home = tmp_path / f"home-{len(list(tmp_path.iterdir()))}"
        model = ScriptedModel() if scripted else None
        events: list[StageEvent] = []
        config = replace(Settings(**settings), fix=Fixes(**(fix or {})))
        provider = ExiaSeedProvider(config, complete=model.complete if model else None,
                                    on_event=events.append, fault_hook=fault_hook)
        provider.initialize("s1", hermes_home=home, platform="test", agent_context=context)
        return Rig(provider, home, events, model)

    return make
