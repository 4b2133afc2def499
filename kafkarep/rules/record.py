"""A PartitionChangeRecord under construction, in any domain.

Each field is set when a condition holds (a Python bool, or a Z3 term in the prover's domain);
a field set under a condition that may be false keeps its previous value otherwise. The
concrete domain turns a finished record into Kafka's `PartitionChangeRecord`
(`Values.change_record`).
"""

from __future__ import annotations

from typing import Any

from kafkarep.rules.terms import Term, and_, ite, not_, or_

SET_FIELDS = frozenset({"isr", "elr", "last_known_elr", "adding", "removing"})


class Record:
    FIELDS = (
        "isr",
        "leader",
        "replicas",
        "elr",
        "last_known_elr",
        "adding",
        "removing",
        "recovering",
    )

    def __init__(self, domain: Any, p: Any) -> None:
        self.domain = domain
        self.present: dict[str, Term] = dict.fromkeys(self.FIELDS, False)
        # a field's value is read only where it is present; these fill the rest
        self.value: dict[str, Term] = {name: domain.empty for name in SET_FIELDS}
        self.value.update(leader=0, replicas=p.replicas, recovering=False)

    def set(self, field: str, when: Term, value: Term) -> None:
        """The field becomes `value` where `when` holds."""
        if when is False:
            return
        self.present[field] = or_(self.present[field], when)
        old = self.value[field]
        if when is True:
            self.value[field] = value
        elif field in SET_FIELDS:
            self.value[field] = self.domain.pick(when, value, old)
        elif field == "replicas":
            self.value[field] = self.domain.pick_list(when, value, old)
        else:
            self.value[field] = ite(when, value, old)

    def has(self, field: str) -> Term:
        return self.present[field]

    def get(self, field: str) -> Term:
        return self.value[field]

    def only_when(self, condition: Term) -> None:
        """No field is set unless `condition` holds (a rule that touches the partition only in
        some states)."""
        if condition is True:
            return
        for name in self.FIELDS:
            self.present[name] = and_(condition, self.present[name])

    def noop(self) -> Term:
        return not_(or_(*self.present.values()))
