"""A user's own properties: the Python modules a model file names in `[check] extra_properties`,
checked beside the built-in ones (docs/user-properties.md).

The contract of such a module: it defines `PROPERTIES`, a tuple of `Property` values made with
`always(...)` or `sometimes(...)` of `kafkarep.properties.base`, exactly as the built-in ones are
written; their names are new (not a built-in property's, not declared twice). It may import
kafkarep, the standard library and any installed package, not a module beside it: it is run
from the source the model carries.

A module is run once per process, from the source read with the model (`PropertyModule`), under
a module name of its own (`kafkarep_extra_<file stem>_<digest>`). So the properties are built in
the process that loads the model; a forked explorer worker inherits them, and a Spark executor
builds them from the model in its task: the file need not exist on the executors' machines.

A problem with a module is one line naming the file (`ModelError`, exit code 2): it does not
import (a syntax error, a missing import: with the line), it defines no `PROPERTIES`, a name
clashes. Each clause is wrapped so that one that raises, or answers something other than None or
a witness sentence, while a model is checked stops the run with one line naming the clause, the
module and the line (a `UsageError`: exit code 2), never a traceback. (A `UsageError`, not a
subclass: this module is compiled with mypyc, whose classes cannot extend an interpreted one.)
"""

from __future__ import annotations

import hashlib
import re
import sys
import traceback
import types
from collections.abc import Callable, Iterable
from typing import Any

from kafkarep.common.exit_codes import UsageError
from kafkarep.model.config import ModelError, PropertyModule
from kafkarep.properties import base
from kafkarep.properties.base import Clause, Property

KINDS = ("always", "sometimes")  # liveness properties are built in only
CONTRACT = "a tuple of Property values made with always(...) or sometimes(...)"
_BUILT: dict[tuple[PropertyModule, ...], tuple[Property, ...]] = {}  # by the modules named
_MODULES: dict[PropertyModule, tuple[Property, ...]] = {}  # by module: one build per process


def load(modules: tuple[PropertyModule, ...], reserved: Iterable[str]) -> tuple[Property, ...]:
    """The properties of the modules, in the order named; `reserved`: the built-in names. A
    problem is a `ModelError` naming the module."""
    if not modules:
        return ()
    if modules not in _BUILT:
        taken = {name: "a built-in property" for name in reserved}
        built: list[Property] = []
        for module in modules:
            if module not in _MODULES:
                _MODULES[module] = _build(module)
            for prop in _MODULES[module]:
                if prop.name in taken:
                    raise ModelError(
                        f"{module.path}: property {prop.name!r} has the name of "
                        f"{taken[prop.name]}: choose another"
                    )
                taken[prop.name] = f"a property of {module.path}"
                built.append(prop)
        _BUILT[modules] = tuple(built)
    return _BUILT[modules]


def _build(module: PropertyModule) -> tuple[Property, ...]:
    path = module.path
    try:
        code = compile(module.source, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        raise ModelError(f"{path}:{error.lineno}: SyntaxError: {error.msg}") from None
    except ValueError as error:  # a NUL byte in the source
        raise ModelError(f"{path}: cannot compile: {error}") from None
    digest = hashlib.sha256(module.source.encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.rsplit("/", 1)[-1].removesuffix(".py"))
    name = f"kafkarep_extra_{stem}_{digest}"
    namespace = types.ModuleType(name)
    namespace.__file__ = path
    sys.modules[name] = namespace  # what a dataclass or a pickle of the module looks up
    try:
        exec(code, namespace.__dict__)  # the user's module, run as an import would
    except Exception as error:
        del sys.modules[name]
        raise ModelError(f"{_at(path, error)}: {error.__class__.__name__}: {error}") from None
    if "PROPERTIES" not in namespace.__dict__:
        raise ModelError(f"{path}: defines no PROPERTIES ({CONTRACT})")
    declared = namespace.__dict__["PROPERTIES"]
    if not isinstance(declared, tuple | list):
        raise ModelError(f"{path}: PROPERTIES is {_kind(declared)}, not {CONTRACT}")
    if not declared:
        raise ModelError(f"{path}: PROPERTIES is empty ({CONTRACT})")
    names: set[str] = set()
    out = []
    for index, prop in enumerate(declared):
        _check(path, index, prop)
        if prop.name in names:
            raise ModelError(f"{path}: property {prop.name!r} is declared twice")
        names.add(prop.name)
        clauses = tuple(Clause(c.name, _guarded(prop, c, path)) for c in prop.clauses)
        out.append(prop._replace(clauses=clauses))
    return tuple(out)


def _check(path: str, index: int, prop: Any) -> None:
    """One entry of PROPERTIES keeps the contract."""
    where = f"{path}: PROPERTIES[{index}]"
    if not isinstance(prop, Property):
        raise ModelError(f"{where} is {_kind(prop)}, not a Property ({CONTRACT})")
    if not isinstance(prop.name, str) or not prop.name.isidentifier():
        raise ModelError(f"{where}: the name {prop.name!r} is not a Python identifier")
    if prop.kind in base.LIVENESS_KINDS:
        raise ModelError(
            f"{where}: {prop.name} is a liveness property ({prop.kind}); a module adds always "
            "and sometimes properties (the liveness properties are built in only)"
        )
    if prop.kind not in KINDS:
        raise ModelError(
            f"{where}: {prop.name} has the kind {prop.kind!r}, not always or sometimes"
        )
    if not isinstance(prop.doc, str) or not isinstance(prop.source, str):
        raise ModelError(f"{where}: {prop.name}'s doc and source must be text")
    if not prop.clauses or (prop.kind == "sometimes" and len(prop.clauses) != 1):
        raise ModelError(f"{where}: {prop.name} has no clause")
    for clause in prop.clauses:
        if not isinstance(clause, Clause) or not callable(clause.check):
            raise ModelError(f"{where}: {prop.name} has a clause that is not a function")
        if not isinstance(clause.name, str) or not clause.name.isidentifier():
            raise ModelError(f"{where}: {prop.name} has a clause named {clause.name!r}")


def _guarded(prop: Property, clause: Clause, path: str) -> Callable[..., Any]:
    """The clause, with what it raises or wrongly returns turned into a `UsageError`, and the
    marks it carries (`reads_controller`, `on_partition_change`, ...)."""
    check: Callable[..., Any] = clause.check
    name = prop.qualified(clause) if prop.kind == "always" else prop.name

    def always_clause(*args: Any) -> str | None:
        try:
            witness = check(*args)
        except Exception as error:
            raise UsageError(_raised(name, path, error)) from None
        if witness is None or isinstance(witness, str):
            return witness
        raise UsageError(
            f"{path}: clause {name} returned {_short(witness)}, not None (holds) or a witness "
            "sentence (str)"
        )

    def sometimes_step(*args: Any) -> bool:
        try:
            return bool(check(*args))
        except Exception as error:
            raise UsageError(_raised(name, path, error)) from None

    guarded: Callable[..., Any] = always_clause if prop.kind == "always" else sometimes_step
    if base.reads(check) == "controller":
        base.reads_controller(guarded)
    if base.needs_partition_change(check):
        base.on_partition_change(guarded)
    if base.reads_after(check):
        base.reads_after_only(guarded)
    holds = base.predicate_of(check)
    if holds is not None:  # `kafkarep prove` proves it (docs/user-properties.md)
        base.predicate(holds)(guarded)
    families = base.fires_on(check)
    if families is not None:
        base.only_on(*families)(guarded)
    return guarded


def _raised(name: str, path: str, error: Exception) -> str:
    return f"{_at(path, error)}: clause {name} raised {error.__class__.__name__}: {error}"


def _at(path: str, error: BaseException) -> str:
    """`path:line`, the module's last line in the error's traceback (`path` when none is)."""
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == path]
    return f"{path}:{lines[-1]}" if lines and lines[-1] is not None else path


def _kind(value: object) -> str:
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiouAEIOU' else 'a'} {name}"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
