"""The docs cannot drift from the code: README's copy of the example model is the model file,
every state count a doc quotes for a model is that model's pin (`[expect] distinct_states`), and
every clause a doc names is a clause of its property.

The files read: README.md and every docs/*.md, docs/performance.md only up to its `## History`
heading (the dated figures of earlier models live there, and in CHANGELOG.md, which is not read).
Each checker is a function of the text, and a test runs each on a seeded mistake and shows that it
is reported.

How a pin is found: a model is named as `models/<path>.toml`, or as its path or stem in backticks
(`history/v35_last_replica_standing`, `kip966_small`); a count is a number followed by
"states", "distinct states" or "distinct", or the first number of a table cell under a heading
that says states. A count belongs to the model its table row names first; in a sentence or a line
of a code block, to the model named last before it there (or the only one named there, or else the
last one its paragraph or block named before it). Not pins: rates ("16,700 states per second"),
bounded and partial explorations ("to depth 8 (4,159 states", "40,701 states of `kip966_small` to
depth 14", "the first 6,000 states"), approximations ("about 20,000 states").
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Mapping
from typing import NamedTuple

import pytest

from kafkarep.properties import ALL, LIVENESS
from tests.helpers import ROOT

MODELS = ROOT / "models"
HISTORY = "## History"  # where docs/performance.md's dated text starts
DOCS = [
    f.relative_to(ROOT).as_posix()
    for f in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
]
# Docs known to quote a stale pin, and which: the test of each is expected to fail (strictly: once
# the doc is fixed, its entry must go).
STALE: dict[str, str] = {}


def reference_docs() -> dict[str, str]:
    """README.md and docs/*.md by path, each without its dated part."""
    return {doc: reference_text((ROOT / doc).read_text()) for doc in DOCS}


def reference_text(text: str) -> str:
    """The text before a `## History` heading (the whole text when it has none)."""
    at = re.search(rf"^{re.escape(HISTORY)}\b", text, re.M)
    return text if at is None else text[: at.start()]


# --- README's copy of models/kip966_small.toml --------------------------------------------------


def toml_block_after(text: str, marker: str) -> str:
    """The first ```toml block after the line that mentions `marker`."""
    at = text.index(marker)
    found = re.compile(r"^```toml\n(.*?)^```$", re.M | re.S).search(text, at)
    assert found is not None, f"no ```toml block after {marker}"
    return found.group(1)


def snippet_problems(readme: str, model_text: str) -> list[str]:
    """How README's copy of kip966_small.toml differs from the file: nothing, when the text is
    the same (and so, parsed, the same model)."""
    snippet = toml_block_after(readme, "This is `models/kip966_small.toml`")
    problems = []
    if tomllib.loads(snippet) != tomllib.loads(model_text):
        problems.append("README's kip966_small.toml parses to another model than the file")
    if snippet != model_text:
        ours, theirs = snippet.splitlines(), model_text.splitlines()
        line = next(
            (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False), 1) if a != b),
            min(len(ours), len(theirs)) + 1,
        )
        problems.append(f"README's kip966_small.toml differs from the file at line {line}")
    return problems


def test_readme_model_is_the_model_file() -> None:
    readme = (ROOT / "README.md").read_text()
    assert snippet_problems(readme, (MODELS / "kip966_small.toml").read_text()) == []


def test_a_changed_readme_model_is_reported() -> None:
    """Seeded: README's pin changed (parsed and textually different), and a comment changed
    (textually only)."""
    readme = (ROOT / "README.md").read_text()
    model = (MODELS / "kip966_small.toml").read_text()
    pin = re.search(r"^distinct_states = (\d+)", model, re.M)
    assert pin is not None
    repinned = readme.replace(pin.group(0), "distinct_states = 194345", 1)
    assert snippet_problems(repinned, model) == [
        "README's kip966_small.toml parses to another model than the file",
        f"README's kip966_small.toml differs from the file at line "
        f"{model[: pin.start()].count(chr(10)) + 1}",
    ]
    recommented = readme.replace("# broker ids 1..N", "# broker ids 0..N", 1)
    assert len(snippet_problems(recommented, model)) == 1


# --- pinned state counts ------------------------------------------------------------------------


def model_pins() -> dict[str, int]:
    """Every model's pinned distinct-state count, by its path under models/ without `.toml`
    (`history/v35_last_replica_standing`)."""
    pins = {}
    for path in sorted(MODELS.rglob("*.toml")):
        pin = tomllib.loads(path.read_text()).get("expect", {}).get("distinct_states")
        if pin is not None:
            pins[path.relative_to(MODELS).with_suffix("").as_posix()] = pin
    return pins


# A count a doc quotes as a model's: "239,323 states", "239,323 distinct states", "9,129
# distinct" (a run's verdict line), or the first number of a table cell under a heading that says
# states ("distinct states", "states to find it"). Not a rate ("16,700 states per second",
# "states/s"), nor the controller audit's count of steps ("44 distinct steps").
COUNT = re.compile(
    r"(?<![\d,.])(\d{1,3}(?:,\d{3})+|\d+)"
    r"(?= (?:distinct )?states\b(?!/s| per\b| a second\b)| distinct\b(?! states| steps))"
)
FIRST_NUMBER = re.compile(r"^\W*(\d{1,3}(?:,\d{3})+|\d+)\b")
# Not a pin, by the words around the count: a bounded or sampled exploration ("to depth 8
# (4,159 states", "40,701 states of `kip966_small` to depth 14", "within 5 steps, 84 states"),
# an approximation ("about 20,000 states"), part of a run ("the first 6,000 states", "pass
# 300,000 states").
NOT_A_PIN_BEFORE = re.compile(
    r"(?:\bdepth \d+|\bsteps?|\babout|\bover|\bfirst|\bunder|\bpass(?:es|ed)?)[,(|\s]{0,4}$"
)
NOT_A_PIN_AFTER = re.compile(r"^[^.;|]{0,30}\bto depth\b")
# A model named: models/<path>.toml, or `<path>`, `<path>.toml` in backticks, where <path> is a
# model's path under models/ or the stem of one (the stems are unique).
MENTION = re.compile(r"models/([\w/]+)\.toml|`([\w/]+?)(?:\.toml)?`")


class Unit(NamedTuple):
    """A piece of a doc whose counts are read with the models it names: a table row (with its
    table's headings), a line of a code block (with the block's lines before it) or a sentence
    (with its paragraph before it)."""

    line: int  # where the unit starts
    text: str
    context: str = ""  # the block's or the paragraph's text before the unit
    headings: tuple[str, ...] = ()


def units(text: str) -> Iterator[Unit]:
    lines = text.splitlines()
    code: list[str] | None = None  # the lines of the code block so far, when in one
    block = ""  # the code block just closed, which the paragraph right after it explains
    paragraph: list[tuple[int, str]] = []
    headings: tuple[str, ...] = ()

    def sentences() -> Iterator[Unit]:
        if not paragraph:
            return
        joined, before = "", block
        starts = []  # (where in joined, line number)
        for number, line in paragraph:
            starts.append((len(joined), number))
            joined += line + " "
        at = 0
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z`*(\[])", joined.strip()):
            at = joined.index(sentence, at)
            number = max(n for where, n in starts if where <= at)
            yield Unit(number, sentence, before)
            before += " " + sentence
        paragraph.clear()

    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            yield from sentences()
            block = "" if code is None else "\n".join(code)
            code = [] if code is None else None
        elif code is not None:
            yield Unit(number, line, "\n".join(code))
            code.append(line)
        elif line.lstrip().startswith("|"):
            yield from sentences()
            block = ""
            cells = tuple(c.strip() for c in line.strip().strip("|").split("|"))
            if not headings:
                headings = cells
            elif not all(set(c) <= set("-: ") for c in cells):
                yield Unit(number, line, headings=headings)
        else:
            headings = ()
            if line.strip() and not line.startswith("#"):
                paragraph.append((number, line))
            elif paragraph or line.startswith("#"):
                yield from sentences()
                block = ""
    yield from sentences()


def resolve(name: str, pins: Mapping[str, int]) -> str | None:
    """The model a name in a doc means, if it means one with a pin: a path under models/ (with or
    without `models/`), or the stem of one."""
    name = name.removeprefix("models/")
    if name in pins:
        return name
    by_stem = [path for path in pins if "/" not in name and path.rsplit("/", 1)[-1] == name]
    return by_stem[0] if len(by_stem) == 1 else None


def named(text: str, pins: Mapping[str, int]) -> list[tuple[int, str]]:
    """The models a text names, each with where."""
    return [
        (found.start(), model)
        for found in MENTION.finditer(text)
        if (model := resolve(found.group(1) or found.group(2), pins)) is not None
    ]


def counts(unit: Unit) -> Iterator[tuple[int, str]]:
    """The counts a unit quotes, each with where."""
    if not unit.headings:
        for found in COUNT.finditer(unit.text):
            yield found.start(1), found.group(1)
        return
    at = 0
    for heading, cell in zip(unit.headings, unit.text.strip().strip("|").split("|"), strict=False):
        at = unit.text.index(cell, at)
        first = FIRST_NUMBER.match(cell) if "states" in heading else None
        if first:
            yield at + first.start(1), first.group(1)
        for found in COUNT.finditer(cell):
            if first is None or found.start(1) != first.start(1):
                yield at + found.start(1), found.group(1)


def stale_pins(source: str, text: str, pins: Mapping[str, int]) -> list[str]:
    """Every count the text quotes for a model that is not the model's pin, as
    `source:line: model: N states, pinned M`. A count in a table row is the model's the row names
    first; in a sentence, the model's named last before it (or the one model the sentence names,
    or else the last model its paragraph named before it)."""
    problems = []
    for unit in units(text):
        models = named(unit.text, pins)
        for at, count in counts(unit):
            if NOT_A_PIN_BEFORE.search(unit.text[max(0, at - 25) : at]) or NOT_A_PIN_AFTER.search(
                unit.text[at + len(count) :]
            ):
                continue
            before = [model for where, model in models if where < at]
            if unit.headings and models:
                model = models[0][1]
            elif before:
                model = before[-1]
            elif len({model for _, model in models}) == 1:
                model = models[0][1]
            elif not models and (earlier := named(unit.context, pins)):
                model = earlier[-1][1]
            else:
                continue
            if int(count.replace(",", "")) != pins[model]:
                problems.append(
                    f"{source}:{unit.line}: {model}: {count} states, pinned {pins[model]:,}"
                )
    return problems


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(d, marks=pytest.mark.xfail(strict=True, reason=STALE[d])) if d in STALE else d
        for d in DOCS
    ],
)
def test_every_quoted_count_is_the_models_pin(doc: str) -> None:
    text = reference_text((ROOT / doc).read_text())
    assert stale_pins(doc, text, model_pins()) == []


def test_a_quoted_count_that_is_not_the_pin_is_reported() -> None:
    """Seeded both ways: a doc quoting an old count, and a model whose pin moved."""
    pins = model_pins()
    text = (
        "| `models/kip966_small.toml` | holds, 239,323 distinct states (261,730 with "
        "`--no-reduction`) |\n\n"
        "The fixed models hold: `kafka_6361_single_round_truncation_fixed` (67,698 states), "
        "`models/kip966_small.toml` (KAFKA-7128's fix: 194,345 states, 25 s).\n"
    )
    assert stale_pins("doc.md", text, pins) == [
        "doc.md:3: kip966_small: 194,345 states, pinned 239,323"
    ]
    moved = {**pins, "history/kafka_6361_single_round_truncation_fixed": 67_699}
    assert stale_pins("doc.md", text, moved) == [
        "doc.md:3: history/kafka_6361_single_round_truncation_fixed: 67,698 states, pinned 67,699",
        "doc.md:3: kip966_small: 194,345 states, pinned 239,323",
    ]
    # an audit's count of controller steps is not a count of states; a verdict line's is
    audit = "`kafkarep check models/kip966_small.toml` says 44 distinct steps, 44 agreed.\n"
    assert stale_pins("doc.md", audit, pins) == []
    verdict = "`kafkarep check models/kip966_small.toml` says 44 distinct, complete.\n"
    assert stale_pins("doc.md", verdict, pins) == [
        "doc.md:1: kip966_small: 44 states, pinned 239,323"
    ]
    readme = (ROOT / "README.md").read_text()
    found = stale_pins("README.md", readme, {**pins, "kip966_small": 1})
    assert [p.split(": ", 1)[1] for p in found] == ["kip966_small: 239,323 states, pinned 1"]


def test_history_is_not_read() -> None:
    text = "Now 239,323 states.\n\n## History\n\n`kip966_small`: 194,345 states then.\n"
    assert reference_text(text) == "Now 239,323 states.\n\n"


# --- property and clause names ------------------------------------------------------------------

# `name.clause` in backticks whose name is a property's: it must be one of that property's
# clauses.
QUALIFIED = re.compile(r"`([a-z_]+)\.([a-z_]+)`")
# Not clauses, though named like them: Kafka's feature `metadata.version`, and the checks of a
# real cluster's logs that the model has no clause for (docs/validate-log.md,
# kafkarep/realcluster/data_plane.py): Log Matching's two other forms; a trace directory's file
# (docs/trace-validation.md).
NOT_CLAUSES = frozenset(
    {"metadata.version", "log_matching.same_epoch", "log_matching.prefix", "metadata.txt"}
)
BACKTICKED = re.compile(r"`([a-z_]+)`")


def clause_names() -> dict[str, set[str]]:
    """Every property's clauses by the property's name (a liveness property is named whole)."""
    names: dict[str, set[str]] = {p.name: set() for p in LIVENESS}
    names |= {p.name: {c.name for c in p.clauses} for p in ALL}
    return names


def unknown_clauses(source: str, text: str) -> list[str]:
    """Every clause the text names that its property does not have: `property.clause` anywhere,
    and the clauses a table lists in a column headed "clauses" beside the property (README's
    table of the properties)."""
    clauses = clause_names()
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        for found in QUALIFIED.finditer(line):
            prop, clause = found.groups()
            if (
                prop in clauses
                and clause not in clauses[prop]
                and f"{prop}.{clause}" not in NOT_CLAUSES
            ):
                problems.append(f"{source}:{number}: {prop}.{clause}")
    for unit in units(text):
        cells = [c.strip() for c in unit.text.strip().strip("|").split("|")]
        if "clauses" not in unit.headings or not cells:
            continue
        prop = BACKTICKED.fullmatch(cells[0])
        if prop is None or prop.group(1) not in clauses:
            continue
        listed = cells[unit.headings.index("clauses")] if len(cells) > 1 else ""
        for clause in BACKTICKED.findall(listed):
            if clause not in clauses[prop.group(1)]:
                problems.append(f"{source}:{unit.line}: {prop.group(1)}.{clause}")
    return problems


def test_every_clause_a_doc_names_exists() -> None:
    problems = [p for f, text in reference_docs().items() for p in unknown_clauses(f, text)]
    assert problems == []


def test_a_clause_that_does_not_exist_is_reported() -> None:
    """Seeded: README's table as it was (`no_committed_record_lost`'s clause called
    `somewhere`), and a qualified name in a sentence."""
    table = (
        "| property | clauses | meaning |\n| --- | --- | --- |\n"
        "| `leader_completeness` | `committed_log`, `acked_writes` | ... |\n"
        "| `no_committed_record_lost` | `somewhere` | ... |\n"
    )
    assert unknown_clauses("doc.md", table) == ["doc.md:4: no_committed_record_lost.somewhere"]
    sentence = "It names `min_isr_commit.acks`, `min_isr_commit.ack` and `metadata.version`.\n"
    assert unknown_clauses("doc.md", sentence) == ["doc.md:1: min_isr_commit.ack"]
    readme = (ROOT / "README.md").read_text()
    wrong = readme.replace(
        "| `acked_writes` | every positively acked", "| `somewhere` | every positively acked"
    )
    assert wrong != readme
    assert unknown_clauses("README.md", wrong) != []
