"""The violated property checked on the real cluster at the end of a reproduction, for the clauses
a cluster's records can show. The True HWM is the highest HWM any leader recorded (`hwm_moved`);
a member's log end is its broker's last recorded one."""

from __future__ import annotations

from collections.abc import Callable

from kafkarep.reproduce.recorded import Recorded

Verdict = Callable[[Recorded], str | None]


def _incomplete_member(kind: str) -> Verdict:
    def check(recorded: Recorded) -> str | None:
        controller = recorded.controller_view()
        hwm = recorded.true_hwm()
        for member in controller[f"controller.{kind}"]:
            if not recorded.cluster.brokers[member].alive():
                continue  # offline members are exempt, as in the model
            log_end = recorded.broker_view(member).get(f"b{member}.log_end", 0)
            if log_end < hwm:
                return (
                    f"replica {member} in the {kind.upper()} has log end {log_end} < the "
                    f"highest HWM {hwm}"
                )
        return None

    return check


def _leader_lacks(what: str) -> Verdict:
    def check(recorded: Recorded) -> str | None:
        leader = recorded.controller_view()["controller.leader"]
        if leader < 0 or not recorded.cluster.brokers[leader].alive():
            return None
        log_end = recorded.broker_view(leader).get(f"b{leader}.log_end", 0)
        if what == "committed" and log_end < (hwm := recorded.true_hwm()):
            return f"leader {leader} has log end {log_end} < the highest HWM {hwm}"
        missing = [o for o in recorded.acked_offsets if o >= log_end]
        if what == "acked" and missing:
            return (
                f"leader {leader}'s log ends at {log_end}: the write acked at {missing[0]} is lost"
            )
        return None

    return check


VERDICTS: dict[str, Verdict] = {
    "leader_candidate_completeness.isr": _incomplete_member("isr"),
    "leader_candidate_completeness.elr": _incomplete_member("elr"),
    "leader_completeness.committed_log": _leader_lacks("committed"),
    "leader_completeness.acked_writes": _leader_lacks("acked"),
}
