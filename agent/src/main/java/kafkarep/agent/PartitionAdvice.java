package kafkarep.agent;

import net.bytebuddy.asm.Advice;

/**
 * Advice inlined into kafka.cluster.Partition's methods (Kafka 4.1.1 and 4.4.0). Each only
 * hands what it sees to a recorder: it reads the arguments and the return value, never writes
 * them, and never skips the method; `suppress` drops anything the call itself throws (a
 * recorder catches its own failures and counts them). UpdateFollowerFetchState's entry also
 * calls the gate (Gate), which at most delays the thread.
 */
final class PartitionAdvice {
    private PartitionAdvice() {}

    static final class MakeLeader {
        /** Argument 1 is the OffsetCheckpoints at 4.1.1, `isNew` (boxed) at 4.4.0. */
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(0) Object state,
                @Advice.Argument(1) Object second,
                @Advice.Return boolean returned,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.makeLeader(partition, state, second, returned, thrown);
        }
    }

    static final class MakeFollower {
        /** Argument 1 is the OffsetCheckpoints at 4.1.1, `isNew` (boxed) at 4.4.0. */
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(0) Object state,
                @Advice.Argument(1) Object second,
                @Advice.Return boolean returned,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.makeFollower(partition, state, second, returned, thrown);
        }
    }

    static final class AppendRecordsToLeader {
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(1) Object origin,
                @Advice.Argument(2) int requiredAcks,
                @Advice.Return Object info,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.appendToLeader(partition, origin, requiredAcks, info, thrown);
        }
    }

    static final class UpdateFollowerFetchState {
        /** The gate point `fetch` (GatePoints) first, then what the follower's LEO was. */
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static long enter(
                @Advice.This Object partition,
                @Advice.Argument(0) Object replica,
                @Advice.Argument(1) Object fetchOffsetMetadata) {
            GatePoints.fetch(partition, replica, fetchOffsetMetadata);
            return PartitionEvents.replicaLogEndOffset(replica);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(0) Object replica,
                @Advice.Argument(1) Object fetchOffsetMetadata,
                @Advice.Argument(2) long followerStartOffset,
                @Advice.Argument(4) long leaderEndOffset,
                @Advice.Argument(5) long brokerEpoch,
                @Advice.Enter long replicaLogEndOffsetBefore,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.followerFetchHandled(partition, replica, fetchOffsetMetadata,
                followerStartOffset, leaderEndOffset, brokerEpoch, replicaLogEndOffsetBefore, thrown);
        }
    }

    static final class AppendRecordsToFollower {
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(1) boolean isFuture,
                @Advice.Argument(2) int partitionLeaderEpoch,
                @Advice.Return Object infoOption,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.appendToFollower(partition, isFuture, partitionLeaderEpoch, infoOption, thrown);
        }
    }

    static final class MaybeIncrementLeaderHW {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static long enter(@Advice.Argument(0) Object leaderLog) {
            return PartitionEvents.highWatermarkBefore(leaderLog);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(0) Object leaderLog,
                @Advice.Return boolean incremented,
                @Advice.Enter long before,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.leaderHighWatermark(partition, leaderLog, incremented, before, thrown);
        }
    }

    static final class PrepareIsrExpand {
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(0) Object committed,
                @Advice.Argument(1) int newReplica,
                @Advice.Return Object pending,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.isrExpandProposed(partition, committed, newReplica, pending, thrown);
        }
    }

    static final class PrepareIsrShrink {
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(0) Object committed,
                @Advice.Argument(1) Object outOfSync,
                @Advice.Return Object pending,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.isrShrinkProposed(partition, committed, outOfSync, pending, thrown);
        }
    }

    static final class HandleAlterPartitionUpdate {
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(0) Object proposed,
                @Advice.Argument(1) Object leaderAndIsr,
                @Advice.Return boolean hwmIncremented,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.alterPartitionUpdate(partition, proposed, leaderAndIsr, hwmIncremented, thrown);
        }
    }

    static final class HandleAlterPartitionError {
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(0) Object proposed,
                @Advice.Argument(1) Object error,
                @Advice.Return boolean retry,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.alterPartitionError(partition, proposed, error, retry, thrown);
        }
    }

    static final class TruncateTo {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static long enter(@Advice.This Object partition, @Advice.Argument(1) boolean isFuture) {
            return PartitionEvents.logEndOffsetBefore(partition, isFuture, "Partition.truncateTo");
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(0) long offset,
                @Advice.Argument(1) boolean isFuture,
                @Advice.Enter long before,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.truncated(partition, "Partition.truncateTo", offset, isFuture, before, thrown);
        }
    }

    static final class TruncateFullyAndStartAt {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static long enter(@Advice.This Object partition, @Advice.Argument(1) boolean isFuture) {
            return PartitionEvents.logEndOffsetBefore(
                partition, isFuture, "Partition.truncateFullyAndStartAt");
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object partition,
                @Advice.Argument(0) long newOffset,
                @Advice.Argument(1) boolean isFuture,
                @Advice.Enter long before,
                @Advice.Thrown Throwable thrown) {
            PartitionEvents.truncated(
                partition, "Partition.truncateFullyAndStartAt", newOffset, isFuture, before, thrown);
        }
    }
}
