package kafkarep.agent;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The gate (`gate=DIR`): holds a broker thread at a gate point (GatePoints) while a driver's
 * rule file says so. It only delays: it never changes an argument, a return value or an
 * exception, and whatever fails inside it is counted (Failures) and lets the thread go.
 *
 * <p>The protocol, in DIR (one directory may serve every broker of a cluster):
 *
 * <ul>
 *   <li>`hold-NODE-POINT`, `hold-NODE-POINT-TOPIC-PARTITION` and, for `fetch`,
 *       `hold-NODE-fetch-TOPIC-PARTITION-from-FOLLOWER`: a rule. A thread of broker NODE that
 *       reaches POINT (about that partition, for that follower) stays there while any rule it
 *       matches exists.
 *   <li>While it is held: a `gate_held` event, then a marker `held-NODE-POINT[-TOPIC-PARTITION]
 *       [-from-FOLLOWER]-SEQ` (the most specific rule name's tail and the JVM's hold number),
 *       holding the event's fields as one JSON line; written to a hidden file and renamed, so
 *       a marker is never seen half written.
 *   <li>Released when no rule it matches is left (polled every POLL_MS), when a file
 *       `pass-` + its marker's name less `held-` exists (the driver lets this one thread go
 *       and keeps the rule for the next; the gate deletes the file), when the JVM shuts
 *       down, when the thread is interrupted (its interrupt flag is set again for Kafka to see),
 *       or after the safety timeout (an `agent_error` of kind `gate_timeout`): then a
 *       `gate_released` event, then the marker is deleted.
 * </ul>
 */
public final class Gate {
    static final long POLL_MS = 5;
    /** How long the JVM's shutdown hook waits for held threads to write their release. */
    static final long SHUTDOWN_WAIT_MS = 2_000;

    private static volatile Gate current;
    private static volatile boolean closing;
    private static final AtomicLong HOLDS = new AtomicLong();
    private static final AtomicInteger HELD = new AtomicInteger();

    private final File dir;
    private final int node;
    private final long timeoutMs;

    private Gate(File dir, int node, long timeoutMs) {
        this.dir = dir;
        this.node = node;
        this.timeoutMs = timeoutMs;
    }

    /**
     * Opens the gate on DIR. A marker of this node left by an earlier JVM (one killed while a
     * thread was held) is stale: it is deleted.
     */
    static void open(Path dir, int node, long timeoutMs) throws IOException {
        Files.createDirectories(dir);
        File[] stale = dir.toFile().listFiles((parent, name) ->
            name.startsWith("held-" + node + "-") || name.startsWith(".held-" + node + "-"));
        for (File marker : stale == null ? new File[0] : stale) {
            Files.deleteIfExists(marker.toPath());
        }
        current = new Gate(dir.toAbsolutePath().toFile(), node, timeoutMs);
    }

    /** The gate, or null when the agent runs without one (every gate point checks this first). */
    static Gate current() {
        return current;
    }

    static Path dir() {
        Gate gate = current;
        return gate == null ? null : gate.dir.toPath();
    }

    static long timeoutMs() {
        Gate gate = current;
        return gate == null ? 0 : gate.timeoutMs;
    }

    /** The rule names that hold a thread of `node` at `point`, the most specific first. */
    static String[] rules(
            int node, String point, String topic, Integer partition, Integer follower) {
        String base = "hold-" + node + "-" + point;
        if (topic == null || partition == null) {
            return new String[] {base};
        }
        String onPartition = base + "-" + topic + "-" + partition;
        if (follower == null) {
            return new String[] {onPartition, base};
        }
        return new String[] {onPartition + "-from-" + follower, onPartition, base};
    }

    /** The first of `rules` that exists in the gate's directory, or null. */
    private String existing(String[] rules) {
        for (String rule : rules) {
            if (new File(dir, rule).exists()) {
                return rule;
            }
        }
        return null;
    }

    /**
     * A thread reached `point` (about `topic`-`partition`, for `follower`; null where the point
     * has none): hold it while a rule matching it exists. `details` adds the point's own fields
     * to `gate_held`; it is read only when the thread is held.
     */
    void pass(
            String point, String topic, Integer partition, Integer follower,
            Supplier<Map<String, Object>> details) {
        if (closing) {
            return;
        }
        String[] rules = rules(node, point, topic, partition, follower);
        String rule = existing(rules);
        if (rule != null) {
            hold(point, topic, partition, follower, rules, rule, details);
        }
    }

    private void hold(
            String point, String topic, Integer partition, Integer follower, String[] rules,
            String rule, Supplier<Map<String, Object>> details) {
        String hook = "gate " + point;
        long hold = HOLDS.incrementAndGet();
        HELD.incrementAndGet();
        String marker = "held-" + rules[0].substring("hold-".length()) + "-" + hold;
        File markerFile = new File(dir, marker);
        long began = System.nanoTime();
        String reason = "error";
        try {
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("point", point);
            fields.put("follower", follower);
            fields.put("rule", rule);
            fields.put("hold", hold);
            fields.put("marker", marker);
            try {
                fields.putAll(details.get());
            } catch (Throwable t) {
                Failures.record(hook, t);
            }
            event("gate_held", topic, partition, fields).emit();
            writeMarker(markerFile, topic, partition, fields);
            File pass = new File(dir, "pass-" + marker.substring("held-".length()));
            reason = waitForRelease(hook, rules, rule, pass);
        } catch (Throwable t) {
            Failures.record(hook, t);
        } finally {
            try {
                Map<String, Object> fields = new LinkedHashMap<>();
                fields.put("point", point);
                fields.put("follower", follower);
                fields.put("rule", rule);
                fields.put("hold", hold);
                fields.put("reason", reason);
                fields.put("held_ms", (System.nanoTime() - began) / 1_000_000);
                event("gate_released", topic, partition, fields).emit();
            } catch (Throwable t) {
                Failures.record(hook, t);
            }
            try {
                Files.deleteIfExists(markerFile.toPath());
            } catch (Throwable t) {
                Failures.record(hook, t);
            }
            HELD.decrementAndGet();
        }
    }

    private static Event event(
            String kind, String topic, Integer partition, Map<String, Object> fields) {
        Event event = Event.of(kind);
        event.topic = topic;
        event.partition = partition;
        event.fields.putAll(fields);
        return event;
    }

    private void writeMarker(
            File markerFile, String topic, Integer partition, Map<String, Object> fields)
            throws IOException {
        Map<String, Object> content = new LinkedHashMap<>();
        content.put("node", node);
        content.put("topic", topic);
        content.put("partition", partition);
        content.putAll(fields);
        content.put("thread", Thread.currentThread().getName());
        StringBuilder line = new StringBuilder(256);
        Json.write(line, content);
        line.append('\n');
        Path tmp = new File(dir, "." + markerFile.getName() + ".tmp").toPath();
        Files.write(tmp, line.toString().getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, markerFile.toPath(), StandardCopyOption.ATOMIC_MOVE);
    }

    /** Waits until the thread may go on; returns why. */
    private String waitForRelease(String hook, String[] rules, String rule, File pass) {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        while (true) {
            if (closing) {
                return "jvm_shutdown";
            }
            if (existing(rules) == null) {
                return "rule_removed";
            }
            if (pass.exists()) {
                try {
                    Files.deleteIfExists(pass.toPath());
                } catch (IOException e) {
                    Failures.record(hook, e);
                }
                return "passed";
            }
            if (System.nanoTime() - deadline >= 0) {
                Failures.record(hook, "gate_timeout",
                    "held " + timeoutMs + " ms by " + rule + ", then released", null);
                return "timeout";
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();  // Kafka sees the interrupt as it would have
                return "interrupted";
            }
        }
    }

    /** The JVM shuts down: let every held thread go, and give them a moment to say so. */
    static void shutdown() {
        closing = true;
        long deadline = System.nanoTime() + SHUTDOWN_WAIT_MS * 1_000_000;
        while (HELD.get() > 0 && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
