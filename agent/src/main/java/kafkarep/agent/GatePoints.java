package kafkarep.agent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The gate points (docs/trace-validation.md, "The agent as a gate", has the same table), and
 * what the advice at each calls: every entry returns at once without a gate, and otherwise
 * reads the partition (and follower) the thread is about, and hands it to Gate.pass. Each
 * catches everything: a failure is counted and lets the thread go.
 */
public final class GatePoints {
    private GatePoints() {}

    static final String METADATA = "metadata";
    static final String FETCH_RESPONSE = "fetch_response";
    static final String FETCH = "fetch";
    static final String ALTER_PARTITION_REQUEST = "alter_partition_request";
    static final String ALTER_PARTITION_ANSWER = "alter_partition_answer";

    /** Read at Kafka 4.1.1; each method is held on entry. */
    static final List<GatePoint> ALL = List.of(
        new GatePoint(METADATA, Hooks.PUBLISHER, "onMetadataUpdate", 3, "4.1.1",
            BrokerAdvice.OnMetadataUpdate.class),
        new GatePoint(FETCH_RESPONSE, Hooks.REPLICA_FETCHER, "processPartitionData", 4, "4.1.1",
            FetcherAdvice.ProcessPartitionData.class),
        new GatePoint(FETCH, Hooks.PARTITION, "updateFollowerFetchState", 6, "4.1.1",
            PartitionAdvice.UpdateFollowerFetchState.class),
        new GatePoint(ALTER_PARTITION_REQUEST, Hooks.PARTITION, "submitAlterPartition", 1, "4.1.1",
            GateAdvice.SubmitAlterPartition.class),
        // The body of submitAlterPartition's callback on the AlterPartitionManager's future
        // (Scala 2.13's name for the lambda of `future.whenComplete { (leaderAndIsr, e) => ... }`),
        // entered before it takes the partition's write lock.
        new GatePoint(ALTER_PARTITION_ANSWER, Hooks.PARTITION, "$anonfun$submitAlterPartition$3", 4,
            "4.1.1", GateAdvice.AlterPartitionAnswer.class));

    /** The hooks the gate adds, installed only with `gate=DIR`: points no recording hook has. */
    static List<Hook> ownHooks() {
        List<Hook> out = new ArrayList<>();
        for (GatePoint point : ALL) {
            boolean shared = Hooks.ALL.stream().anyMatch(hook -> hook.advice() == point.advice());
            if (!shared) {
                out.add(new Hook(point.className(), point.method(), point.parameters(), "gate",
                    point.advice()));
            }
        }
        return out;
    }

    /** What agent_start says of the gate: each point's name and method. */
    static List<Map<String, Object>> describe() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (GatePoint point : ALL) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("point", point.point());
            one.put("class", point.className());
            one.put("method", point.method());
            out.add(one);
        }
        return out;
    }

    private static String topic(Object topicPartition) {
        return (String) Reflect.call(topicPartition, "topic");
    }

    private static Integer partition(Object topicPartition) {
        return (Integer) Reflect.call(topicPartition, "partition");
    }

    /** BrokerMetadataPublisher.onMetadataUpdate: the broker about to publish `image`. */
    public static void metadata(Object image) {
        Gate gate = Gate.current();
        if (gate == null) {
            return;
        }
        try {
            gate.pass(METADATA, null, null, null, () -> {
                Object provenance = Reflect.call(image, "provenance");
                Map<String, Object> details = new LinkedHashMap<>();
                details.put("offset", Reflect.call(provenance, "lastContainedOffset"));
                details.put("epoch", Reflect.call(provenance, "lastContainedEpoch"));
                return details;
            });
        } catch (Throwable t) {
            Failures.record("gate " + METADATA, t);
        }
    }

    /** ReplicaFetcherThread.processPartitionData: the follower about to take a partition's data. */
    public static void fetchResponse(
            Object topicPartition, long fetchOffset, int fetchLeaderEpoch) {
        Gate gate = Gate.current();
        if (gate == null) {
            return;
        }
        try {
            gate.pass(FETCH_RESPONSE, topic(topicPartition), partition(topicPartition), null,
                () -> {
                    Map<String, Object> details = new LinkedHashMap<>();
                    details.put("fetch_offset", fetchOffset);
                    details.put("fetch_leader_epoch", fetchLeaderEpoch);
                    return details;
                });
        } catch (Throwable t) {
            Failures.record("gate " + FETCH_RESPONSE, t);
        }
    }

    /** Partition.updateFollowerFetchState: the leader about to take one follower's fetch. */
    public static void fetch(Object partition, Object replica, Object fetchOffsetMetadata) {
        Gate gate = Gate.current();
        if (gate == null) {
            return;
        }
        try {
            Object topicPartition = Reflect.call(partition, "topicPartition");
            Integer follower = (Integer) Reflect.call(replica, "brokerId");
            gate.pass(FETCH, topic(topicPartition), partition(topicPartition), follower, () -> {
                Map<String, Object> details = new LinkedHashMap<>();
                details.put("fetch_offset", Reflect.field(fetchOffsetMetadata, "messageOffset"));
                return details;
            });
        } catch (Throwable t) {
            Failures.record("gate " + FETCH, t);
        }
    }

    /** Partition.submitAlterPartition: the leader about to hand an AlterPartition to send. */
    public static void alterPartitionRequest(Object partition, Object proposed) {
        Gate gate = Gate.current();
        if (gate == null) {
            return;
        }
        try {
            Object topicPartition = Reflect.call(partition, "topicPartition");
            gate.pass(ALTER_PARTITION_REQUEST, topic(topicPartition), partition(topicPartition),
                null, () -> proposal(proposed));
        } catch (Throwable t) {
            Failures.record("gate " + ALTER_PARTITION_REQUEST, t);
        }
    }

    /** submitAlterPartition's callback: the leader about to take the controller's answer. */
    public static void alterPartitionAnswer(
            Object partition, Object proposed, Object leaderAndIsr, Throwable error) {
        Gate gate = Gate.current();
        if (gate == null) {
            return;
        }
        try {
            Object topicPartition = Reflect.call(partition, "topicPartition");
            gate.pass(ALTER_PARTITION_ANSWER, topic(topicPartition), partition(topicPartition),
                null, () -> {
                    Map<String, Object> details = proposal(proposed);
                    if (leaderAndIsr != null) {
                        details.put("answer", "update");
                        details.put("answer_isr",
                            Reflect.sortedInts(Reflect.call(leaderAndIsr, "isr")));
                        details.put("answer_partition_epoch",
                            Reflect.call(leaderAndIsr, "partitionEpoch"));
                    } else {
                        details.put("answer", "error");
                        details.put("error", error == null ? null : error.getClass().getName());
                    }
                    return details;
                });
        } catch (Throwable t) {
            Failures.record("gate " + ALTER_PARTITION_ANSWER, t);
        }
    }

    /** The AlterPartition a PendingPartitionChange sends. */
    private static Map<String, Object> proposal(Object proposed) {
        Object sent = Reflect.call(proposed, "sentLeaderAndIsr");
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("proposed", proposed.getClass().getSimpleName());
        details.put("proposed_isr", Reflect.sortedInts(Reflect.call(sent, "isr")));
        details.put("proposed_partition_epoch", Reflect.call(sent, "partitionEpoch"));
        return details;
    }
}
