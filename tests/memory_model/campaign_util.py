"""A quickstart-journal campaign with one gateway-using condition, written into a temp folder."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ADAPTER = "tests.memory_model.gateway_adapters:GatewayClientAdapter"


def write_campaign(tmp: Path, tables: str, *, host: str = "process", options: str = "{}",
                   extra_conditions: str = "") -> Path:
    """The campaign file: the quickstart trajectory, condition `gw`, then `tables` (TOML) verbatim."""
    dest = tmp / "campaigns"
    if not (dest / "quickstart").exists():
        shutil.copytree(REPO / "campaigns" / "quickstart", dest / "quickstart")
        shutil.copytree(REPO / "schedules", tmp / "schedules")
    head = (REPO / "campaigns" / "quickstart.toml").read_text().split("[[conditions]]")[0]
    text = f'adapter_host = "{host}"\n{head}[[conditions]]\nname = "gw"\nsystem = "{ADAPTER}"\n' \
           f'options = {options}\n{extra_conditions}\n{tables}\n'
    path = dest / "gateway.toml"
    path.write_text(text)
    return path
