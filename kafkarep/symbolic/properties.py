"""The property clauses over symbolic states (the same clauses as `kafkarep/properties/`, on the
abstraction: a record is its offset and epoch). The agreement test compares each with the
concrete clause on every state it explores."""

from __future__ import annotations

from collections.abc import Callable

from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, implies
from kafkarep.symbolic.state import ClusterState, Replica, running

Clause = Callable[[Encoding, ClusterState], Term]  # true when the clause holds

# The properties this engine proves; each is the conjunction of its clauses.
SUPPORTED = ("leader_completeness", "leader_candidate_completeness", "min_isr_commit")


def holds_committed(enc: Encoding, sym: ClusterState, r: Replica) -> Term:
    """The replica holds the committed log: every offset below the True HWM, same records."""
    g = sym.ghost
    return and_(
        r.leo >= g.true_hwm,
        *(implies(o < g.true_hwm, eq(r.log[o], c)) for o, c in enumerate(g.committed)),
    )


def holds_acked(enc: Encoding, sym: ClusterState, r: Replica) -> Term:
    return and_(
        *(ops.epochs_within(p, r.log[o], o < r.leo) for o, p in enumerate(sym.ghost.pos_acked))
    )


def _for_leader(enc: Encoding, sym: ClusterState, test: Callable[[Replica], Term]) -> Term:
    checks = []
    for k in range(1, enc.n + 1):
        b = sym.brokers[k - 1]
        checks.append(
            implies(
                and_(eq(sym.partition.leader, k), running(b), b.replica.present), test(b.replica)
            )
        )
    return and_(*checks)


def committed_log(enc: Encoding, sym: ClusterState) -> Term:
    return implies(
        sym.ghost.true_hwm > 0, _for_leader(enc, sym, lambda r: holds_committed(enc, sym, r))
    )


def acked_writes(enc: Encoding, sym: ClusterState) -> Term:
    return _for_leader(enc, sym, lambda r: holds_acked(enc, sym, r))


def _members_complete(enc: Encoding, sym: ClusterState, members: Term) -> Term:
    checks = []
    for k in range(1, enc.n + 1):
        b = sym.brokers[k - 1]
        checks.append(
            implies(
                and_(enc.sets.has(members, k), running(b), b.replica.present),
                holds_committed(enc, sym, b.replica),
            )
        )
    return implies(sym.ghost.true_hwm > 0, and_(*checks))


def isr_complete(enc: Encoding, sym: ClusterState) -> Term:
    return _members_complete(enc, sym, sym.partition.isr)


def elr_complete(enc: Encoding, sym: ClusterState) -> Term:
    if not enc.cfg.options.elr_enabled:
        return True
    return _members_complete(enc, sym, sym.partition.elr)


def acks(enc: Encoding, sym: ClusterState) -> Term:
    return ops.not_(sym.ghost.ack_below_min_isr)


def hwm(enc: Encoding, sym: ClusterState) -> Term:
    return ops.not_(sym.ghost.hwm_below_min_isr)


CLAUSES: dict[str, Clause] = {
    "leader_completeness.committed_log": committed_log,
    "leader_completeness.acked_writes": acked_writes,
    "leader_candidate_completeness.isr": isr_complete,
    "leader_candidate_completeness.elr": elr_complete,
    "min_isr_commit.acks": acks,
    "min_isr_commit.hwm": hwm,
}


def clauses_of(prop: str) -> dict[str, Clause]:
    return {name: c for name, c in CLAUSES.items() if name.split(".")[0] == prop}
