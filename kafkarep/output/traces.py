"""A run's counterexamples written out: one ITF file per violated clause, under a folder named
for the model, and one printed step table per distinct path with its replay command."""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console

from kafkarep.engines.results import Discovery, Exploration, RunOptions
from kafkarep.model.config import ModelConfig
from kafkarep.model.replay import replay_path
from kafkarep.oracle import kafka_controller
from kafkarep.output.itf import write_trace
from kafkarep.output.steps import render


def model_slug(cfg: ModelConfig) -> str:
    path = Path(cfg.path)
    parts = [p for p in path.with_suffix("").parts if p not in (".", "models")]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(parts[-2:])) or cfg.name


def write_traces(
    cfg: ModelConfig, options: RunOptions, exploration: Exploration, console: Console
) -> dict[str, str]:
    """One ITF file per violated clause; one printed table per distinct path."""
    files: dict[str, str] = {}
    by_path: dict[tuple[tuple[int, ...], int | None], list[Discovery]] = {}
    for discovery in exploration.violations.values():
        by_path.setdefault((discovery.path, discovery.loop), []).append(discovery)
    folder = options.reports / "traces" / model_slug(cfg)
    ordered = sorted(
        by_path.items(), key=lambda item: (len(item[0][0]), item[0][0], item[0][1] or 0)
    )
    for (path, loop), discoveries in ordered:
        trace = replay_path(cfg, path)
        for d in discoveries:
            file = folder / f"{d.name}.itf.json"
            write_trace(
                file,
                trace,
                {
                    "model": cfg.path,
                    "description": cfg.description,
                    "property": d.name,
                    "witness": d.witness,
                    "engine": options.engine,
                    "depth": d.depth,
                    "distinct_states": exploration.distinct_states,
                    **({"loop": d.loop} if d.loop is not None else {}),
                    **kafka_controller.trace_meta(cfg),
                },
            )
            files[d.name] = str(file)
        if options.quiet:
            continue
        names = ", ".join(d.name for d in discoveries)
        render(
            trace,
            f"{cfg.name}: {names} violated at depth {len(path)} "
            f"(engine {options.engine}, {exploration.distinct_states:,} states explored)",
            "; ".join(d.witness or "" for d in discoveries),
            console,
            loop,
        )
        console.print(
            f"replay token: {'/'.join(map(str, path)) or '(initial state)'}", highlight=False
        )
        console.print(
            f"reproduce:    kafkarep replay {files[discoveries[0].name]}", highlight=False
        )
    return files
