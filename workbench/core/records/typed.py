"""Reading a dataclass back from the JSON object its ``to_dict`` wrote.

A record's ``to_dict`` may add values it derives (a speed-up, a total, a findings
paragraph) so that the file reads on its own; reading it back takes only the fields the
record is built from, and names the first one missing, so a torn or hand-edited file
fails in one sentence instead of building half a record.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from workbench.errors import WorkbenchError

T = TypeVar("T")


def init_fields(cls: type, data: object, **typed: Any) -> dict[str, Any]:
    """The values of ``cls``'s constructor fields in ``data``, with ``typed`` (the nested
    records, already read) in place of their raw JSON.

    Raises ValueError when ``data`` is not an object or lacks a field without a default.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"a {cls.__name__} record is not a JSON object: {data!r:.60}")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.name in typed:
            values[f.name] = typed[f.name]
        elif f.name in data:
            values[f.name] = data[f.name]
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ValueError(f"a {cls.__name__} record has no {f.name!r}")
    return values


def decode(cls: type[T], data: object, notes: list[str] | None = None, where: str = "") -> T | None:
    """The record ``cls`` (a dataclass) read from the JSON ``data`` its ``to_dict`` wrote,
    or None when ``data`` is not an object or a field without a default is missing or of
    the wrong type.

    The one decoder of the run's records: each field is checked against its annotation
    (``str``, ``int``, ``float``, ``bool``, ``Literal``, a nested record, ``list[...]``,
    ``dict[str, ...]``, ``X | None``, ``Any``). A field with a default that is missing or
    ill-typed takes its default; a list's ill-formed record is dropped; a key no field has
    is ignored. Each such decision is said in ``notes``.
    """
    label = where or cls.__name__
    said = notes if notes is not None else []
    if not isinstance(data, Mapping):
        said.append(f"{label}: not a JSON object ({data!r:.40}); read as missing")
        return None
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init:
            continue
        optional = f.default is not dataclasses.MISSING or (
            f.default_factory is not dataclasses.MISSING
        )
        if f.name not in data:
            if not optional:
                said.append(f"{label}: no {f.name!r}; the record is read as missing")
                return None
            continue
        fits, value = _convert(hints[f.name], data[f.name], said, f"{label}.{f.name}")
        if fits:
            values[f.name] = value
        elif optional:
            said.append(f"{label}.{f.name}: {data[f.name]!r:.40} is ill-typed; read as missing")
        else:
            said.append(
                f"{label}.{f.name}: {data[f.name]!r:.40} is ill-typed; the record is "
                "read as missing"
            )
            return None
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key in data:
        if key not in known:
            said.append(f"{label}: unknown key {key!r} ignored")
    try:
        return cls(**values)
    except (TypeError, ValueError, WorkbenchError) as err:  # a record's own check failed
        said.append(f"{label}: {err}; the record is read as missing")
        return None


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """``cls``'s field annotations, evaluated once (they are strings under PEP 563)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _convert(hint: Any, value: object, notes: list[str], where: str) -> tuple[bool, Any]:
    """(fits, the value as the field holds it) for one JSON value against one annotation."""
    if hint is Any or hint is object:
        return True, value
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return type(None) in args, None
        options = [arg for arg in args if arg is not type(None)]
        if len(options) == 1:  # X | None: what X's reading says is said
            return _convert(options[0], value, notes, where)
        for arg in options:
            fits, _ = _convert(arg, value, [], where)
            if fits:
                return _convert(arg, value, notes, where)
        return False, None
    if origin is Literal:
        return value in args, value
    if origin is list:
        if not isinstance(value, list):
            return False, None
        (item,) = args or (Any,)
        out = []
        for i, element in enumerate(value):
            fits, converted = _convert(item, element, notes, f"{where}[{i}]")
            if fits:
                out.append(converted)
            elif dataclasses.is_dataclass(item):
                notes.append(f"{where}[{i}]: an ill-formed record dropped")
            else:
                return False, None
        return True, out
    if origin is dict:
        if not isinstance(value, dict):
            return False, None
        _, item = args or (str, Any)
        out_map = {}
        for key, element in value.items():
            fits, converted = _convert(item, element, notes, f"{where}[{key!r}]")
            if not fits:
                return False, None
            out_map[str(key)] = converted
        return True, out_map
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        record = decode(hint, value, notes, where)
        return record is not None, record
    if hint is bool:
        return isinstance(value, bool), value
    if isinstance(value, bool):  # JSON's true is no number and no text
        return False, None
    if hint is float:
        return isinstance(value, int | float), value
    if hint is int:
        return isinstance(value, int), value
    if hint is str:
        return isinstance(value, str), value
    raise TypeError(f"{where}: no reading of a field annotated {hint!r}")


def record_of(cls: type[T], data: Mapping[str, Any]) -> T:
    """The record ``cls`` built from a writer's own dict: every key must be a field and
    every value fit, since a writer that gets its record wrong is a bug, not a torn file."""
    notes: list[str] = []
    record = decode(cls, data, notes)
    if record is None or notes:
        raise ValueError("; ".join(notes) or f"not a {cls.__name__}")
    return record
