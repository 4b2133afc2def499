"""A faster `_replace` for the NamedTuples states are made of.

`collections.namedtuple._replace` builds a dict and maps over every field; the explorer calls
`_replace` millions of times while it builds successor states. This one is generated per class
with keyword-only parameters, so the interpreter binds the changed fields and the new tuple is
built in one expression. Same result; an unknown field name is a TypeError, as for any function.
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


class _Unchanged:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unchanged>"


UNCHANGED: Any = _Unchanged()


def fast_replace(cls: type[T]) -> type[T]:
    fields: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
    parameters = ", ".join(f"{name}=_u" for name in fields)
    values = ", ".join(f"self[{i}] if {name} is _u else {name}" for i, name in enumerate(fields))
    source = f"def _replace(self, *, {parameters}):\n    return _new(_cls, ({values},))\n"
    namespace: dict[str, Any] = {"_u": UNCHANGED, "_new": tuple.__new__, "_cls": cls}
    exec(source, namespace)  # generated from the class's own field names only
    cls._replace = namespace["_replace"]  # type: ignore[attr-defined]
    return cls
