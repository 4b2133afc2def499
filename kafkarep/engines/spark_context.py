"""Starting Spark for the engine: the SparkContext (quiet, no UI here, tasks retried as on a
cluster), kept for a process's next runs, and kafkarep's code shipped to executors elsewhere."""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from pyspark import SparkConf, SparkContext

import kafkarep
from kafkarep.common.exit_codes import UsageError

DEFAULT_MASTER = "local[*]"
TASK_ATTEMPTS = 4  # Spark's default on a cluster; local[N] masters get it too


def with_task_attempts(master: str) -> str:
    """`local` and `local[N]` fail a job at a task's first failure; give them Spark's cluster
    default of attempts instead (`local[N,4]`)."""
    if master == "local":
        return f"local[1,{TASK_ATTEMPTS}]"
    found = re.fullmatch(r"local\[([0-9]+|\*)\]", master)
    return f"local[{found.group(1)},{TASK_ATTEMPTS}]" if found else master


def start_spark(master: str | None = None) -> Any:
    """A SparkContext for the engine: quiet, without UI on this machine, with kafkarep's code
    importable by the executors' Python workers."""
    conf = SparkConf().setAppName("kafkarep")
    conf.set("spark.ui.showConsoleProgress", "false")
    conf.set("spark.python.worker.reuse", "true")
    # Under spark-submit the driver's JVM already runs, with spark-submit's --master and conf.
    url = "(spark-submit)"
    if master is not None or "PYSPARK_GATEWAY_PORT" not in os.environ:
        url = with_task_attempts(master or DEFAULT_MASTER)
        conf.setMaster(url)
        conf.set("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={_log_config()}")
        if url.startswith("local"):  # this machine: local[N] or local-cluster[...]
            conf.set("spark.ui.enabled", "false")
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers run this Python
        if url.startswith("local["):
            conf.set("spark.executorEnv.PYTHONPATH", str(_source_root()))
    try:
        sc = SparkContext(conf=conf)
    except Exception as error:
        raise UsageError(f"cannot start Spark with master {url!r}: {first_line(error)}") from None
    sc.setLogLevel("ERROR")
    if not str(sc.master).startswith("local["):
        sc.addPyFile(str(_code_zip()))  # executors elsewhere need the same code as the driver
    return sc


_OWN: list[Any] = []  # the SparkContext this engine started, kept for the process's next runs


def spark_context(master: str | None) -> Any:
    """The running SparkContext when there is one for the requested master (a test's, or the
    one this engine started for an earlier model of a suite), else a new one, stopped when the
    process exits."""
    active = SparkContext._active_spark_context
    if active is not None and (master is None or with_task_attempts(master) == active.master):
        return active
    if active is not None:
        if not (_OWN and _OWN[0] is active):
            raise UsageError(f"Spark is already running here with master {active.master!r}")
        active.stop()
        _OWN.clear()
    sc = start_spark(master)
    if not _OWN:
        atexit.register(_stop_own)
    _OWN[:] = [sc]
    return sc


def _stop_own() -> None:
    for sc in _OWN:
        with contextlib.suppress(Exception):
            sc.stop()
    _OWN.clear()


def _source_root() -> Path:
    return Path(kafkarep.__file__).resolve().parents[1]


_FILES: dict[str, Path] = {}  # made once per process; they must outlive the SparkContexts


def _process_dir() -> Path:
    if "dir" not in _FILES:
        _FILES["dir"] = Path(tempfile.mkdtemp(prefix="kafkarep-spark-"))
        atexit.register(shutil.rmtree, _FILES["dir"], True)
    return _FILES["dir"]


def _code_zip() -> Path:
    """kafkarep as one zip for `addPyFile` (imports from it may come late)."""
    if "zip" not in _FILES:
        path = _process_dir() / "kafkarep-code.zip"
        root = _source_root()
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            folders = {root / "kafkarep"}
            for file in sorted((root / "kafkarep").rglob("*.py")):
                folders.add(file.parent)
                archive.write(file, file.relative_to(root).as_posix())
            for folder in sorted(folders):  # zipimport needs them for namespace packages
                archive.writestr(folder.relative_to(root).as_posix() + "/", b"")
        _FILES["zip"] = path
    return _FILES["zip"]


LOG_CONFIG = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = spark: %p %c{1}: %m%n
"""


def _log_config() -> Path:
    """Spark's driver logs errors only (its default prints warnings a user cannot act on)."""
    if "log" not in _FILES:
        path = _process_dir() / "log4j2.properties"
        path.write_text(LOG_CONFIG)
        _FILES["log"] = path
    return _FILES["log"]


def first_line(error: BaseException) -> str:
    """The useful line of an error that crossed from a Python worker through the JVM."""
    text = str(error)
    python = re.findall(r"^(\w+(?:Error|Exception): .+)$", text, flags=re.MULTILINE)
    if python:
        return python[-1].strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else error.__class__.__name__
