package kafkarep.agent;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The JVM's one writer of events: each event is one JSON line, numbered, appended to the file
 * with one write (no buffer to lose when the broker is killed).
 */
final class EventLog {
    private static volatile EventLog current;
    private static final AtomicLong WRITTEN = new AtomicLong();

    private final FileOutputStream out;
    private final int node;
    private long seq;

    private EventLog(FileOutputStream out, int node) {
        this.out = out;
        this.node = node;
    }

    static void open(Path file, int node) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        current = new EventLog(new FileOutputStream(file.toFile(), true), node);
    }

    static boolean isOpen() {
        return current != null;
    }

    static long written() {
        return WRITTEN.get();
    }

    static void emit(Event event) {
        EventLog log = current;
        if (log != null) {
            log.write(event);
        }
    }

    private synchronized void write(Event event) {
        // The sequence number is taken under the lock, so the file's order is the numbers' order.
        StringBuilder line = new StringBuilder(256);
        line.append("{\"seq\":").append(++seq);
        line.append(",\"ts_ms\":").append(System.currentTimeMillis());
        line.append(",\"node\":").append(node);
        line.append(",\"event\":");
        Json.string(line, event.kind);
        line.append(",\"topic\":");
        Json.write(line, event.topic);
        line.append(",\"partition\":");
        Json.write(line, event.partition);
        for (var field : event.fields.entrySet()) {
            line.append(',');
            Json.string(line, field.getKey());
            line.append(':');
            Json.write(line, field.getValue());
        }
        line.append(",\"thread\":");
        Json.string(line, Thread.currentThread().getName());
        line.append("}\n");
        try {
            out.write(line.toString().getBytes(StandardCharsets.UTF_8));
            WRITTEN.incrementAndGet();
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the events file", e);
        }
    }
}
