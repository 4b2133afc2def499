package kafkarep.agent;

import net.bytebuddy.asm.Advice;

/**
 * Advice inlined into the follower's fetcher (Kafka 4.1.1); it only reads, as PartitionAdvice.
 * ProcessPartitionData's entry is the gate point `fetch_response` (GatePoints), which at most
 * delays.
 */
final class FetcherAdvice {
    private FetcherAdvice() {}

    /** ReplicaFetcherThread.processPartitionData: one partition of a fetch response taken. */
    static final class ProcessPartitionData {
        /** The gate point `fetch_response` (GatePoints): without a gate, only a null check. */
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(
                @Advice.Argument(0) Object topicPartition,
                @Advice.Argument(1) long fetchOffset,
                @Advice.Argument(2) int fetchLeaderEpoch) {
            GatePoints.fetchResponse(topicPartition, fetchOffset, fetchLeaderEpoch);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object fetcher,
                @Advice.Argument(0) Object topicPartition,
                @Advice.Argument(1) long fetchOffset,
                @Advice.Argument(2) int fetchLeaderEpoch,
                @Advice.Argument(3) Object data,
                @Advice.Return Object infoOption,
                @Advice.Thrown Throwable thrown) {
            FetcherEvents.partitionData(
                fetcher, topicPartition, fetchOffset, fetchLeaderEpoch, data, infoOption, thrown);
        }
    }

    /** AbstractFetcherThread.truncateOnFetchResponse: the diverging epochs of a fetch response. */
    static final class TruncateOnFetchResponse {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object fetcher, @Advice.Argument(0) Object epochEndOffsets) {
            FetcherEvents.divergingEpochs(fetcher, epochEndOffsets);
        }
    }

    /** AbstractFetcherThread.maybeTruncateToEpochEndOffsets: the truncations it made. */
    static final class MaybeTruncateToEpochEndOffsets {
        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(
                @Advice.This Object fetcher,
                @Advice.Argument(0) Object fetchedEpochs,
                @Advice.Argument(1) Object requestedEpochs,
                @Advice.Return Object result,
                @Advice.Thrown Throwable thrown) {
            FetcherEvents.truncatedToEpochEndOffsets(
                fetcher, fetchedEpochs, requestedEpochs, result, thrown);
        }
    }
}
