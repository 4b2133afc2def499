"""No committed record lost globally (kafka-tlaplus NoCommittedRecordLostGlobally)."""

from __future__ import annotations

from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.properties.base import always


def acked_writes_exist(cfg: ModelConfig, state: ClusterState) -> str | None:
    if not state.ghost.pos_acked:
        return None
    held = {value for b in state.brokers if b.replica for _, value in b.replica.log}
    missing = sorted(state.ghost.pos_acked - held)
    if missing:
        return f"positively acked write {missing[0]} is on no broker"
    return None


NO_COMMITTED_RECORD_LOST = always(
    "no_committed_record_lost",
    """Every positively acknowledged write still exists on some broker (on disk, running or
    not). Weaker than Leader Completeness: it fails only when a write is gone everywhere.""",
    "kafka-tlaplus NoCommittedRecordLostGlobally",
    acked_writes=acked_writes_exist,
)
