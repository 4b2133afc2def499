"""`kafkarep suite --prove`: a model's `kafkarep prove` beside its check.

What the command, the JUnit writer and the HTML report share about it: the outcome (met, not
met, not encoded, skipped as slow, error), the text of the summary column, the test cases (one
`prove:<property>` per property proved, and a model-level `prove` case for a problem about no one
property, a model prove does not encode or skips, or an error) and the JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from kafkarep.output.suite import MET, NOT_MET, SKIPPED, Case

if TYPE_CHECKING:  # the prover needs Z3 (the `prove` extra); a suite without --prove does not
    from kafkarep.symbolic.prove import Result
    from kafkarep.symbolic.verdict import Note, Proof

NOT_ENCODED = "not encoded"  # a model prove refuses (the ZooKeeper-era controller, a [plan], ...)
PROVE = "prove"  # the model-level case
COLOUR = {MET: "green", NOT_MET: "red", NOT_ENCODED: "dim", SKIPPED: "dim"}  # others: red


class Proved(NamedTuple):
    """What became of one model's prove in a suite."""

    outcome: str  # MET, NOT_MET, NOT_ENCODED, SKIPPED (`[prove] slow = true`) or ERROR
    proof: Proof | None = None
    note: str = ""  # why prove does not encode the model, why it was skipped, or the error
    seconds: float = 0.0
    log: str = ""  # what prove printed (the suite shows it when the outcome is not met)

    @property
    def problems(self) -> list[str]:
        return self.proof.problems if self.proof is not None else []

    def counts(self) -> str:
        """The verdicts by status: `2 proved, 1 unknown as noted`."""
        if self.proof is None:
            return self.note
        notes = _unknown_notes(self.proof)
        tally: dict[str, int] = {}
        for r in self.proof.results:
            noted = r.status == "unknown" and r.property in notes
            status = "unknown as noted" if noted else r.status
            tally[status] = tally.get(status, 0) + 1
        order = ("proved", "violated", "unknown", "unknown as noted", "disagrees")
        return ", ".join(f"{tally[s]} {s}" for s in order if s in tally)

    def cell(self) -> str:
        """The summary column: the outcome and the verdicts, `met: 3 proved`."""
        label = {MET: "met", NOT_MET: "NOT MET"}.get(self.outcome, self.outcome)
        if self.outcome in (NOT_ENCODED, SKIPPED):
            return label
        return f"{label}: {self.counts()}" if self.counts() else label

    def cases(self) -> list[Case]:
        """The JUnit cases: one per property, and `prove` for the rest; every problem fails
        exactly one of them."""
        if self.proof is None:
            if self.outcome == NOT_ENCODED:
                message = f"prove does not encode this model: {self.note}"
                return [Case(PROVE, "skipped", message, seconds=self.seconds)]
            if self.outcome == SKIPPED:
                return [Case(PROVE, "skipped", f"not proved: {self.note}")]
            return [Case(PROVE, "error", self.note or self.outcome, seconds=self.seconds)]
        notes = _unknown_notes(self.proof)
        names = [r.property for r in self.proof.results]
        assigned: dict[str, list[str]] = {}
        for problem in self.problems:
            about = problem.split(" ", 1)[0].split(".", 1)[0]
            assigned.setdefault(about if about in names else PROVE, []).append(problem)
        out = []
        for r in self.proof.results:
            problems = assigned.get(r.property, [])
            message, details = _summary(r, notes.get(r.property) is not None)
            if problems:
                details = "\n".join(problems) + ("\n\n" + details if details else "")
                out.append(Case(f"{PROVE}:{r.property}", "failed", problems[0], details, r.seconds))
            else:
                outcome = "skipped" if r.status == "unknown" else "passed"
                out.append(Case(f"{PROVE}:{r.property}", outcome, message, details, r.seconds))
        rest = assigned.get(PROVE, [])
        if rest:
            out.append(Case(PROVE, "failed", rest[0], "\n".join(rest)))
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"outcome": self.outcome, "seconds": round(self.seconds, 3)}
        if self.note:
            out["note"] = self.note
        if self.proof is not None:
            out.update({k: v for k, v in self.proof.to_json().items() if k != "model"})
        return out


def _summary(r: Result, noted: bool) -> tuple[str, str]:
    """A result in one line, and the lines below it (what was not discharged, the replay)."""
    failed = [f"not discharged: {o.invariant} under {o.action}: {o.status}" for o in r.failed]
    if r.status == "proved":
        return f"proved by induction: {len(r.obligations)} obligations", ""
    if r.status == "violated":
        details = f"reproduce: kafkarep replay {r.trace_file}" if r.trace_file else ""
        return f"violated ({r.clause}) at depth {r.depth}: {r.witness}", details
    if r.status == "unknown":
        first = f"{r.failed[0].invariant} under {r.failed[0].action}" if r.failed else ""
        why = f"not discharged: {first}" if first else (r.note or "not proved")
        if r.note and first:
            why += f"; {r.note}"
        return ("unknown as noted: " if noted else "unknown: ") + why, "\n".join(failed)
    return f"{r.status}: {r.note}", ""


def _unknown_notes(proof: Proof) -> dict[str, Note]:
    """The model's `[prove] unknown` notes. Imported here rather than at the top: the prover's
    modules need Z3 (the `prove` extra), which a suite run without --prove does without, and a
    `Proof` exists only where Z3 does."""
    from kafkarep.symbolic.verdict import unknown_notes

    return unknown_notes(proof.cfg)
