"""`json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)`, the same text, faster.

The state files (`etat/progress.json` above all: rewritten at every turn, it lists every closed
batch and every integrated line) are written in this form. The standard library writes indented
JSON in pure Python, one generator step per token, so rewriting the whole journal at every turn
cost more than everything else a turn does. Here each container is one `join`, and a container of
plain strings and integers already written at the same depth (a closed batch, a batch's
integrated lines: they never change once written) is looked up instead of written again.

Only containers of strings, integers and None are kept (with their values' exact types in the
key), so equal values that write differently (0.0 and -0.0) never share an entry.
`tests/systems/exia_seed/test_exia_jsonfast.py` compares the text with `json.dumps` on random
nested data (every scalar type, unicode, non-string keys, empty containers) and on repeats.
"""

from __future__ import annotations

import json
import json.encoder
from typing import Any

_escape = json.encoder.encode_basestring  # the C version where available, as json.dumps uses
_INF = float("inf")
_PLAIN = (str, int, type(None))
"""Exact types a memoised container may hold: equal values of these always write the same text
(unlike 0.0 and -0.0, or 1, 1.0 and True, which are equal keys but different JSON)."""
_memo: dict[tuple, str] = {}
MEMO_LIMIT = 100_000


def _get(key: tuple) -> str | None:
    try:
        return _memo.get(key)
    except TypeError:  # a container holding containers: never kept
        return None


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


def _key(k: Any) -> str:
    if isinstance(k, str):
        return _escape(k)
    if isinstance(k, float):
        return _escape(_float(k))
    if k is True:
        return '"true"'
    if k is False:
        return '"false"'
    if k is None:
        return '"null"'
    if isinstance(k, int):
        return _escape(int.__repr__(k))
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def _encode(o: Any, level: int) -> str:
    if isinstance(o, str):
        return _escape(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    if isinstance(o, (list, tuple)):
        if not o:
            return "[]"
        # The values' exact types are part of the key: 1, 1.0 and True are equal, their texts not.
        mkey = (level, "[", *o, *map(type, o))
        hit = _get(mkey)
        if hit is not None:
            return hit
        plain = all(type(v) in _PLAIN for v in o)
        inner = "\n" + " " * (level + 1)
        text = f"[{inner}{(',' + inner).join([_encode(v, level + 1) for v in o])}\n{' ' * level}]"
    elif isinstance(o, dict):
        if not o:
            return "{}"
        mkey = (level, "{", *o.items(), *map(type, o), *map(type, o.values()))
        hit = _get(mkey)
        if hit is not None:
            return hit
        items = sorted(o.items())
        plain = all(type(k) is str and type(v) in _PLAIN for k, v in items)
        inner = "\n" + " " * (level + 1)
        text = f"{{{inner}{(',' + inner).join([f'{_key(k)}: {_encode(v, level + 1)}' for k, v in items])}\n{' ' * level}}}"
    else:
        raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")
    if plain:
        if len(_memo) >= MEMO_LIMIT:
            _memo.clear()
        _memo[mkey] = text
    return text


def dumps(data: Any) -> str:
    """`json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)` (data without cycles)."""
    return _encode(data, 0)


class IncrementalDumps:
    """`dumps(data)` for a dict written again and again (the progress journal at every turn),
    encoding again only what changed since the last call.

    Per top-level value it keeps a copy of what it wrote and the text: a value equal to its copy
    (by `==`, same type) reuses the text. A changed list or dict is compared item by item (list
    position, dict key) with the copies of its items, so a batch appended to the closed batches,
    or one batch's lines marked integrated, encodes that item only.

    The one way equal values write differently is equal scalars inside a container (`1`, `1.0`
    and `True`; `0.0` and `-0.0`): the state files hold strings, integers, None, lists and dicts
    only. `tests/systems/exia_seed/test_exia_progress_journal.py` compares the text with
    `json.dumps` along random sequences of changes, made in place and by replacement.
    """

    def __init__(self) -> None:
        self._last: dict[str, tuple[Any, str, Any]] = {}
        """Top-level key → (copy of the value, its text, its items' (copy, text) by position or key)."""

    def dumps(self, data: Any) -> str:
        if type(data) is not dict or not data or any(type(k) is not str for k in data):
            self._last = {}
            return dumps(data)
        parts: list[str] = []
        last: dict[str, tuple[Any, str, Any]] = {}
        for key in sorted(data):
            value = data[key]
            hit = self._last.get(key)
            if hit is None or type(hit[0]) is not type(value) or hit[0] != value:
                hit = _entry(value, hit)
            last[key] = hit
            parts.append(f"{_escape(key)}: {hit[1]}")
        self._last = last
        return "{\n " + ",\n ".join(parts) + "\n}"

    def unchanged(self, data: Any) -> bool:
        """Whether `data` equals what the last `dumps` wrote (same keys, equal values)."""
        return (type(data) is dict and data.keys() == self._last.keys()
                and all(type(v) is type(self._last[k][0]) and v == self._last[k][0] for k, v in data.items()))


def _item(value: Any, old: tuple[Any, str] | None) -> tuple[Any, str]:
    if old is not None and type(old[0]) is type(value) and old[0] == value:
        return old
    return _copy(value), _encode(value, 2)


def _entry(value: Any, old: tuple[Any, str, Any] | None) -> tuple[Any, str, Any]:
    """(copy, text at depth 1, items) of a top-level value, reusing `old`'s items that are unchanged."""
    if type(value) is list and value:
        before = old[2] if old is not None and type(old[2]) is list else []
        items = [_item(v, before[i] if i < len(before) else None) for i, v in enumerate(value)]
        text = "[\n  " + ",\n  ".join([t for _c, t in items]) + "\n ]"
        return [c for c, _t in items], text, items
    if type(value) is dict and value and all(type(k) is str for k in value):
        before = old[2] if old is not None and type(old[2]) is dict else {}
        items = {k: _item(value[k], before.get(k)) for k in sorted(value)}
        text = "{\n  " + ",\n  ".join([f"{_escape(k)}: {t}" for k, (_c, t) in items.items()]) + "\n }"
        return {k: c for k, (c, _t) in items.items()}, text, items
    return _copy(value), _encode(value, 1), None


def _copy(value: Any) -> Any:
    """A copy of JSON-like data: containers copied, their (immutable) strings and numbers shared,
    so comparing the copy with the data meets the same objects and stops at identity. A tuple
    comes back a list, which only makes the next comparison fail and the value be encoded again;
    other types are not JSON (encoding them raises)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value
