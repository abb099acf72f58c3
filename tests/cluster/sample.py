"""The sample's extract submitted as a user submits it (``spark-submit jobs/extract.py`` with
``conf/local.yaml``), from a working directory of its own, and what the cluster tests read back.

The overlay only names the sample logs by absolute path (every run reads the same files, so the
quarantine's source file and ids agree); the sink, the OpenLineage file and the spool keep
conf/local.yaml's relative paths, which the driver resolves against its working directory, as
after ``make run``. (Absolute paths would hide where a path is resolved: on this one machine an
executor could write the driver's absolute path, on a real cluster it cannot.)

On one machine every process shares one disk, so "the executors cannot reach the driver's
disk" is made true with :func:`driver_only`: the executors' Python processes may not write
under the given folders, and each attempt is recorded for the test to read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from deltalake import DeltaTable, QueryBuilder

from .spark_submit import ROOT, Submitted, submit

EXTRACT = ROOT / "jobs" / "extract.py"
LINEAGE = Path("warehouse") / "lineage"
"""conf/local.yaml's sink and OpenLineage file, relative to the driver's working directory."""
EVENTS = Path("warehouse") / "openlineage" / "events.jsonl"
GUARD = Path(__file__).resolve().parent / "executor_guard"
"""Its ``sitecustomize`` refuses the executors' writes under the driver-only folders."""


@dataclass(frozen=True)
class SampleRun:
    """One ``spark-submit jobs/extract.py`` of the sample, from ``cwd``."""

    cwd: Path
    submitted: Submitted

    @property
    def lineage(self) -> Path:
        """The lineage tables (conf/local.yaml's sink, relative to ``cwd``)."""
        return self.cwd / LINEAGE

    def events(self) -> list[dict[str, Any]]:
        """The events in the OpenLineage file, where the driver reads it."""
        path = self.cwd / EVENTS
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]

    def executor_writes(self) -> list[str]:
        """The executors' attempts to write a driver-only folder (:func:`driver_only`)."""
        records = self.cwd / "executor-writes"
        if not records.exists():
            return []
        return sorted(p.read_text("utf-8").strip() for p in records.iterdir())


LOCAL = yaml.safe_load((ROOT / "conf" / "local.yaml").read_text("utf-8"))
TAGS = {**LOCAL["tags"], "file": str(ROOT / LOCAL["tags"]["file"])}
"""conf/local.yaml's tag declarations (the sample's personal data), the file by absolute path:
the tag stage runs on the cluster too."""
ACTIVITY = {"as_of": "log_end"}
"""The activity stage's instant is the log's newest event, not the clock: two runs of the same
input, minutes apart, give the same activity tables."""


def sample_overlay(cwd: Path, **sections: Any) -> Path:
    """``cwd/overlay.yaml``: the sample logs and tag file by absolute path, the activity stage
    at the log's end, checkpoints in ``cwd/checkpoints`` (durable: the disk the driver and every
    executor share here, as docs/deploy.md asks on a cluster, so that a run survives a lost
    executor; the local reference runs with the same settings, so their recorded settings
    agree), plus ``sections``."""
    sources = [{**s, "path": str(ROOT / s["path"])} for s in LOCAL["sources"]]
    overlay = cwd / "overlay.yaml"
    settings = {
        "sources": sources,
        "tags": TAGS,
        "activity": ACTIVITY,
        "execution": {"checkpoint_dir": str(cwd / "checkpoints")},
        **sections,
    }
    overlay.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return overlay


def log_overlay(cwd: Path, log: Path, name: str = "overlay.yaml", **sections: Any) -> Path:
    """``cwd/name``: one Parquet source, ``bench``, reading ``log`` (a file of
    bench/generate_log.py), the sample's tag file by absolute path, the activity stage at the
    log's end, checkpoints in
    ``cwd/checkpoints`` (durable: the disk the driver and every executor share here, as
    docs/deploy.md asks on a cluster), plus ``sections``."""
    source = {"name": "bench", "format": "parquet", "path": str(log)}
    settings = {
        "sources": [source],
        "tags": TAGS,
        "activity": ACTIVITY,
        "execution": {"checkpoint_dir": str(cwd / "checkpoints")},
        **sections,
    }
    overlay = cwd / name
    overlay.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return overlay


def generate_log(out: Path, rows: int, *, start: int = 0, stop: int | None = None) -> Path:
    """``out``: rows ``start`` to ``stop`` of ``bench/generate_log.py``'s log of ``rows`` Spark
    SQL rows (seed 7: the same rows every time; written once beside ``out``)."""
    full = out.with_name(f"full-{rows}-{out.name}")
    if not full.exists():
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "generate_log.py"),
                *("--rows", str(rows), "--repetition", "4", "--dialect-mix", "spark=1.0"),
                *("--format", "parquet", "--out", str(full)),
            ],
            check=True,
            capture_output=True,
        )
    pq.write_table(pq.read_table(full).slice(start, (stop or rows) - start), out)
    return out


def driver_only(cwd: Path, *folders: Path) -> dict[str, str]:
    """Confs that keep every executor's Python process from writing under ``folders`` (the
    ``executor_guard`` folder first on their ``PYTHONPATH``); attempts are recorded under
    ``cwd/executor-writes``. The driver is not affected."""
    records = cwd / "executor-writes"
    records.mkdir(exist_ok=True)
    return {
        "spark.executorEnv.PYTHONPATH": str(GUARD),
        "spark.executorEnv.LINEAGE_TEST_DRIVER_ONLY": os.pathsep.join(map(str, folders)),
        "spark.executorEnv.LINEAGE_TEST_EXECUTOR_WRITES": str(records),
    }


def event_log(cwd: Path) -> dict[str, str]:
    """Spark's event log of the run into ``cwd/spark-events``: what the executors reported of
    every task (executor id, SQL metrics), read after the run."""
    events = cwd / "spark-events"
    events.mkdir(exist_ok=True)
    return {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": events.as_uri(),
        # one plain JSON-lines file (Spark 4 otherwise may roll it into a folder of parts)
        "spark.eventLog.rolling.enabled": "false",
        "spark.eventLog.compress": "false",
    }


def run_sample(
    master: str,
    cwd: Path,
    *,
    overlay: Path | None = None,
    base: Path = ROOT / "conf" / "local.yaml",
    confs: dict[str, str] | None = None,
    options: Sequence[str] = (),
) -> SampleRun:
    """``spark-submit options jobs/extract.py --config base --config overlay`` from ``cwd``."""
    cwd.mkdir(parents=True, exist_ok=True)
    overlay = overlay or sample_overlay(cwd)
    arguments = ["--config", str(base), "--config", str(overlay)]
    submitted = submit(master, EXTRACT, arguments, cwd=cwd, confs=confs, options=options)
    return SampleRun(cwd, submitted.check())


VOLATILE: dict[str, frozenset[str]] = {
    "parsed_statements": frozenset({"parse_ms"}),
    "quarantine": frozenset({"run_id"}),
    "lineage_runs": frozenset({"run_id", "started_at", "ended_at", "stage_seconds"}),
    "openlineage_emissions": frozenset({"emission_id", "started_at", "ended_at"}),
    "source_state": frozenset({"run_id", "committed_at"}),
    "catalog_columns": frozenset({"imported_at"}),
    "openlineage_claim": frozenset(
        {"holder", "purpose", "host", "application_id", "claimed_at", "expires_at", "released_at"}
    ),
}
"""Columns that differ between two runs of the same input: ids and times of the run itself."""
RUN_LOGS = frozenset({"lineage_runs", "openlineage_emissions"})
"""Tables of one row per run (or emission): two runs where a clean run made one add a row."""


def table_rows(run: SampleRun, table: str) -> list[str]:
    """Every row of ``table`` without its volatile columns, as sorted canonical JSON (map
    entries sorted; arrays keep their order), the run's working directory written ``<cwd>``
    (the recorded settings name the driver's absolute OpenLineage paths). Read with delta-rs'
    query engine, which applies deletion vectors."""
    delta = DeltaTable(str(run.lineage / table))
    data = pa.table(QueryBuilder().register("t", delta).execute("SELECT * FROM t").read_all())
    drop = VOLATILE.get(table, frozenset())
    maps = {f.name for f in data.schema if pa.types.is_map(f.type)}
    rows = []
    for row in data.to_pylist():
        kept = {k: sorted(v) if k in maps and v else v for k, v in row.items() if k not in drop}
        text = json.dumps(kept, sort_keys=True, default=str)
        rows.append(text.replace(str(run.cwd.resolve()), "<cwd>"))
    return sorted(rows)
