"""Reading a dataclass back from the JSON object its ``to_dict`` wrote.

A record's ``to_dict`` may add values it derives (a speed-up, a total, a findings
paragraph) so that the file reads on its own; the record names them in ``WRITTEN_ONLY``
(a class variable), and reading it back takes only the fields it is built from. A field
whose file holds another form than the field does (a 1-based index, an array as nested
lists) says how to read it (:func:`read_with`). The first field missing is named, so a
torn or hand-edited file fails in one sentence instead of building half a record.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

from workbench.errors import WorkbenchError

T = TypeVar("T")

#: The key of a field's metadata that :func:`read_with` sets.
_READ_WITH = "workbench.read_with"


def read_with(read: Callable[[Any], Any]) -> dict[str, Any]:
    """A field's metadata (``field(metadata=read_with(...))``) saying how :func:`decode`
    reads its JSON value: ``read`` returns the field's value, or raises ValueError or
    TypeError when the value does not fit (the field is then ill-typed)."""
    return {_READ_WITH: read}


def from_one_based(value: object) -> int:
    """A layer or head as the CLI prints it and a file keeps it (from 1), read as the
    index a field holds (from 0)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{value!r} is not a number from 1")
    return value - 1


def decode(cls: type[T], data: object, notes: list[str] | None = None, where: str = "") -> T | None:
    """The record ``cls`` (a dataclass) read from the JSON ``data`` its ``to_dict`` wrote,
    or None when ``data`` is not an object or a field without a default is missing or of
    the wrong type.

    The one decoder of the run's records: each field is checked against its annotation
    (``str``, ``int``, ``float``, ``bool``, ``Literal``, a nested record, ``list[...]``,
    ``dict[str, ...]``, ``X | None``, ``Any``). A field with a default that is missing or
    ill-typed takes its default; a list's ill-formed record is dropped; a key no field has
    is ignored, but for the values the record writes and derives (its ``WRITTEN_ONLY``).
    Each such decision is said in ``notes``.
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
        read = f.metadata.get(_READ_WITH)
        if read is not None:
            fits, value = _read(read, data[f.name])
        else:
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
    known.update(getattr(cls, "WRITTEN_ONLY", ()))
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


def _read(read: Callable[[Any], Any], value: object) -> tuple[bool, Any]:
    """(fits, the value as the field holds it) for a field read with its own reader."""
    try:
        return True, read(value)
    except (ValueError, TypeError):
        return False, None


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
