"""A faster `_replace` for the NamedTuples states are made of.

`collections.namedtuple._replace` maps over every field; this one copies the tuple and sets only
the changed positions, which matters when the explorer builds millions of successor states.
Same behaviour, including the error on an unknown field name.
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def fast_replace(cls: type[T]) -> type[T]:
    fields: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
    index = {name: position for position, name in enumerate(fields)}
    new = tuple.__new__

    def _replace(self: Any, **changes: Any) -> Any:
        values = list(self)
        for name, value in changes.items():
            position = index.get(name)
            if position is None:
                raise ValueError(f"Got unexpected field names: {[name]!r}")
            values[position] = value
        return new(cls, values)  # type: ignore[type-var]

    cls._replace = _replace  # type: ignore[attr-defined]
    return cls
