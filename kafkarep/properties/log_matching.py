"""Log Matching (protocol description §2.4)."""

from __future__ import annotations

from itertools import combinations

from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.properties.base import always


def stable_prefixes_agree(cfg: ModelConfig, state: ClusterState) -> str | None:
    replicas = [
        (b, broker.replica)
        for b, broker in enumerate(state.brokers, 1)
        if broker.replica is not None and broker.replica.hwm > 0
    ]
    for (a, ra), (b, rb) in combinations(replicas, 2):
        assert ra is not None and rb is not None
        bound = min(ra.hwm, rb.hwm)
        if ra.log[:bound] != rb.log[:bound]:
            offset = next(i for i in range(bound) if ra.log[i] != rb.log[i])
            return (
                f"replicas {a} and {b} differ at offset {offset} below both HWMs: "
                f"(epoch, value) {ra.log[offset]} vs {rb.log[offset]}"
            )
    return None


LOG_MATCHING = always(
    "log_matching",
    """Any two replicas hold the same records at every offset below both their HWMs: the stable
    prefix of the log is the same everywhere.""",
    "protocol description §2.4; kafka-tlaplus LogMatchingProperty",
    stable_prefix=stable_prefixes_agree,
)
