package kafkarep.agent;

import java.util.Set;
import java.util.TreeSet;

/**
 * Loads and initializes every class the agent hooks, so that a JVM started with the agent and
 * Kafka's jars writes an `instrumented` event for each (or an `agent_error` for a hook its class
 * lacks) without running a broker. Initializing links the classes, so the JVM verifies the
 * instrumented code too:
 *
 * <pre>java -javaagent:kafkarep-agent.jar=out=F,node=0 -cp kafkarep-agent.jar:KAFKA/libs/* kafkarep.agent.HookCheck</pre>
 */
public final class HookCheck {
    private HookCheck() {}

    public static void main(String[] args) {
        Set<String> classes = new TreeSet<>();
        for (Hook hook : Hooks.ALL) {
            classes.add(hook.className());
        }
        int missing = 0;
        for (String name : classes) {
            try {
                Class.forName(name, true, HookCheck.class.getClassLoader());
                System.out.println("loaded " + name);
            } catch (ClassNotFoundException | LinkageError e) {
                System.out.println("cannot load " + name + ": " + e);
                missing++;
            }
        }
        System.exit(missing == 0 ? 0 : 1);
    }
}
