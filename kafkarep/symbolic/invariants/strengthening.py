"""The strengthening each property is proved with: its clauses as invariants, the auxiliary
invariants it needs (`structure`; for the completeness properties `quorum` and `later_epochs`
too), and the history facts it assumes (`history`; `quorum_history` for completeness)."""

from __future__ import annotations

from kafkarep.model.config import ModelConfig
from kafkarep.symbolic import properties as props
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.invariants import later_epochs, quorum, structure
from kafkarep.symbolic.invariants.history import FACTS
from kafkarep.symbolic.invariants.quorum_history import QUORUM_FACTS
from kafkarep.symbolic.lemmas import AnyFact, Invariant
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState


def _clause(name: str, clause: props.Clause) -> Invariant:
    def holds(enc: Encoding, sym: ClusterState) -> Term:
        return clause(enc, sym)

    return Invariant(name, holds, f"the property clause {name}")


PROPERTY_INVARIANTS = tuple(_clause(name, clause) for name, clause in props.CLAUSES.items())
QUORUM = quorum.INVARIANTS + later_epochs.INVARIANTS
AUXILIARY = structure.INVARIANTS + QUORUM
ALL_INVARIANTS = PROPERTY_INVARIANTS + AUXILIARY


# The strengthening each property is proved with. The MinISR rule needs only the structure
# (who received what); the completeness properties also need the committed log's relation to
# the logs, the quorum argument and the history facts (docs/prove.md).
STRUCTURE = (
    "controller_shape",
    "replicas_well_formed",
    "leader_state",
    "unacknowledged",
    "committed_shape",
    "log_matching",
    "holders_received",
    "one_leader_per_epoch",
    "fetch_responses",
    "records_bound",
    "alter_partition_messages",
    "registrations_consistent",
)


COMMITTED = ("acked_are_committed", "hwm_prefix_committed") + tuple(i.name for i in QUORUM)


NEEDS: dict[str, tuple[str, ...]] = {
    "min_isr_commit": STRUCTURE,
    "leader_completeness": STRUCTURE
    + COMMITTED
    + tuple(props.clauses_of("leader_candidate_completeness")),
    "leader_candidate_completeness": STRUCTURE
    + COMMITTED
    + tuple(props.clauses_of("leader_completeness")),
}


_COMPLETENESS = ("leader_completeness", "leader_candidate_completeness")
FACTS_FOR: dict[str, tuple[AnyFact, ...]] = {prop: QUORUM_FACTS for prop in _COMPLETENESS}


def facts_for(prop: str) -> tuple[AnyFact, ...]:
    """The history facts a property's proof assumes of every record (and proves)."""
    return FACTS + FACTS_FOR.get(prop, ())


def needed(prop: str, cfg: ModelConfig | None = None) -> tuple[str, ...]:
    """The invariants proved together for a property: its clauses, the auxiliary invariants
    it needs (a model's own property, named with its model: the structure), and every history
    fact it assumes."""
    facts = tuple(f"history.{f.name}" for f in facts_for(prop))
    return tuple(props.clauses_of(prop, cfg)) + NEEDS.get(prop, STRUCTURE) + facts


def invariants_for(cfg: ModelConfig) -> tuple[Invariant, ...]:
    """Every invariant a proof on this model may ask: those of the built-in properties and the
    auxiliary ones, and the clauses of the model's own provable properties."""
    own = tuple(_clause(name, clause) for name, clause in props.own_clauses(cfg).items())
    return ALL_INVARIANTS + own
