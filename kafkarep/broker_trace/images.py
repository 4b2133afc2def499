"""What each broker's metadata image held: the controller's metadata log replayed batch by batch
(`metadata_log.cluster.LogCluster`), kept at the end of every batch. A broker's
`metadata_applied` event names the last offset its published image contains
(`BrokerMetadataPublisher.onMetadataUpdate`, `MetadataProvenance.lastContainedOffset`, Kafka
4.1.1), so its image is the one kept at that offset."""

from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple

from kafkarep.kafka.metadata import BrokerRegistry, PartitionRegistration
from kafkarep.metadata_log.cluster import TOPIC, LogCluster
from kafkarep.metadata_log.dump import Batch


class Image(NamedTuple):
    offset: int  # the last offset it contains
    registry: BrokerRegistry
    partitions: dict[tuple[str, int], PartitionRegistration]  # by (topic name, partition)
    min_isr: dict[str, int]  # a topic's min.insync.replicas where the log sets it


class Images:
    """The images of one metadata log, by the last offset each contains."""

    def __init__(self, batches: list[Batch]) -> None:
        cluster = LogCluster()
        self.images: list[Image] = []
        for batch in batches:
            for record in batch.records:
                cluster.apply(record)
            if batch.records:
                self.images.append(_image(cluster, batch.records[-1].offset))
        self.offsets = [image.offset for image in self.images]

    def at(self, offset: int) -> Image | None:
        """The image a broker that applied the log up to `offset` holds (None before any)."""
        index = bisect_right(self.offsets, offset)
        return self.images[index - 1] if index else None


def _image(cluster: LogCluster, offset: int) -> Image:
    partitions = {
        (cluster.topics.get(key.topic_id, key.topic_id), key.partition): registration
        for key, registration in cluster.partitions.items()
    }
    min_isr = {
        name: int(value)
        for (kind, name, key), value in cluster.configs.items()
        if kind == TOPIC and key == "min.insync.replicas"
    }
    return Image(offset, cluster.registry(), partitions, min_isr)
