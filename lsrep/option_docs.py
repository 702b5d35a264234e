"""An adapter's options as a table: name, type, default and the doc written beside the field.

The doc is the field's `description` when it has one, else the string literal
right after the field in the class body (an attribute docstring, the style the
bundled adapters use), read from the source of the model and its bases.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined


def attribute_docs(model: type) -> dict[str, str]:
    """Field name to the docstring that follows its assignment, for a class and its bases."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if cls in (object, BaseModel) or not isinstance(cls, type) or not issubclass(cls, BaseModel):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError):
            continue
        body = ast.parse(source).body
        if not body or not isinstance(body[0], ast.ClassDef):
            continue
        stmts = body[0].body
        for stmt, after in zip(stmts, stmts[1:], strict=False):
            if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[stmt.target.id] = " ".join(after.value.value.split())
    return docs


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def describe_options(model: type[BaseModel]) -> list[dict[str, Any]]:
    """One row per option: name, type, default (JSON-able; None when required), required, doc."""
    docs = attribute_docs(model)
    rows = []
    for name, info in model.model_fields.items():
        required = info.is_required()
        if required:
            default = None
        elif info.default_factory is not None:
            default = info.default_factory()
        else:
            default = info.default
        if isinstance(default, BaseModel):
            default = default.model_dump(mode="json")
        elif default is PydanticUndefined:
            default = None
        rows.append({"name": name, "type": _type_name(info.annotation), "default": _jsonable(default),
                     "required": required, "doc": info.description or docs.get(name, "")})
    return rows


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)
