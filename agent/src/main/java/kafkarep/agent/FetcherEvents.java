package kafkarep.agent;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The recorders of the follower's fetcher hooks (kafka.server.ReplicaFetcherThread and
 * kafka.server.AbstractFetcherThread, Kafka 4.1.1).
 */
public final class FetcherEvents {
    private FetcherEvents() {}

    /** The follower's local log of `topicPartition`, through the fetcher's ReplicaManager. */
    private static Object localLog(Object fetcher, Object topicPartition) {
        Object replicaManager = Reflect.field(fetcher, "replicaMgr");
        return Reflect.option(Reflect.call(replicaManager, "localLog", topicPartition));
    }

    private static Event withLocalLog(Event event, Object fetcher, Object topicPartition) {
        Object log = localLog(fetcher, topicPartition);
        return event
            .put("log_end_offset", PartitionView.logEndOffset(log))
            .put("high_watermark", PartitionView.highWatermark(log));
    }

    public static void partitionData(
            Object fetcher,
            Object topicPartition,
            long fetchOffset,
            int fetchLeaderEpoch,
            Object data,
            Object infoOption,
            Throwable thrown) {
        try {
            Event event = Event.of("fetch_response")
                .topicPartition(topicPartition)
                .put("fetch_offset", fetchOffset)
                .put("fetch_leader_epoch", fetchLeaderEpoch)
                .put("leader_high_watermark", Reflect.call(data, "highWatermark"))
                .put("leader_log_start_offset", Reflect.call(data, "logStartOffset"))
                .put("diverging_epoch", null);
            PartitionView.putAppendInfo(event, thrown == null ? Reflect.option(infoOption) : null);
            withLocalLog(event, fetcher, topicPartition).thrown(thrown).emit();
        } catch (Throwable t) {
            Failures.record("ReplicaFetcherThread.processPartitionData", t);
        }
    }

    /** On entry to truncateOnFetchResponse: the fetch responses that carried a diverging epoch. */
    public static void divergingEpochs(Object fetcher, Object epochEndOffsets) {
        try {
            for (Object[] entry : Reflect.entries(epochEndOffsets)) {
                Map<String, Object> diverging = new LinkedHashMap<>();
                diverging.put("epoch", Reflect.call(entry[1], "leaderEpoch"));
                diverging.put("end_offset", Reflect.call(entry[1], "endOffset"));
                Event event = Event.of("fetch_response")
                    .topicPartition(entry[0])
                    .put("diverging_epoch", diverging);
                withLocalLog(event, fetcher, entry[0]).emit();
            }
        } catch (Throwable t) {
            Failures.record("AbstractFetcherThread.truncateOnFetchResponse", t);
        }
    }

    /**
     * On exit from maybeTruncateToEpochEndOffsets: each partition truncated, to which offset, and
     * the leader's epoch and end offset that decided it. Called with the epochs the follower asked
     * for (an OffsetsForLeaderEpoch answer) or with none (a fetch response's diverging epoch).
     */
    public static void truncatedToEpochEndOffsets(
            Object fetcher, Object fetchedEpochs, Object requestedEpochs, Object result,
            Throwable thrown) {
        try {
            if (result == null) {
                Failures.record("AbstractFetcherThread.maybeTruncateToEpochEndOffsets",
                    thrown != null ? thrown : new IllegalStateException("no result"));
                return;
            }
            boolean diverging = Reflect.elements(requestedEpochs).isEmpty();
            Map<Object, Object> leaderEpochs = new HashMap<>();
            for (Object[] entry : Reflect.entries(fetchedEpochs)) {
                leaderEpochs.put(entry[0], entry[1]);
            }
            for (Object[] entry : Reflect.entries(Reflect.call(result, "result"))) {
                Object leader = leaderEpochs.get(entry[0]);
                Event event = Event.of("truncate")
                    .topicPartition(entry[0])
                    .put("via", "AbstractFetcherThread.maybeTruncateToEpochEndOffsets")
                    .put("cause", diverging ? "diverging_epoch" : "offsets_for_leader_epoch")
                    .put("offset", Reflect.call(entry[1], "offset"))
                    .put("truncation_completed", Reflect.call(entry[1], "truncationCompleted"))
                    .put("leader_epoch", leader == null ? null : Reflect.call(leader, "leaderEpoch"))
                    .put("leader_end_offset", leader == null ? null : Reflect.call(leader, "endOffset"))
                    .put("fetcher", fetcher.getClass().getSimpleName());
                withLocalLog(event, fetcher, entry[0]).emit();
            }
        } catch (Throwable t) {
            Failures.record("AbstractFetcherThread.maybeTruncateToEpochEndOffsets", t);
        }
    }
}
