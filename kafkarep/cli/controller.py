"""Who answers a run's controller steps (`--controller`, `--kafka-jar`, `--kafka-classes`,
`--audit-controller` of `kafkarep check`; docs/oracle.md): the models switched to Kafka's
classes, the harness given the user's build, and each model's run wrapped to report which
controller answered, the steps where Kafka and the rules differed, and the audit."""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console

from kafkarep.common.exit_codes import UsageError
from kafkarep.model import controller
from kafkarep.model.config import ModelConfig, ModelError, with_kafka_controller
from kafkarep.oracle import kafka_controller
from kafkarep.oracle.harness import (
    OracleError,
    check_kafka_classes,
    check_kafka_jar,
    kafka_source_label,
    missing,
)
from kafkarep.output.summary import controller_label


class ControllerRun:
    def __init__(self, args: argparse.Namespace, err: Console) -> None:
        self.args = args
        self.err = err
        self.reports: Path = args.reports
        try:
            jar = None if args.kafka_jar is None else check_kafka_jar(args.kafka_jar)
            classes = (
                None if args.kafka_classes is None else check_kafka_classes(args.kafka_classes)
            )
        except OracleError as error:
            raise UsageError(str(error)) from None
        self.build = kafka_controller.Build(jar, classes)
        self.audits: list[tuple[str, kafka_controller.Audit]] = []

    def configs(self, configs: list[ModelConfig]) -> list[ModelConfig]:
        """The models with the controller the flags ask for. With --controller kafka, a model
        Kafka's classes cannot answer is skipped with a note (every one: exit 2)."""
        wanted = self.args.controller
        if wanted == "rules":
            configs = [
                c._replace(options=c.options._replace(controller="kraft"))
                if c.options.controller == "kafka"
                else c
                for c in configs
            ]
        elif wanted == "kafka":
            kept = []
            for cfg in configs:
                try:
                    if (self.args.engine or cfg.check.engine) == "spark":
                        raise ModelError(
                            f"{cfg.path}: Spark's executors cannot reach Kafka's controller "
                            "classes; the explorer and Hypothesis can"
                        )
                    kept.append(with_kafka_controller(cfg))
                except ModelError as error:
                    if len(configs) == 1:
                        raise UsageError(str(error)) from None
                    self.err.print(f"skipped: {error}", highlight=False, markup=False)
            if not kept:
                raise UsageError("--controller kafka: Kafka's classes answer none of the models")
            configs = kept
        for cfg in configs:
            self._refuse_what_kafka_cannot_answer(cfg)
            if cfg.options.controller == "kafka" or self.args.audit_controller:
                self._same_release(cfg)
        kafka = any(c.options.controller == "kafka" for c in configs)
        if (self.build.kafka_jar or self.build.kafka_classes) and not (
            kafka or self.args.audit_controller
        ):
            raise UsageError(
                "--kafka-jar and --kafka-classes need --controller kafka or --audit-controller"
            )
        if (kafka or self.args.audit_controller) and (reason := missing()) is not None:
            raise UsageError(f"Kafka's controller classes: {reason}")
        return configs

    def _refuse_what_kafka_cannot_answer(self, cfg: ModelConfig) -> None:
        asked = cfg.options.controller == "kafka" or self.args.audit_controller
        if not asked:
            return
        if (self.args.engine or cfg.check.engine) == "spark":
            raise UsageError(
                f"{cfg.path}: Spark's executors cannot reach Kafka's controller classes; "
                "the explorer and Hypothesis can"
            )
        if self.args.audit_controller and cfg.options.controller == "zookeeper":
            raise UsageError(
                f'{cfg.path}: --audit-controller: controller = "zookeeper" is not Kafka\'s KRaft '
                "controller"
            )

    def _same_release(self, cfg: ModelConfig) -> None:
        """Classes that `kafka-patch` compiled for one release answer that release's models."""
        classes = self.build.kafka_classes
        stamp = None if classes is None else classes / ".kafka-patch"
        if stamp is None or not stamp.is_file():
            return
        built = stamp.read_text().split("--kafka", 1)[-1].split()[:1]
        if built and built[0] != cfg.options.kafka_version:
            raise UsageError(
                f"{cfg.path}: --kafka-classes {classes} were compiled against Kafka {built[0]}, "
                f"the model runs {cfg.options.kafka_version}"
            )

    def label(self, cfg: ModelConfig) -> str:
        if cfg.options.controller != "kafka":
            return controller_label(cfg)
        release = cfg.options.kafka_version
        return kafka_source_label(release, self.build.kafka_jar, self.build.kafka_classes)

    @contextmanager
    def around(self, cfg: ModelConfig) -> Iterator[dict[str, Any]]:
        """One model's run: yields the summary's extra fields, filled in when it ends."""
        extra: dict[str, Any] = {"controller": self.label(cfg)}
        name = cfg.name
        differ = self.reports / "controller-disagreements" / name
        answers = self.reports / "controller-answers" / name
        for folder in (differ, answers):
            shutil.rmtree(folder, ignore_errors=True)
        kafka_controller.use(self.build, report=differ, answers=answers)
        steps = self.reports / "controller-audit" / name
        if self.args.audit_controller:
            shutil.rmtree(steps, ignore_errors=True)
            controller.forget()  # every distinct step is seen again
            kafka_controller.record_steps(steps)
        try:
            yield extra
        finally:
            kafka_controller.record_steps(None)
            kafka_controller.close()
        if cfg.options.controller == "kafka":
            extra["controller_steps"], extra["controller_batches"] = kafka_controller.answered(
                answers
            )
            found = sorted(differ.glob("*.json"))
            extra["controller_disagreements"] = len(found)
            if found:
                self.err.print(
                    f"controller: {len(found)} step(s) where the rules and Kafka differ, "
                    f"Kafka's answer taken: {differ}",
                    highlight=False,
                    markup=False,
                )
        if self.args.audit_controller:
            extra["controller_audit"] = self._audit(cfg, steps)

    def _audit(self, cfg: ModelConfig, steps: Path) -> dict[str, Any]:
        try:
            result = kafka_controller.audit(steps, cfg.options.kafka_version, self.build)
        except OracleError as error:
            raise UsageError(str(error)) from None
        for disagreement in result.disagreements:
            self.err.print(
                f"controller audit: {disagreement.case['id']} differs: "
                + "; ".join(disagreement.differences),
                highlight=False,
                markup=False,
            )
            (steps / f"{disagreement.case['id']}.differs.json").write_text(
                json.dumps(disagreement.case, indent=1) + "\n"
            )
        self.audits.append((cfg.name, result))
        return {
            "steps": result.steps,
            "agreed": result.agreed,
            "unsupported": result.unsupported,
            "disagreements": [d.case["id"] for d in result.disagreements],
            "folder": str(steps),
            "kafka": kafka_source_label(
                cfg.options.kafka_version, self.build.kafka_jar, self.build.kafka_classes
            ),
        }

    def disagreed(self) -> bool:
        """Whether the audit found a step where Kafka and the rules differ."""
        return any(result.disagreements for _, result in self.audits)

    def finish(self, console: Console) -> None:
        """The audit's lines, last: each model's when there are several, then the total."""
        if not self.audits:
            return
        if len(self.audits) > 1:
            for name, result in self.audits:
                console.print(f"  {name}: {_counts(result)}", highlight=False)
        total = kafka_controller.Audit(
            sum(r.steps for _, r in self.audits),
            sum(r.agreed for _, r in self.audits),
            sum(r.unsupported for _, r in self.audits),
            tuple(d for _, r in self.audits for d in r.disagreements),
            sum(r.seconds for _, r in self.audits),
        )
        console.print(f"controller audit: {_counts(total)}", highlight=False)


def _counts(result: kafka_controller.Audit) -> str:
    unsupported = f", {result.unsupported} not expressible" if result.unsupported else ""
    return f"{result.steps} distinct steps, {result.agreed} agreed{unsupported}"
