package kafkarep.agent;

import java.util.List;
import java.util.stream.Collectors;

/**
 * One method of Kafka the agent hooks: its class and name, how many parameters it takes (which
 * tells overloads and Scala's forwarders apart; a method whose count changed between the
 * releases read has one count for each), the event it records and the advice that does.
 */
record Hook(
        String className, String method, List<Integer> parameters, String event, Class<?> advice) {
    Hook {
        parameters = List.copyOf(parameters);
        if (parameters.isEmpty()) {
            throw new IllegalArgumentException("hook " + method + " has no parameter count");
        }
    }

    /** A hook whose method takes the same number of parameters at every release read. */
    Hook(String className, String method, int parameters, String event, Class<?> advice) {
        this(className, method, List.of(parameters), event, advice);
    }

    String name() {
        return className.substring(className.lastIndexOf('.') + 1) + "." + method;
    }

    /** The parameter counts as text: "4" or "4 or 5". */
    String describeParameters() {
        return parameters.stream().map(String::valueOf).collect(Collectors.joining(" or "));
    }
}
