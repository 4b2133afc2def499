package kafkarep.agent;

import java.nio.file.Path;

/**
 * The agent's argument string, `out=FILE,node=ID[,gate=DIR][,gate_timeout_ms=N]`: where to
 * append events, the node id, and the gate's directory (none: no gate) and safety timeout.
 */
record AgentArgs(Path out, int node, Path gate, long gateTimeoutMs) {
    /** How long the gate holds a thread at most, unless `gate_timeout_ms` says otherwise. */
    static final long GATE_TIMEOUT_MS = 300_000;

    static AgentArgs parse(String text) {
        Path out = null;
        Integer node = null;
        Path gate = null;
        long gateTimeoutMs = GATE_TIMEOUT_MS;
        for (String part : (text == null ? "" : text).split(",")) {
            if (part.isBlank()) {
                continue;
            }
            int eq = part.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("not key=value: " + part);
            }
            String key = part.substring(0, eq).trim();
            String value = part.substring(eq + 1).trim();
            switch (key) {
                case "out" -> out = Path.of(value);
                case "node" -> node = Integer.parseInt(value);
                case "gate" -> gate = Path.of(value);
                case "gate_timeout_ms" -> gateTimeoutMs = Long.parseLong(value);
                default -> throw new IllegalArgumentException("unknown key " + key);
            }
        }
        if (out == null || node == null) {
            throw new IllegalArgumentException("want out=FILE,node=ID, got " + text);
        }
        if (gateTimeoutMs <= 0) {
            throw new IllegalArgumentException("gate_timeout_ms must be positive: " + text);
        }
        return new AgentArgs(out, node, gate, gateTimeoutMs);
    }
}
