"""The symbolic transition relation agrees with the concrete rules on every (state, action)
pair of small bounded explorations: the same enabled actions (disabled and rejected ones
included), the same successors on the projection, the same property verdicts; and the checks
find a seeded disagreement."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import tomllib
from types import ModuleType
from typing import Any

import pytest

from kafkarep.model.config import ModelConfig
from kafkarep.model.domain import Domain
from kafkarep.model.initial import initial_state
from kafkarep.properties import completeness
from kafkarep.properties.model_files import load_model, parse_model
from kafkarep.rules import terms
from kafkarep.symbolic import agreement, ops, transition
from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.initial import model_initial
from kafkarep.symbolic.projection import project
from kafkarep.symbolic.state import ClusterState, PartitionRegistration
from kafkarep.symbolic.transition import ghost
from kafkarep.symbolic.transition.cluster import Cluster
from tests.helpers import ROOT

MODELS = ROOT / "models"

# Every action family at once (4 brokers: reassignment adds one), with the given rule options.
ALL_FAMILIES = """
[cluster]
brokers = 4
replicas = [1, 2, 3]
isr = [1, 2]
leader = 1
min_isr = 2
fenced = [3]
records = {records}
[rules]
{rules}
[faults]
fences = 1
clean_shutdowns = 1
unclean_shutdowns = 1
lossy_unclean_shutdowns = 1
isr_shrinks = 1
reassignments = 1
reassignment_cancels = 1
preferred_elections = 1
unclean_elections = 1
[reassignment]
targets = [[2, 4], [4, 3, 1]]
"""

VARIANTS = {
    "kip966": 'metadata_version = "4.0"\nelr = true',
    "protocol-description": 'metadata_version = "4.0"\nelr = true\n'
    'reassignment_completion = "protocol-description"\n'
    'unclean_shutdown_detection = "previous-epoch"\nuse_last_known_leader = false\n'
    'pending_isr_on_metadata = "keep-newer"',
    "v3.1-unclean": 'kafka_version = "3.9"\nmetadata_version = "3.1"\n'
    "unclean_leader_election = true",
}


def variant(name: str, records: int = 1) -> ModelConfig:
    text = ALL_FAMILIES.format(records=records, rules=VARIANTS[name])
    return parse_model(tomllib.loads(text), f"{name}.toml")


def transition_modules(name: str) -> list[ModuleType]:
    """The modules of the transition relation that call `name` (each imports it: a patch of it
    is made in each)."""
    return [
        module
        for info in pkgutil.iter_modules(transition.__path__)
        if hasattr(module := importlib.import_module(f"{transition.__name__}.{info.name}"), name)
    ]


def assert_agrees(result: agreement.Agreement) -> None:
    shown = [f"{d.action}: {d.problem}" for d in result.disagreements[:5]]
    assert not result.disagreements, "\n".join(shown)


@pytest.mark.parametrize(
    "model, depth",
    [
        ("history/v35_last_replica_standing.toml", 5),
        ("kip966_small.toml", 6),
        ("mutations/alter_partition_partition_epoch.toml", 4),
        ("mutations/leader_epoch_reset_followers.toml", 4),
        ("history/kafka_14139_stale_broker_epoch.toml", 5),
        ("mutations/isr_join_fetch_offset_at_hwm.toml", 5),
    ],
)
def test_every_pair_of_a_bounded_exploration_agrees(model: str, depth: int) -> None:
    result = agreement.check(load_model(MODELS / model), depth)
    assert result.states > 200 and result.enabled > result.states
    assert_agrees(result)


def test_the_leaders_own_checks_are_compared() -> None:
    """The leader's metadata cache and its lag timer are steps of their own, compared like
    every other; so is Kafka 3.5's HWM, which waits for every caught-up follower, eligible or
    not, and a leader whose HWM waits for none (no lag timer)."""
    today = agreement.check(load_model(MODELS / "kip966_small.toml"), 7)
    assert {"apply_registrations", "replica_lag"} <= set(today.families)
    assert_agrees(today)
    path = MODELS / "history" / "v35_last_replica_standing.toml"
    v35 = agreement.check(load_model(path), 5)
    assert {"apply_registrations", "replica_lag"} <= set(v35.families)
    assert_agrees(v35)
    text = path.read_text().replace('"caught-up"', '"none"')
    assert '"none"' in text
    none = agreement.check(parse_model(tomllib.loads(text), "none.toml"), 5)
    assert "replica_lag" not in none.families and "apply_registrations" in none.families
    assert_agrees(none)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_family_and_rule_option_agrees(name: str) -> None:
    result = agreement.check(variant(name, records=2), 3, limit=150)
    assert result.states == 150
    assert_agrees(result)


def test_the_z3_terms_agree_and_admit_only_the_concrete_successor() -> None:
    cfg = load_model(MODELS / "history" / "v35_last_replica_standing.toml")
    result = agreement.z3_check(cfg, 3, limit=30, exact=3)
    assert result.states == 30 and result.enabled > 30
    assert not result.disagreements, result.disagreements[:3]


def test_the_initial_state_is_the_models() -> None:
    for model in (
        "kip966_small.toml",
        "history/v35_last_replica_standing.toml",
        "reassignment.toml",
    ):
        cfg = load_model(MODELS / model)
        enc = Encoding(cfg)
        assert project(enc, initial_state(cfg), {}) == model_initial(enc)


def test_a_seeded_representation_bug_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """The controller rules are written once, but the symbolic domain represents their values
    (here: a broker set's size counts one member too many, so an ISR below MinISR looks at
    MinISR): the agreement check names the fields that differ (the ELR the fence computes)."""
    real = Terms.size

    def wrong(self: Terms, s: ops.Term) -> ops.Term:
        return real(self, s) + 1

    monkeypatch.setattr(Terms, "size", wrong)
    result = agreement.check(load_model(MODELS / "kip966_small.toml"), 5)
    assert any("elr" in d.problem for d in result.disagreements)


def test_a_bug_only_in_the_z3_terms_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A minimum that is a maximum on Z3 terms only: concrete evaluation cannot see it, the Z3
    evaluation does."""
    real = ops.imin

    def wrong(a: ops.Term, b: ops.Term) -> ops.Term:
        if ops.const(a) and ops.const(b):
            return real(a, b)
        return ops.ite(a <= b, b, a)

    originals = {real, terms.imin}
    for module in [m for name, m in sys.modules.items() if name.startswith("kafkarep.")]:
        if getattr(module, "imin", None) in originals:  # every module that imported it
            monkeypatch.setattr(module, "imin", wrong)
    cfg = load_model(MODELS / "kip966_small.toml")
    assert not agreement.check(cfg, 3).disagreements
    result = agreement.z3_check(cfg, 3, limit=20)
    assert any("hwm" in d.problem for d in result.disagreements)


# The only ISR member fenced, unclean election on: the exact election takes the first replica.
UNCLEAN_ALONE = """
[cluster]
brokers = 3
replicas = [1, 2, 3]
isr = [1]
leader = 1
min_isr = 1
records = 1
[rules]
kafka_version = "3.9"
metadata_version = "3.1"
unclean_leader_election = true
[faults]
fences = 1
"""


@pytest.mark.parametrize(
    "cfg",
    [load_model(MODELS / "kip966_small.toml"), parse_model(tomllib.loads(UNCLEAN_ALONE), "u.toml")],
    ids=["kip966_small", "unclean"],
)
def test_free_elections_cover_the_exact_ones(cfg: ModelConfig) -> None:
    """Induction's over-approximated elections (any eligible replica) admit every step of the
    exact relation, and elect another than the first eligible somewhere."""
    result = agreement.free_elections_cover(cfg, 5 if cfg.topic.unclean_leader_election else 6)
    assert result.steps > 500 and result.widened > 0
    assert not result.disagreements, result.disagreements[:3]


def test_a_free_election_of_an_ineligible_replica_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A free choice that may always be unclean (any replica, in a clean election too): the
    cover check names a leader it elects from outside the ISR and ELR."""
    real = Terms.widen_election

    def wrong(self, p, replicas, valid, unclean_ok, prior, first):  # type: ignore[no-untyped-def]
        return real(self, p, replicas, valid, lambda r: True, False, first)

    monkeypatch.setattr(Terms, "widen_election", wrong)
    result = agreement.free_elections_cover(load_model(MODELS / "kip966_small.toml"), 6)
    assert any("elects" in d.problem for d in result.disagreements)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["kip966_small.toml", "reassignment.toml"])
def test_the_history_variables_are_read_by_nothing_else(model: str) -> None:
    """`Ghost.committed_in` and `Ghost.led_since` are history variables of the proofs: no guard
    and no update of another field mentions them, so they cannot change what the rules do."""
    import z3

    from kafkarep.symbolic.transition import Relation

    enc = Encoding(load_model(MODELS / model), abstract_history=True)
    x = enc.fresh("x")
    since = x.ghost.led_since if enc.reassigning else ()  # elsewhere a constant 0
    ghost = {str(v) for v in (*x.ghost.committed_in, *since)}
    assert len(ghost) == enc.r + len(since) and all(z3.is_const(v) for v in since)

    def mentions(term: Any) -> bool:
        if not z3.is_expr(term):
            return False
        todo: list[Any] = [term]
        seen: set[int] = set()
        while todo:
            t = todo.pop()
            if t.get_id() in seen:
                continue
            seen.add(t.get_id())
            if z3.is_const(t) and str(t) in ghost:
                return True
            todo.extend(t.children())
        return False

    def leaves(value: object) -> list[object]:
        if isinstance(value, tuple):
            return [leaf for item in value for leaf in leaves(item)]
        return [value]

    rel = Relation(enc)
    checked = 0
    for k, instance in enumerate(rel.instances):
        arg: Any = None
        if instance.arg == "i":
            arg = z3.Int(f"a{k}")
        elif instance.arg == "s":
            arg = enc.sets.var(f"a{k}")
        elif instance.arg == "h":
            arg = enc.fresh(f"a{k}", PartitionRegistration)
        after = instance.update(x, arg)
        assert not mentions(ops.bool_term(instance.guard(x, arg))), instance.label
        others = after._replace(ghost=after.ghost._replace(committed_in=(), led_since=()))
        assert isinstance(others, ClusterState)
        assert not any(mentions(leaf) for leaf in leaves(others)), instance.label
        checked += 1
    assert checked == len(rel.instances) > 20


def test_a_wrong_commit_epoch_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """The history variable's update is checked like every other field: recording the epoch
    after the leader's instead of its own is a disagreement."""
    real = ghost.advance_hwm

    def wrong(
        enc: Encoding, sym: ClusterState, broker: int, advance: Any, offset: Any
    ) -> ClusterState:
        out = real(enc, sym, broker, advance, offset)
        g = out.ghost
        shifted = tuple(
            ops.ite(ops.ne(a, b), a + 1, a)
            for a, b in zip(g.committed_in, sym.ghost.committed_in, strict=True)
        )
        return out._replace(ghost=g._replace(committed_in=shifted))

    for module in transition_modules("advance_hwm"):
        monkeypatch.setattr(module, "advance_hwm", wrong)
    result = agreement.check(load_model(MODELS / "kip966_small.toml"), 5)
    assert any("committed_in" in d.problem for d in result.disagreements)


def test_a_wrong_leadership_start_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Ghost.led_since` is checked like every other field: a leader kept by a new leader epoch
    (a reassignment's completion) said to lead since that epoch is a disagreement."""
    real = Cluster.leads_since

    def wrong(self: Cluster, before: ClusterState, after: ClusterState, broker: int, r: Any) -> Any:
        out = real(self, before, after, broker, r)
        since = list(out.ghost.led_since)
        since[broker - 1] = r.leader_epoch
        return out._replace(ghost=out.ghost._replace(led_since=tuple(since)))

    monkeypatch.setattr(Cluster, "leads_since", wrong)
    result = agreement.check(load_model(MODELS / "reassignment.toml"), 10)
    assert any("led_since" in d.problem for d in result.disagreements)


def test_a_property_clause_is_one_predicate_both_engines_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`prove` reads `kafkarep/properties/`: each clause it proves is the predicate the clause
    declares, run on the explorer's values and on the prover's terms alike."""
    domains: set[str] = set()
    real = completeness._serving

    def spy(d: Any, state: Any, leader: Any, members: Any, holds: Any) -> Any:
        domains.add(type(d).__name__)
        return real(d, state, leader, members, holds)

    monkeypatch.setattr(completeness, "_serving", spy)
    result = agreement.check(load_model(MODELS / "kip966_small.toml"), 4)
    assert not result.disagreements
    assert domains == {"Domain", "Cluster"}


def test_a_clause_read_differently_by_one_domain_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded: the explorer's domain says every replica holds the committed log; the clauses
    that ask it disagree with the prover's."""
    monkeypatch.setattr(Domain, "holds_committed", lambda self, state, replica: True)
    result = agreement.check(load_model(MODELS / "history" / "v35_last_replica_standing.toml"), 8)
    assert any("clause leader_" in d.problem for d in result.disagreements)
