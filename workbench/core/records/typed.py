"""Reading a dataclass back from the JSON object its ``to_dict`` wrote.

A record's ``to_dict`` may add values it derives (a speed-up, a total, a findings
paragraph) so that the file reads on its own; reading it back takes only the fields the
record is built from, and names the first one missing, so a torn or hand-edited file
fails in one sentence instead of building half a record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


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
