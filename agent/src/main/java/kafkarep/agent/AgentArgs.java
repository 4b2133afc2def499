package kafkarep.agent;

import java.nio.file.Path;

/** The agent's argument string, `out=FILE,node=ID`: where to append events, and the node id. */
record AgentArgs(Path out, int node) {
    static AgentArgs parse(String text) {
        Path out = null;
        Integer node = null;
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
                default -> throw new IllegalArgumentException("unknown key " + key);
            }
        }
        if (out == null || node == null) {
            throw new IllegalArgumentException("want out=FILE,node=ID, got " + text);
        }
        return new AgentArgs(out, node);
    }
}
