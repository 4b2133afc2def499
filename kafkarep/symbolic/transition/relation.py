"""The transition relation of a model: the instances of its active families."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

from kafkarep.model import state as concrete
from kafkarep.model.actions import Action
from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import AbstractionError, Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState, PartitionRegistration
from kafkarep.symbolic.transition import admin, alter_partition, data, lifecycle, metadata
from kafkarep.symbolic.transition.instance import Build, Instance


class Relation:
    """The instances of a model's active families, in the concrete families' order."""

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        instances: list[Instance] = []
        for family in enc.families:
            build = BUILDERS.get(family.name)
            if build is None:
                if family.name.startswith("plan_") and enc.cfg.setting("plan", "target") is None:
                    continue  # a KIP-435 plan's steps: only a model with a [plan] has any
                raise AbstractionError(f"the symbolic engine has no encoding of {family.name!r}")
            instances.extend(build(enc))
        # Drop the instances no state of this model enables (their guard folds to false on a
        # symbolic state: a fault without budget, a status nobody reaches).
        probe = enc.fresh("probe")
        self.instances = tuple(i for i in instances if possible(enc, i, probe))

    # --- for the agreement test and for decoding ---------------------------------------------

    def domain(self, instance: Instance, sym: ClusterState) -> Iterable[Term]:
        """The concrete arguments worth trying in a concrete projection (enabled or not)."""
        if instance.arg is None:
            return (None,)
        if instance.arg == "s":
            ids = range(1, self.enc.n + 1)
            return tuple(
                self.enc.sets.of(c) for k in range(1, self.enc.n + 1) for c in combinations(ids, k)
            )
        return range(1, sym.partition.partition_epoch + 2)

    def action(self, instance: Instance, arg: Term, before: concrete.ClusterState) -> Action:
        """The concrete action an instance with an argument stands for in a concrete state."""
        fam, actor = instance.family, instance.actor
        if fam == "shrink_isr":
            return Action(fam, actor, self.enc.sets.members(arg))
        if fam == "apply_metadata":
            if instance.fixed == "latest":
                return Action(fam, actor, len(before.controller.log) - 1)
            return Action(fam, actor, arg - before.controller.log[0].partition_epoch)
        if fam == "fetch":
            return Action(fam, actor)
        return Action(fam, actor, instance.fixed)


def possible(enc: Encoding, instance: Instance, probe: ClusterState) -> bool:
    arg: Term = None
    if instance.arg == "i":
        arg = ops.int_var("probe.arg")
    elif instance.arg == "s":
        arg = enc.sets.var("probe.arg")
    elif instance.arg == "h":
        arg = enc.fresh("probe.arg", PartitionRegistration)
    guard = instance.guard(probe, arg)
    return not (isinstance(guard, bool) and not guard)


# How to build each family's instances, by family name (the families the encoding has).
BUILDERS: dict[str, Build] = {
    **data.FAMILIES,
    **alter_partition.FAMILIES,
    **metadata.FAMILIES,
    **lifecycle.FAMILIES,
    **admin.FAMILIES,
}
