package kafkarep.agent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The recorders of kafka.cluster.Partition's hooks (Kafka 4.1.1 and 4.4.0), called by the
 * advice inlined into its methods. Each catches everything: a failure is counted, never thrown
 * into Kafka.
 */
public final class PartitionEvents {
    private PartitionEvents() {}

    public static void makeLeader(
            Object partition, Object state, Object second, boolean returned, Throwable thrown) {
        try {
            PartitionView p = new PartitionView(partition);
            Event event = become(p, "make_leader", state, second, returned, thrown);
            event.put("epoch_start_offset", p.leaderEpochStartOffset()).emit();
        } catch (Throwable t) {
            Failures.record("Partition.makeLeader", t);
        }
    }

    public static void makeFollower(
            Object partition, Object state, Object second, boolean returned, Throwable thrown) {
        try {
            PartitionView p = new PartitionView(partition);
            become(p, "make_follower", state, second, returned, thrown).emit();
        } catch (Throwable t) {
            Failures.record("Partition.makeFollower", t);
        }
    }

    /** Kafka 4.4.0's first argument of makeLeader / makeFollower. */
    static final String PARTITION_REGISTRATION = "org.apache.kafka.metadata.PartitionRegistration";

    /**
     * What makeLeader / makeFollower were asked for, chosen by the first argument's class: a
     * PartitionRegistration (4.4.0) has public fields, the int arrays `isr` and `replicas`, and
     * `isNew` is the method's second argument; a LeaderAndIsrRequest.PartitionState (4.1.1) has
     * accessors, `isNew()` among them.
     */
    static Map<String, Object> requested(Object state, Object second) {
        Map<String, Object> requested = new LinkedHashMap<>();
        if (state != null && state.getClass().getName().equals(PARTITION_REGISTRATION)) {
            requested.put("leader", Reflect.field(state, "leader"));
            requested.put("leader_epoch", Reflect.field(state, "leaderEpoch"));
            requested.put("partition_epoch", Reflect.field(state, "partitionEpoch"));
            requested.put("isr", Reflect.ints(Reflect.field(state, "isr")));
            requested.put("replicas", Reflect.ints(Reflect.field(state, "replicas")));
            if (!(second instanceof Boolean)) {
                throw new IllegalStateException("isNew: expected a boolean second argument, got "
                    + (second == null ? "null" : second.getClass().getName()));
            }
            requested.put("is_new", second);
            return requested;
        }
        requested.put("leader", Reflect.call(state, "leader"));
        requested.put("leader_epoch", Reflect.call(state, "leaderEpoch"));
        requested.put("partition_epoch", Reflect.call(state, "partitionEpoch"));
        requested.put("isr", Reflect.ints(Reflect.call(state, "isr")));
        requested.put("replicas", Reflect.ints(Reflect.call(state, "replicas")));
        requested.put("is_new", Reflect.call(state, "isNew"));
        return requested;
    }

    private static Event become(
            PartitionView p, String kind, Object state, Object second, boolean returned,
            Throwable thrown) {
        Map<String, Object> requested = requested(state, second);
        Event event = p.event(kind)
            .put("leader", p.leader())
            .put("leader_epoch", p.leaderEpoch())
            .put("partition_epoch", p.partitionEpoch())
            .put("isr", p.isr());
        return p.putLog(event)
            .put("returned", thrown == null ? returned : null)
            .put("requested", requested)
            .thrown(thrown);
    }

    public static void appendToLeader(
            Object partition, Object origin, int requiredAcks, Object info, Throwable thrown) {
        try {
            PartitionView p = new PartitionView(partition);
            Event event = p.event("append_leader")
                .put("required_acks", requiredAcks)
                .put("origin", Reflect.name(origin))
                .put("leader_epoch", p.leaderEpoch());
            PartitionView.putAppendInfo(event, info);
            event.put("isr", p.isr()).put("maximal_isr", p.maximalIsr());
            p.putLog(event).thrown(thrown).emit();
        } catch (Throwable t) {
            Failures.record("Partition.appendRecordsToLeader", t);
        }
    }

    /** On entry to updateFollowerFetchState: the follower's log end offset the leader held. */
    public static long replicaLogEndOffset(Object replica) {
        try {
            return (Long) Reflect.call(Reflect.call(replica, "stateSnapshot"), "logEndOffset");
        } catch (Throwable t) {
            Failures.record("Partition.updateFollowerFetchState", t);
            return -1L;
        }
    }

    public static void followerFetchHandled(
            Object partition,
            Object replica,
            Object fetchOffsetMetadata,
            long followerStartOffset,
            long leaderEndOffset,
            long brokerEpoch,
            long replicaLogEndOffsetBefore,
            Throwable thrown) {
        try {
            PartitionView p = new PartitionView(partition);
            Object snapshot = Reflect.call(replica, "stateSnapshot");
            Map<String, Object> after = new LinkedHashMap<>();
            after.put("log_end_offset", Reflect.call(snapshot, "logEndOffset"));
            after.put("log_start_offset", Reflect.call(snapshot, "logStartOffset"));
            after.put("last_caught_up_time_ms", Reflect.call(snapshot, "lastCaughtUpTimeMs"));
            after.put("last_fetch_time_ms", Reflect.call(snapshot, "lastFetchTimeMs"));
            after.put("last_fetch_leader_log_end_offset",
                Reflect.call(snapshot, "lastFetchLeaderLogEndOffset"));
            after.put("broker_epoch", Reflect.optional(Reflect.call(snapshot, "brokerEpoch")));
            Event event = p.event("fetch_handled")
                .put("follower", Reflect.call(replica, "brokerId"))
                .put("fetch_offset", Reflect.field(fetchOffsetMetadata, "messageOffset"))
                .put("follower_log_start_offset", followerStartOffset)
                .put("broker_epoch", brokerEpoch)
                .put("leader_log_end_offset", leaderEndOffset)
                .put("replica_log_end_offset_before", replicaLogEndOffsetBefore)
                .put("replica", after)
                .put("leader_epoch", p.leaderEpoch())
                .put("isr", p.isr())
                .put("maximal_isr", p.maximalIsr());
            p.putLog(event).thrown(thrown).emit();
        } catch (Throwable t) {
            Failures.record("Partition.updateFollowerFetchState", t);
        }
    }

    public static void appendToFollower(
            Object partition, boolean isFuture, int partitionLeaderEpoch, Object infoOption,
            Throwable thrown) {
        try {
            Object info = thrown == null ? Reflect.option(infoOption) : null;
            if (thrown == null && (info == null || (Integer) Reflect.call(info, "validBytes") <= 0)) {
                return; // a fetch response without records: nothing was appended
            }
            PartitionView p = new PartitionView(partition);
            Event event = p.event("append_follower")
                .put("is_future", isFuture)
                .put("partition_leader_epoch", partitionLeaderEpoch);
            PartitionView.putAppendInfo(event, info);
            Object log = p.log(isFuture);
            event.put("log_end_offset", PartitionView.logEndOffset(log))
                .put("high_watermark", PartitionView.highWatermark(log))
                .thrown(thrown)
                .emit();
        } catch (Throwable t) {
            Failures.record("Partition.appendRecordsToFollowerOrFutureReplica", t);
        }
    }

    /** On entry to maybeIncrementLeaderHW: the leader's HWM before. */
    public static long highWatermarkBefore(Object leaderLog) {
        try {
            return (Long) PartitionView.highWatermark(leaderLog);
        } catch (Throwable t) {
            Failures.record("Partition.maybeIncrementLeaderHW", t);
            return -1L;
        }
    }

    public static void leaderHighWatermark(
            Object partition, Object leaderLog, boolean incremented, long before, Throwable thrown) {
        if (!incremented && thrown == null) {
            return;
        }
        try {
            PartitionView p = new PartitionView(partition);
            p.event("hwm_moved")
                .put("old_hwm", before)
                .put("new_hwm", PartitionView.highWatermark(leaderLog))
                .put("log_end_offset", PartitionView.logEndOffset(leaderLog))
                .put("leader_epoch", p.leaderEpoch())
                .put("isr", p.isr())
                .put("maximal_isr", p.maximalIsr())
                .thrown(thrown)
                .emit();
        } catch (Throwable t) {
            Failures.record("Partition.maybeIncrementLeaderHW", t);
        }
    }

    public static void isrExpandProposed(
            Object partition, Object committed, int newReplica, Object pending, Throwable thrown) {
        try {
            Event event = proposed(partition, "isr_expand_proposed", committed, pending, thrown);
            event.put("new_in_sync_replica", newReplica).emit();
        } catch (Throwable t) {
            Failures.record("Partition.prepareIsrExpand", t);
        }
    }

    public static void isrShrinkProposed(
            Object partition, Object committed, Object outOfSync, Object pending, Throwable thrown) {
        try {
            Event event = proposed(partition, "isr_shrink_proposed", committed, pending, thrown);
            event.put("out_of_sync_replicas", Reflect.sortedInts(outOfSync)).emit();
        } catch (Throwable t) {
            Failures.record("Partition.prepareIsrShrink", t);
        }
    }

    private static Event proposed(
            Object partition, String kind, Object committed, Object pending, Throwable thrown) {
        PartitionView p = new PartitionView(partition);
        Event event = p.event(kind).put("committed_isr", Reflect.sortedInts(Reflect.call(committed, "isr")));
        if (pending != null) {
            Object sent = Reflect.call(pending, "sentLeaderAndIsr");
            event.put("proposed_isr", Reflect.sortedInts(Reflect.call(sent, "isr")))
                .put("proposed_broker_epochs", brokerEpochs(Reflect.call(sent, "isrWithBrokerEpoch")))
                .put("leader", Reflect.call(sent, "leader"))
                .put("leader_epoch", Reflect.call(sent, "leaderEpoch"))
                .put("partition_epoch", Reflect.call(sent, "partitionEpoch"));
        }
        return event.put("maximal_isr", p.maximalIsr()).thrown(thrown);
    }

    private static List<Map<String, Object>> brokerEpochs(Object brokerStates) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object state : Reflect.elements(brokerStates)) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("broker", Reflect.call(state, "brokerId"));
            one.put("broker_epoch", Reflect.call(state, "brokerEpoch"));
            out.add(one);
        }
        return out;
    }

    public static void alterPartitionUpdate(
            Object partition, Object proposed, Object leaderAndIsr, boolean hwmIncremented,
            Throwable thrown) {
        try {
            PartitionView p = new PartitionView(partition);
            Event event = answer(p, proposed)
                .put("answer", "update")
                .put("answer_isr", Reflect.sortedInts(Reflect.call(leaderAndIsr, "isr")))
                .put("answer_leader", Reflect.call(leaderAndIsr, "leader"))
                .put("answer_leader_epoch", Reflect.call(leaderAndIsr, "leaderEpoch"))
                .put("answer_partition_epoch", Reflect.call(leaderAndIsr, "partitionEpoch"))
                .put("hwm_incremented", thrown == null ? hwmIncremented : null);
            after(p, event).thrown(thrown).emit();
        } catch (Throwable t) {
            Failures.record("Partition.handleAlterPartitionUpdate", t);
        }
    }

    public static void alterPartitionError(
            Object partition, Object proposed, Object error, boolean retry, Throwable thrown) {
        try {
            PartitionView p = new PartitionView(partition);
            Event event = answer(p, proposed)
                .put("answer", "error")
                .put("error_code", Reflect.name(error))
                .put("retry", thrown == null ? retry : null);
            after(p, event).thrown(thrown).emit();
        } catch (Throwable t) {
            Failures.record("Partition.handleAlterPartitionError", t);
        }
    }

    private static Event answer(PartitionView p, Object proposed) {
        Object sent = Reflect.call(proposed, "sentLeaderAndIsr");
        return p.event("alter_partition_answer")
            .put("proposed", proposed.getClass().getSimpleName())
            .put("proposed_isr", Reflect.sortedInts(Reflect.call(sent, "isr")))
            .put("proposed_partition_epoch", Reflect.call(sent, "partitionEpoch"));
    }

    /** The partition's ISR state once the answer was handled. */
    private static Event after(PartitionView p, Event event) {
        return event
            .put("isr", p.isr())
            .put("maximal_isr", p.maximalIsr())
            .put("pending", p.alterPartitionPending())
            .put("leader_epoch", p.leaderEpoch())
            .put("partition_epoch", p.partitionEpoch());
    }

    /** On entry to truncateTo / truncateFullyAndStartAt: the log end offset before. */
    public static long logEndOffsetBefore(Object partition, boolean isFuture, String hook) {
        try {
            Object leo = PartitionView.logEndOffset(new PartitionView(partition).log(isFuture));
            return leo == null ? -1L : (Long) leo;
        } catch (Throwable t) {
            Failures.record(hook, t);
            return -1L;
        }
    }

    public static void truncated(
            Object partition, String via, long offset, boolean isFuture, long logEndOffsetBefore,
            Throwable thrown) {
        try {
            PartitionView p = new PartitionView(partition);
            Object log = p.log(isFuture);
            p.event("truncate")
                .put("via", via)
                .put("offset", offset)
                .put("is_future", isFuture)
                .put("log_end_offset_before", logEndOffsetBefore)
                .put("log_end_offset", PartitionView.logEndOffset(log))
                .put("high_watermark", PartitionView.highWatermark(log))
                .put("leader_epoch", p.leaderEpoch())
                .thrown(thrown)
                .emit();
        } catch (Throwable t) {
            Failures.record(via, t);
        }
    }
}
