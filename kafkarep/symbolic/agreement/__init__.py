"""The agreement checks: the symbolic rules against the concrete ones, on every (state, action)
pair of a bounded exploration.

For each concrete state reached (breadth first, to a depth) the projection is taken, and every
instance of the transition relation is evaluated on it, for every argument: the instances whose
guard holds must be exactly the concrete enabled actions, and each update must equal the
projection of the concrete successor (`rules`). The evaluation runs the same functions that
build the Z3 relation, on Python values; `z3_terms` also evaluates the Z3 terms themselves on
some states, `elections` compares induction's free elections with the exact ones, and
`reachable` evaluates the auxiliary invariants and history facts on the states visited.
"""

from kafkarep.symbolic.agreement.disagreement import Disagreement, concrete_source, step
from kafkarep.symbolic.agreement.elections import Cover, Elections, free_elections_cover
from kafkarep.symbolic.agreement.reachable import Unsound, check_invariants
from kafkarep.symbolic.agreement.rules import Agreement, check, check_state
from kafkarep.symbolic.agreement.z3_terms import Z3Agreement, z3_check

__all__ = [
    "Agreement",
    "Cover",
    "Disagreement",
    "Elections",
    "Unsound",
    "Z3Agreement",
    "check",
    "check_invariants",
    "check_state",
    "concrete_source",
    "free_elections_cover",
    "step",
    "z3_check",
]
