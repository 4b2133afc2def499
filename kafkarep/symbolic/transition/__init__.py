"""The transition relation: every action of the cluster model over symbolic states, one module
per concrete module it mirrors (`data`, `alter_partition`, `metadata`, `lifecycle`, `admin` for
`kafkarep/model/actions/`; `controller`, `hwm`, `logs`, `metadata_cache` for the rest of
`kafkarep/model/`).

One `Instance` per (family, actor[, fixed argument]) of `kafkarep.model.actions`, with a guard
(when the concrete family would list the action) and an update (the successor the concrete
`apply` computes), both written with `ops` so that they run on concrete projections (the
agreement test) and on Z3 terms (BMC and induction). Two families take a symbolic argument: the
followers a leader drops from its ISR (a broker set) and the metadata record a broker applies
(its partition epoch).

The relation of one step is: some instance's guard holds and the next state is its update.
"""

from kafkarep.symbolic.transition.instance import Instance
from kafkarep.symbolic.transition.relation import BUILDERS, Relation

__all__ = ["BUILDERS", "Instance", "Relation"]
