"""The auxiliary invariants and history facts that make the properties inductive, one module
per argument: `structure` (well-formedness, who received what, copies that agree), `quorum`
and `later_epochs` (who holds what a leader may commit, within a leader epoch and across
them), `history` and `quorum_history` (facts of the records of the metadata log);
`strengthening` says which a property's proof uses.

Each is a named predicate over one symbolic state (or, for a history fact, over a record of the
metadata log and the current state). They are written for any model shape; the induction proves
each of them (initiation and consecution), so a wrong one shows up as a counterexample to
induction rather than as a false proof.
"""

from kafkarep.symbolic.invariants.history import FACTS, pair
from kafkarep.symbolic.invariants.quorum_history import QUORUM_FACTS
from kafkarep.symbolic.invariants.strengthening import (
    ALL_INVARIANTS,
    AUXILIARY,
    facts_for,
    invariants_for,
    needed,
)

__all__ = [
    "ALL_INVARIANTS",
    "AUXILIARY",
    "FACTS",
    "QUORUM_FACTS",
    "facts_for",
    "invariants_for",
    "needed",
    "pair",
]
