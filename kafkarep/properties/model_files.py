"""Model files, read and checked. `model/config.py` parses one into a `ModelConfig`; here the
names it gives are checked against what defines them: the guards it switches off (`[rules]
disable_guards`) against the rules' and the model's (`model/guard_catalogue.py`), the properties
it checks and expects (`[check] properties`, `[expect] violates` and `reached`) against the
properties', the model's own among them (`[check] extra_properties`, built here first: a bad
module is one line naming it). Every engine and command loads a model through `load_model`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafkarep import properties
from kafkarep.model import config
from kafkarep.model.actions import FAMILIES
from kafkarep.model.config import ModelConfig, ModelError
from kafkarep.model.guard_catalogue import all_guards
from kafkarep.properties.base import Property
from kafkarep.rules.guards import REFUSED


def load_model(path: str | Path) -> ModelConfig:
    """A model file, parsed and checked; a problem is a `ModelError` naming the file."""
    cfg = config.load_model(path)
    try:
        check_names(cfg)
    except ModelError as error:
        raise ModelError(f"{path}: {error}") from None
    return cfg


def parse_model(raw: dict[str, Any], path: str = "<model>") -> ModelConfig:
    """A model file's parsed TOML, parsed and checked."""
    cfg = config.parse_model(raw, path)
    check_names(cfg)
    return cfg


def check_names(cfg: ModelConfig) -> None:
    known_guards = all_guards()
    for name in sorted(cfg.options.disabled_guards):
        key = "refuse_guards" if name.startswith(REFUSED) else "disable_guards"
        if name.removeprefix(REFUSED) not in known_guards:
            raise ModelError(
                f"[rules] {key} names an unknown guard {name.removeprefix(REFUSED)!r}; "
                "`kafkarep check --list-guards` lists them"
            )
    known_families = {family.name for family in FAMILIES}
    for name in cfg.check.unfair:
        if name not in known_families:
            raise ModelError(
                f"[check] unfair names an unknown action family {name!r}; "
                f"known: {', '.join(sorted(known_families))}"
            )
    own = properties.extra_of(cfg)
    _known_properties(cfg.check.properties or (), "[check] properties", own)
    _known_properties((name for name, _ in cfg.expect.violates), "[expect] violates", own)
    _known_properties(cfg.expect.reached, "[expect] reached", own)
    bound = cfg.expect.within_depth
    live = [p.name for p in properties.of_model(cfg) if p.liveness]
    if bound is not None and live:
        raise ModelError(
            f"[expect] within_depth = {bound} cannot settle liveness, which needs every state; "
            f"the model checks {', '.join(live)}: drop the bound or [check] liveness/properties"
        )


def _known_properties(names: Iterable[str], where: str, own: tuple[Property, ...]) -> None:
    known = properties.clause_names(own)
    for name in names:
        if name not in known:
            raise ModelError(
                f"{where} names an unknown property {name!r}; known: {', '.join(sorted(known))}"
            )
