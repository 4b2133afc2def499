"""A disagreement between the encoding and the rules, and how it is shown: the step, the first
field that differs, and where the encoding and the rules write it."""

from __future__ import annotations

from typing import Any, NamedTuple

from kafkarep.model.actions import BY_NAME, Action
from kafkarep.model.state import ClusterState
from kafkarep.symbolic.state import SORTS


class Disagreement(NamedTuple):
    state: ClusterState
    action: Action | None
    problem: str
    # the encoding function to update ("kafkarep/symbolic/transition/data.py: fetch")
    where: str = ""


def step(action: Action | None) -> str:
    """An action as a trace shows it: 'broker 2 fetch', 'controller fence(3)'."""
    if action is None:
        return "the state itself"
    return f"{action.actor_name()} {action.describe()}"


def source(function: Any) -> str:
    """Where a guard, update or clause is written: 'kafkarep/symbolic/transition/data.py: fetch'."""
    code = getattr(function, "__code__", None)
    if code is None:
        return repr(function)
    path = code.co_filename.replace("\\", "/")
    package = path.rfind("kafkarep/")
    where = path[package:] if package >= 0 else path
    return f"{where}: {code.co_qualname.split('.<locals>')[0]}"


# Fields of the symbolic state that are sequences by broker id (element k is broker k + 1) or
# by partition epoch (element k is the record of epoch k + 1).
_BY_BROKER = {"brokers", "registry", "ap_requests", "followers", "member_epochs", "received"}


def difference(have: object, want: object, path: str = "", spec: object = None) -> str:
    """The first field where two projections differ ('brokers[1].replica.hwm: symbolic 0,
    concrete 1'); broker sets are shown as sets."""
    if isinstance(have, tuple) and isinstance(want, tuple) and len(have) == len(want):
        names = getattr(have, "_fields", None)
        specs = SORTS.get(type(have), ())
        for k, (a, b) in enumerate(zip(have, want, strict=True)):
            if a != b:
                if names:
                    where = f"{path}.{names[k]}" if path else names[k]
                    inner = specs[k] if k < len(specs) else None
                else:
                    field = path.rsplit(".", 1)[-1]
                    by_id = field in _BY_BROKER or field == "metadata_log"
                    where = f"{path}[{k + 1}]" if by_id else f"{path}[{k}]"
                    inner = spec[1] if isinstance(spec, tuple) and spec[0] == "vec" else None
                return difference(a, b, where, inner)
    return f"{path or 'state'}: symbolic {_shown(have, spec)}, concrete {_shown(want, spec)}"


def _shown(value: object, spec: object) -> str:
    if spec == "s" and isinstance(value, int) and not isinstance(value, bool):
        members = [b for b in range(-1, value.bit_length()) if b != 0 and value >> max(b, 0) & 1]
        return "{" + ",".join(map(str, members)) + "}"
    return repr(value)


def concrete_source(action: Action) -> str:
    """Where the concrete model applies an action of this family."""
    family = BY_NAME.get(action.name)
    return source(family.apply) if family is not None else action.name
