"""`kafkarep suite --prove`: each model's `kafkarep prove` after its check, with the model's
`[prove]` settings (induction, then bounded model checking where induction does not close),
judged like `kafkarep prove MODEL` judges it. A model prove does not encode is "not encoded",
which is no failure; an error in one model's prove is reported for it, and the suite goes on."""

from __future__ import annotations

import io
import multiprocessing
import os
import time
from multiprocessing.connection import Connection
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kafkarep.common.exit_codes import internal_error
from kafkarep.model.config import ModelConfig
from kafkarep.output.suite import ERROR, MET, NOT_MET, SKIPPED
from kafkarep.output.suite_proofs import COLOUR, NOT_ENCODED, Proved

# The prover needs Z3, the `prove` extra; `kafkarep suite` without --prove runs without it. The
# first use of --prove (`check_settings`, before any model runs) then raises the import's
# ModuleNotFoundError, which `kafkarep` reports in one line naming the extra (cli/main.py).
try:
    import z3

    from kafkarep.cli.prove import Options, configure, not_encoded, prove_model, selected
    from kafkarep.symbolic.prove import Result
except ModuleNotFoundError as missing:
    if missing.name != "z3":
        raise
    _NO_Z3: ModuleNotFoundError | None = missing
else:
    _NO_Z3 = None


def _needs_z3() -> None:
    if _NO_Z3 is not None:
        raise _NO_Z3


def options(workers: int, reports: Path) -> Options:
    """The suite's `--workers` (0: every core) discharge each model's obligations."""
    _needs_z3()
    return Options(workers=workers or os.cpu_count() or 1, reports=reports, quiet=True)


def check_settings(cfg: ModelConfig) -> None:
    """A bad `[prove]` key, or a property prove does not check among those of a model it
    encodes, stops the suite before anything runs (`UsageError`, exit code 2)."""
    _needs_z3()
    cfg, _ = configure(cfg, Options())
    if not_encoded(cfg) is None:
        selected(cfg, None)


def prove_one(cfg: ModelConfig, opts: Options, console: Console) -> Proved:
    """Prove one model in a process of its own; print one line, and what prove printed when it
    is not met."""
    _needs_z3()
    proved = _in_child(cfg, opts)
    colour = COLOUR.get(proved.outcome, "red")
    console.print(
        f"{escape(cfg.name)}: prove [{colour}]{escape(proved.cell())}[/{colour}] "
        f"({proved.seconds:.1f}s)",
        highlight=False,
    )
    if proved.outcome in (NOT_MET, ERROR) and proved.log:
        console.print(proved.log, highlight=False, markup=False, end="")
    return proved


def not_proved(cfg: ModelConfig, why: str, console: Console) -> Proved:
    """A model whose proof the suite skips (`[prove] slow = true`), said in one line."""
    console.print(f"{escape(cfg.name)}: prove [dim]skipped[/dim]: {escape(why)}", highlight=False)
    return Proved(SKIPPED, note=why)


def _in_child(cfg: ModelConfig, opts: Options) -> Proved:
    """`_prove` in a forked process, in a Z3 context of its own, so that a model's proof does
    not depend on what was proved before it: Z3's search depends on the terms its context
    already holds (a BMC query that took 144 s alone took 704 s after another model's proofs in
    the same process). And a prover that dies (out of memory, say) is that model's error, not
    the suite's end."""
    started = time.monotonic()
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(cfg, opts, send))
    child.start()
    send.close()
    try:
        proved: Proved | None = receive.recv()
    except EOFError:  # the child ended without an answer
        proved = None
    except BaseException:
        child.terminate()
        raise
    finally:
        receive.close()
        child.join()
    if proved is None:
        note = f"internal error: the prover's process ended with exit code {child.exitcode}"
        return Proved(ERROR, None, note, time.monotonic() - started)
    return proved


def _child(cfg: ModelConfig, opts: Options, send: Connection) -> None:
    z3.z3._main_ctx = None  # a new context: none of the terms the suite built before the fork
    send.send(_prove(cfg, opts))
    send.close()


def _prove(cfg: ModelConfig, opts: Options) -> Proved:
    """Prove one model, judged; what prove printed kept in `Proved.log`. The counterexamples to
    induction are dropped (they hold the steps' Z3 closures, and the suite reports none)."""
    started = time.monotonic()
    out = io.StringIO()
    log = Console(file=out, width=150, color_system=None, force_terminal=False)
    try:
        cfg, settings = configure(cfg, opts)
        why = not_encoded(cfg)
        if why is not None:
            return Proved(NOT_ENCODED, note=why, seconds=time.monotonic() - started)
        proof = prove_model(cfg, selected(cfg, None), settings, opts, log)
        proof = proof._replace(results=[_without_ctis(r) for r in proof.results])
        outcome = MET if proof.met else NOT_MET
        return Proved(outcome, proof, "", time.monotonic() - started, out.getvalue())
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as error:
        note = internal_error(error)
        return Proved(ERROR, None, note, time.monotonic() - started, out.getvalue())


def _without_ctis(result: Result) -> Result:
    return result._replace(
        obligations=tuple(o._replace(cti=None) for o in result.obligations),
        failed=tuple(o._replace(cti=None) for o in result.failed),
    )
