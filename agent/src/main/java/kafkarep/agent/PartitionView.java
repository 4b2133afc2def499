package kafkarep.agent;

import java.util.List;

/**
 * What the agent reads of a kafka.cluster.Partition (Kafka 4.1.1; the same accessors at 4.4.0)
 * and of its local UnifiedLog: public accessors only, each a read of a volatile field or of an
 * immutable value.
 */
final class PartitionView {
    private final Object partition;

    PartitionView(Object partition) {
        this.partition = partition;
    }

    /** An event about this partition. */
    Event event(String kind) {
        return Event.of(kind).topicPartition(Reflect.call(partition, "topicPartition"));
    }

    Object leader() {
        return Reflect.option(Reflect.call(partition, "leaderReplicaIdOpt"));
    }

    Object leaderEpoch() {
        return Reflect.call(partition, "getLeaderEpoch");
    }

    Object partitionEpoch() {
        return Reflect.call(partition, "getPartitionEpoch");
    }

    Object leaderEpochStartOffset() {
        return Reflect.option(Reflect.call(partition, "leaderEpochStartOffsetOpt"));
    }

    private Object state() {
        return Reflect.call(partition, "partitionState");
    }

    /** The committed ISR (`partitionState.isr`). */
    List<Integer> isr() {
        return Reflect.sortedInts(Reflect.call(state(), "isr"));
    }

    /** The ISR with a pending expansion's replica (`partitionState.maximalIsr`). */
    List<Integer> maximalIsr() {
        return Reflect.sortedInts(Reflect.call(state(), "maximalIsr"));
    }

    /** An AlterPartition is in flight (`partitionState.isInflight`). */
    Object alterPartitionPending() {
        return Reflect.call(state(), "isInflight");
    }

    /** The local log, or the future log (a move between log directories), or null. */
    Object log(boolean future) {
        return Reflect.option(Reflect.call(partition, future ? "futureLog" : "log"));
    }

    Object log() {
        return log(false);
    }

    static Object logEndOffset(Object log) {
        return log == null ? null : Reflect.call(log, "logEndOffset");
    }

    static Object highWatermark(Object log) {
        return log == null ? null : Reflect.call(log, "highWatermark");
    }

    /** The log end offset and the high watermark of the local log, as two fields. */
    Event putLog(Event event) {
        Object log = log();
        return event.put("log_end_offset", logEndOffset(log)).put("high_watermark", highWatermark(log));
    }

    /** The fields of a LogAppendInfo (null when the append returned none). */
    static Event putAppendInfo(Event event, Object info) {
        if (info == null) {
            return event.put("first_offset", null).put("last_offset", null).put("offsets", null);
        }
        return event
            .put("first_offset", Reflect.call(info, "firstOffset"))
            .put("last_offset", Reflect.call(info, "lastOffset"))
            .put("offsets", Reflect.call(info, "numMessages"))
            .put("valid_bytes", Reflect.call(info, "validBytes"))
            .put("last_leader_epoch", Reflect.optional(Reflect.call(info, "lastLeaderEpoch")));
    }
}
