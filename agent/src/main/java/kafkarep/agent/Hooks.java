package kafkarep.agent;

import java.util.List;

/**
 * Every hook, as read at Kafka 4.1.1 and 4.4.0 (docs/trace-validation.md has the same table).
 * Where a method's parameter count differs between the two, the hook lists both counts: 4.1.1's
 * first, then 4.4.0's.
 */
final class Hooks {
    private Hooks() {}

    static final String PARTITION = "kafka.cluster.Partition";
    static final String FETCHER = "kafka.server.AbstractFetcherThread";
    static final String REPLICA_FETCHER = "kafka.server.ReplicaFetcherThread";
    static final String PUBLISHER = "kafka.server.metadata.BrokerMetadataPublisher";
    static final String LOG_LOADER = "org.apache.kafka.storage.internals.log.LogLoader";
    static final String BROKER_SERVER = "kafka.server.BrokerServer";

    static final List<Hook> ALL = List.of(
        // 4.1.1: (LeaderAndIsrRequest.PartitionState, OffsetCheckpoints, Option, Option);
        // 4.4.0: (PartitionRegistration, boolean isNew, OffsetCheckpoints, Option, Option).
        new Hook(PARTITION, "makeLeader", List.of(4, 5), "make_leader",
            PartitionAdvice.MakeLeader.class),
        new Hook(PARTITION, "makeFollower", List.of(4, 5), "make_follower",
            PartitionAdvice.MakeFollower.class),
        // 4.4.0 adds a sixth parameter (a short) after the VerificationGuard; the arguments the
        // advice reads (1: origin, 2: requiredAcks) are the same at both.
        new Hook(PARTITION, "appendRecordsToLeader", List.of(5, 6), "append_leader",
            PartitionAdvice.AppendRecordsToLeader.class),
        new Hook(PARTITION, "updateFollowerFetchState", 6, "fetch_handled",
            PartitionAdvice.UpdateFollowerFetchState.class),
        new Hook(PARTITION, "appendRecordsToFollowerOrFutureReplica", 3, "append_follower",
            PartitionAdvice.AppendRecordsToFollower.class),
        new Hook(PARTITION, "maybeIncrementLeaderHW", 2, "hwm_moved",
            PartitionAdvice.MaybeIncrementLeaderHW.class),
        new Hook(PARTITION, "prepareIsrExpand", 2, "isr_expand_proposed",
            PartitionAdvice.PrepareIsrExpand.class),
        new Hook(PARTITION, "prepareIsrShrink", 2, "isr_shrink_proposed",
            PartitionAdvice.PrepareIsrShrink.class),
        new Hook(PARTITION, "handleAlterPartitionUpdate", 2, "alter_partition_answer",
            PartitionAdvice.HandleAlterPartitionUpdate.class),
        new Hook(PARTITION, "handleAlterPartitionError", 2, "alter_partition_answer",
            PartitionAdvice.HandleAlterPartitionError.class),
        new Hook(PARTITION, "truncateTo", 2, "truncate", PartitionAdvice.TruncateTo.class),
        new Hook(PARTITION, "truncateFullyAndStartAt", 3, "truncate",
            PartitionAdvice.TruncateFullyAndStartAt.class),
        new Hook(FETCHER, "maybeTruncateToEpochEndOffsets", 2, "truncate",
            FetcherAdvice.MaybeTruncateToEpochEndOffsets.class),
        new Hook(FETCHER, "truncateOnFetchResponse", 1, "fetch_response",
            FetcherAdvice.TruncateOnFetchResponse.class),
        new Hook(REPLICA_FETCHER, "processPartitionData", 4, "fetch_response",
            FetcherAdvice.ProcessPartitionData.class),
        new Hook(PUBLISHER, "onMetadataUpdate", 3, "metadata_applied",
            BrokerAdvice.OnMetadataUpdate.class),
        new Hook(LOG_LOADER, "load", 0, "log_recovery", BrokerAdvice.LogLoad.class),
        new Hook(BROKER_SERVER, "shutdown", 1, "shutdown", BrokerAdvice.Shutdown.class));
}
