package kafkarep.agent;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What went wrong inside the agent. Every recorder catches everything it throws and counts it
 * here, by hook and kind; the first failure of each kind is written as an `agent_error` event.
 * Nothing is ever thrown back into Kafka.
 */
public final class Failures {
    private Failures() {}

    private static final Map<String, AtomicLong> COUNTS = new ConcurrentHashMap<>();
    private static final AtomicLong TOTAL = new AtomicLong();

    /** A recorder of `hook` caught `failure`. */
    public static void record(String hook, Throwable failure) {
        StackTraceElement[] stack = failure.getStackTrace();
        String at = stack.length == 0 ? null : stack[0].toString();
        record(hook, failure.getClass().getName(), String.valueOf(failure.getMessage()), at);
    }

    /** A failure without an exception (a hooked method that Kafka's class lacks). */
    static void record(String hook, String kind, String message, String at) {
        TOTAL.incrementAndGet();
        AtomicLong count = COUNTS.computeIfAbsent(hook + " " + kind, key -> new AtomicLong());
        if (count.getAndIncrement() > 0) {
            return;
        }
        try {
            Event.of("agent_error")
                .put("hook", hook)
                .put("kind", kind)
                .put("message", message)
                .put("at", at)
                .emit();
        } catch (Throwable ignored) {
            // The events file itself failed: the count above is all that is left.
        }
    }

    static long total() {
        return TOTAL.get();
    }

    /** Failures by hook and kind, for the shutdown event. */
    static Map<String, Long> counts() {
        Map<String, Long> out = new TreeMap<>();
        COUNTS.forEach((kind, count) -> out.put(kind, count.get()));
        return out;
    }
}
