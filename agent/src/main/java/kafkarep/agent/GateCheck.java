package kafkarep.agent;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Drives the gate without Kafka, to check its file protocol (tests/kraft/test_agent_gate.py):
 * each ARRIVAL, `POINT:TOPIC:PARTITION:FOLLOWER` (empty where none), is a thread `arrival-N`
 * (N from 1) that reaches the gate point as a broker thread would; it prints `passed N
 * interrupted=BOOL` once the gate let it go. A line `interrupt N` on stdin interrupts arrival N.
 *
 * <pre>java -cp kafkarep-agent.jar kafkarep.agent.GateCheck out=F,node=ID,gate=DIR ARRIVAL...</pre>
 */
public final class GateCheck {
    private GateCheck() {}

    public static void main(String[] args) throws Exception {
        KafkarepAgent.start(args[0]);
        Gate gate = Gate.current();
        if (gate == null) {
            throw new IllegalArgumentException("GateCheck needs gate=DIR: " + args[0]);
        }
        List<Thread> arrivals = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            String[] at = (args[i] + ":::").split(":", -1);
            int n = i;
            Thread thread = new Thread(() -> {
                gate.pass(at[0], at[1].isEmpty() ? null : at[1],
                    at[2].isEmpty() ? null : Integer.valueOf(at[2]),
                    at[3].isEmpty() ? null : Integer.valueOf(at[3]),
                    () -> Map.of("arrival", n));
                boolean interrupted = Thread.currentThread().isInterrupted();
                synchronized (System.out) {
                    System.out.println("passed " + n + " interrupted=" + interrupted);
                    System.out.flush();
                }
            }, "arrival-" + n);
            thread.start();
            arrivals.add(thread);
        }
        Thread commands = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    String[] words = line.trim().split("\\s+");
                    if (words.length == 2 && words[0].equals("interrupt")) {
                        arrivals.get(Integer.parseInt(words[1]) - 1).interrupt();
                    }
                }
            } catch (Exception e) {
                System.err.println("GateCheck: " + e);
            }
        }, "commands");
        commands.setDaemon(true);
        commands.start();
        for (Thread thread : arrivals) {
            thread.join();
        }
    }
}
