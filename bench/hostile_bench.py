"""Hostile-input harness: generate a log of hostile rows, run the extraction job on it, account
for every row and look for planted secrets everywhere the job leaves data.

    python bench/hostile_bench.py --rows 100000 --out bench/data/hostile \
        --json bench/results/hostile.json --report bench/results/hostile.md   # make bench-hostile
    python bench/hostile_bench.py --rows 2000 --out bench/data/hostile-2k     # a small slice

What is generated (deterministic for a seed), spread over a CSV, a JSON Lines and a BigQuery-
style JSON Lines source:

- ordinary lineage statements (INSERT, CTAS, MERGE) and plain SELECTs, in several dialects;
- canary secrets (``Cn4ryX`` + a number) in every credential form the masking knows:
  ``IDENTIFIED BY``, ``PASSWORD`` bare / ``=`` / quoted identifier / dollar-quoted,
  ``CREDENTIALS=(aws_key_id=…)``, ``OPTIONS (password …)``, JDBC and URL userinfo in strings,
  ``*_TOKEN`` / ``*_KEY`` settings, string and comment literals; also in the job's config
  (Spark confs, a source's options);
- huge statements (over and under ``parser.max_sql_chars``) and deeply nested ones;
- NUL bytes, invalid UTF-8, CSV records with unterminated quotes (each absorbs the next
  record), broken JSON lines;
- vendor failure encodings: BigQuery ``state = DONE`` with ``error_result``, Snowflake
  ``FAIL``/``INCIDENT``; duplicate query ids; timestamps in odd zones and none at all.

The job runs as ``jobs/extract.py`` in a child process with ``spark.local.dir`` inside
``--out``; a watcher scans that folder while the job runs. Then every row of every table the run
writes (and of any other Delta table in its warehouse) is searched for the canary, in a Spark
application of its own. The report (stdout and ``--out``/report.json; ``--json`` and
``--report`` write the results files) gives: rows generated and read, rows read = relevant + not
relevant + quarantined, failed Spark tasks, the rows checked and canaries found per Delta table,
canaries in the OpenLineage events, the spool, the job's log and spark.local.dir (during and
after the run), and the wall time.

The exit code is 0 only when every row is accounted for, no task failed, no canary was found and
everything was checked: a table that cannot be read, a table left empty or a missing events file
fails the run with one line saying what was not checked and why.

``--from-json FILE --report FILE`` renders the Markdown results file from the JSON of a run
(``bench/results/hostile.json`` → ``bench/results/hostile.md``); the JSON's ``notes`` (paragraphs,
each a list of lines) are a reading of that run, and a new run's JSON has none.
"""

from __future__ import annotations

import argparse
import csv
import importlib.metadata
import io
import json
import os
import platform
import random
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CANARY = "Cn4ryX"
"""Marker of every planted secret; none may be found in anything the job leaves."""

TIME_ZONES = ("Z", "+05:45", "-03:30", "+14:00", "-11:00", "")


@dataclass
class Plan:
    """What the generator wrote, for the accounting."""

    records: int = 0
    absorbed: int = 0
    """Records swallowed by the previous record's unterminated quote (CSV)."""
    kinds: dict[str, int] = field(default_factory=dict)


def _canary(i: int) -> str:
    return f"{CANARY}{i:07d}"


def _secret_statement(i: int, rnd: random.Random) -> tuple[str, str]:
    """(dialect, statement) holding a canary in one credential form."""
    c = _canary(i)
    forms = [
        ("oracle", f"CREATE USER u{i} IDENTIFIED BY {c} DEFAULT TABLESPACE users"),
        ("mysql", f"ALTER USER 'u{i}'@'%' IDENTIFIED WITH caching_sha2_password BY {c}"),
        ("postgres", f"ALTER ROLE r{i} WITH LOGIN PASSWORD {c} VALID UNTIL 'infinity'"),
        ("postgres", f"CREATE ROLE r{i} PASSWORD $q${c} x$q$"),
        ("snowflake", f'ALTER USER u{i} SET PASSWORD = "{c}" MUST_CHANGE_PASSWORD = TRUE'),
        ("snowflake", f"GRANT INSERT ON TABLE t{i} TO ROLE r /* {c} */"),
        (
            "snowflake",
            f"COPY INTO raw.events{i % 5} FROM @stage/x CREDENTIALS=(aws_key_id={c} "
            f"aws_secret_key={c}/ab+c) FILE_FORMAT = (TYPE = JSON)",
        ),
        (
            "snowflake",
            f"CREATE STAGE s{i} URL = 's3://b/p' CREDENTIALS = (AZURE_SAS_TOKEN = {c})",
        ),
        (
            "spark",
            f"CREATE TABLE jdbc_t{i % 5} USING jdbc OPTIONS (url "
            f"'jdbc:postgresql://etl:{c}@db:5432/x', dbtable 'public.t', password {c})",
        ),
        (
            "spark",
            f"INSERT INTO mart.t{i % 9} SELECT * FROM raw.s WHERE api_key = '{c}' -- {c}",
        ),
        ("spark", f'INSERT INTO mart.t{i % 9} SELECT "{c}", a FROM raw.s'),
        (
            "databricks",
            f"INSERT INTO mart.t{i % 9} SELECT * FROM delta.`s3://{c}:x@b/p` WHERE k = 1",
        ),
        ("bigquery", f"INSERT INTO ds.t{i % 9} SELECT * FROM ds.s WHERE token = r'{c}'"),
        ("snowflake", f"INSERT INTO t{i % 9} SELECT * FROM s WHERE pw = $${c}$$"),
        ("snowflake", f"CREATE SECRET sec{i} TYPE = PASSWORD USERNAME = 'x' PASSWORD = {c}"),
        ("spark", f"SET spark.hadoop.fs.s3a.secret.key={c}"),
    ]
    return forms[rnd.randrange(len(forms))]


def _ordinary(i: int, rnd: random.Random) -> tuple[str, str]:
    n = i % 97
    forms = [
        (
            "spark",
            f"INSERT INTO mart.daily_{n} SELECT day, SUM(x) FROM raw.events_{n} GROUP BY day",
        ),
        (
            "snowflake",
            f"CREATE OR REPLACE TABLE an.m{n} AS SELECT a, b FROM an.src{n} WHERE c > {i}",
        ),
        (
            "spark",
            f"MERGE INTO mart.dim_{n} t USING stage.dim_{n} s ON t.id = s.id "
            f"WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED THEN INSERT *",
        ),
        ("snowflake", f'INSERT INTO "Mixed"."CaseTab{n}" SELECT * FROM raw.src{n}'),
        ("spark", f"SELECT * FROM raw.events_{n} WHERE id = {i}"),
        ("bigquery", f"INSERT INTO proj.ds.t{n} SELECT * FROM proj.ds.s{n} WHERE d = '2024-01-01'"),
        ("spark", f"MERGE INTO t{n} USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET x ="),
        ("spark", f"CREATE TEMP VIEW v{n} AS SELECT * FROM raw.events_{n}"),
    ]
    return forms[rnd.randrange(len(forms))]


def _timestamp(rnd: random.Random, i: int) -> str | None:
    zone = TIME_ZONES[rnd.randrange(len(TIME_ZONES))]
    if rnd.random() < 0.02:
        return None
    base = datetime(2024, 1, 1, tzinfo=UTC).timestamp() + i * 7
    stamp = datetime.fromtimestamp(base, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return stamp + zone


def _rows(n: int, seed: int, plan: Plan) -> Iterator[dict[str, Any]]:
    rnd = random.Random(seed)
    for i in range(n):
        roll = rnd.random()
        if roll < 0.30:
            kind = "secret"
            dialect, sql = _secret_statement(i, rnd)
        elif roll < 0.3003:
            kind = "huge"
            size = 1_100_000 if rnd.random() < 0.5 else 200_000
            cols = ", ".join(f"c{k}" for k in range(size // 6))
            dialect, sql = "spark", f"INSERT INTO big.t SELECT {cols} FROM big.s"
        elif roll < 0.3006:
            kind = "deep"
            depth = rnd.choice((200, 2_000, 10_000))
            dialect, sql = "spark", f"INSERT INTO d.t SELECT {'(' * depth}1{')' * depth} FROM d.s"
        elif roll < 0.31:
            kind = "nul"
            dialect, sql = "spark", f"INSERT\x00 INTO n.t SELECT '{_canary(i)}' FROM n.s"
        else:
            kind = "ordinary"
            dialect, sql = _ordinary(i, rnd)
        plan.kinds[kind] = plan.kinds.get(kind, 0) + 1
        duplicate = rnd.random() < 0.01 and i > 0
        yield {
            "query_id": f"h{seed}-{(i - 1) if duplicate else i:08d}",
            "query_text": sql,
            "dialect": dialect,
            "user_name": f"user{i % 13}",
            "start_time": _timestamp(rnd, i),
            "status": rnd.choice(("SUCCESS", "SUCCESS", "SUCCESS", "FAIL", "INCIDENT")),
        }


def generate(out: Path, rows: int, seed: int) -> Plan:
    """Write the three sources under ``out/input``; returns what was written."""
    plan = Plan()
    folder = out / "input"
    folder.mkdir(parents=True, exist_ok=True)
    rnd = random.Random(seed + 1)
    csv_rows, jsonl_rows, bq_rows = [], [], []
    for row in _rows(rows, seed, plan):
        pick = rnd.random()
        (csv_rows if pick < 0.4 else jsonl_rows if pick < 0.8 else bq_rows).append(row)
    plan.records = rows
    _write_csv(folder / "history.csv", csv_rows, plan, rnd)
    _write_jsonl(folder / "history.jsonl", jsonl_rows, plan, rnd)
    _write_bigquery(folder / "bq_jobs.jsonl", bq_rows, rnd)
    return plan


def _write_csv(path: Path, rows: list[dict[str, Any]], plan: Plan, rnd: random.Random) -> None:
    with path.open("wb") as f:
        f.write(b"query_id,query_text,dialect,user_name,start_time,status\n")
        skip_next = False
        for row in rows:
            buffer = io.StringIO()
            # every value quoted: an unterminated quote then absorbs exactly the next record
            csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL).writerow(
                [row[k] or "" for k in ("query_id", "query_text", "dialect", "user_name")]
                + [row["start_time"] or "", row["status"]]
            )
            line = buffer.getvalue().encode("utf-8")
            roll = rnd.random()
            if not skip_next and roll < 0.002:
                # an unterminated quote: the next record is absorbed into this one
                text = row["query_text"].replace('"', "")
                line = (
                    f'"{row["query_id"]}","{text},{row["dialect"]},{row["user_name"]},,'
                    f"{row['status']}\n".encode()
                )
                plan.absorbed += 1
                plan.kinds["csv_unterminated"] = plan.kinds.get("csv_unterminated", 0) + 1
                skip_next = True
            elif roll < 0.004:
                line = line.replace(b',"user', b',"us\xff\xfeer', 1)
                plan.kinds["invalid_utf8"] = plan.kinds.get("invalid_utf8", 0) + 1
                skip_next = False
            else:
                skip_next = False
            f.write(line)
        if skip_next:  # the last record cannot absorb a next one
            plan.absorbed -= 1


def _write_jsonl(path: Path, rows: list[dict[str, Any]], plan: Plan, rnd: random.Random) -> None:
    with path.open("wb") as f:
        for row in rows:
            line = json.dumps(row).encode("utf-8")
            if rnd.random() < 0.002:
                line = line[: len(line) // 2]  # a truncated (broken) JSON line
                plan.kinds["jsonl_broken"] = plan.kinds.get("jsonl_broken", 0) + 1
            f.write(line + b"\n")


def _write_bigquery(path: Path, rows: list[dict[str, Any]], rnd: random.Random) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            failed = rnd.random() < 0.1
            record = {
                "job_id": row["query_id"],
                "query": row["query_text"],
                "user_email": row["user_name"],
                "creation_time": row["start_time"],
                "state": "DONE",
                "error_result": {"reason": "invalidQuery", "message": "x"} if failed else None,
            }
            f.write(json.dumps(record) + "\n")


def count_records(out: Path, seed: int) -> dict[str, int]:
    """Records in the generated files, counted independently of Spark: JSON lines one per line,
    CSV records by the lines that start one (no generated value holds a newline) and as
    Python's csv module reads them (a record that absorbed the next counts once)."""
    folder = out / "input"
    jsonl = sum(
        sum(1 for line in (folder / name).open("rb") if line.strip())
        for name in ("history.jsonl", "bq_jobs.jsonl")
    )
    starts = (f"h{seed}-".encode(), f'"h{seed}-'.encode())
    csv_written = sum(1 for line in (folder / "history.csv").open("rb") if line.startswith(starts))
    csv.field_size_limit(sys.maxsize)  # the huge statements
    with (folder / "history.csv").open(encoding="utf-8", errors="replace", newline="") as f:
        csv_parsed = sum(1 for _ in csv.reader(f)) - 1  # the header
    return {
        "records_in_files": jsonl + csv_written,
        "csv_records_absorbed": csv_written - csv_parsed,
    }


def write_config(out: Path) -> Path:
    """The job's overlay: the three sources, Delta and events under ``out``, credentials planted
    in config (they must be redacted)."""
    local_dir = out / "spark-local"
    local_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "sources": [
            {"name": "hostile_csv", "format": "csv", "path": str(out / "input/history.csv")},
            {
                "name": "hostile_jsonl",
                "format": "jsonl",
                "path": str(out / "input/history.jsonl"),
                "options": {"password": f"{CANARY}config1"},
            },
            {
                "name": "bigquery",
                "format": "jsonl",
                "path": str(out / "input/bq_jobs.jsonl"),
                "columns": {
                    "query_id": "job_id",
                    "query_text": "query",
                    "user_name": "user_email",
                    "start_time": "creation_time",
                    "status": "state",
                },
                "defaults": {"dialect": "bigquery", "source_system": "bigquery"},
            },
        ],
        "sink": {"base_path": str(out / "warehouse")},
        "graph": {"enabled": False},
        "spark": {
            "master": "local[2]",
            "confs": {
                "spark.local.dir": str(local_dir),
                "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false",
                "spark.ui.retainedStages": "100000",
                "spark.ui.retainedJobs": "100000",
                "spark.hadoop.fs.s3a.secret.key": f"{CANARY}config2",
                "spark.sql.shuffle.partitions": "4",
            },
        },
        "openlineage": {
            "enabled": True,
            "transport": {"type": "file", "log_file_path": str(out / "events.jsonl")},
            "spool": {"path": str(out / "spool")},
        },
    }
    path = out / "hostile.yaml"
    path.write_text(json.dumps(config, indent=2))  # JSON is YAML
    return path


def scan_folder(root: Path, marker: bytes = CANARY.encode()) -> tuple[int, int]:
    """(files scanned, files holding ``marker``) under ``root``."""
    scanned = hits = 0
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                data = Path(folder, name).read_bytes()
            except OSError:
                continue  # deleted while scanning
            scanned += 1
            hits += marker in data
    return scanned, hits


class Watcher(threading.Thread):
    """Scans a folder every ``every`` seconds while the job runs."""

    def __init__(self, root: Path, every: float = 3.0) -> None:
        super().__init__(daemon=True)
        self.root, self.every = root, every
        self.scans = self.files = self.hits = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(self.every):
            files, hits = scan_folder(self.root)
            self.scans += 1
            self.files = max(self.files, files)
            self.hits += hits


TABLES_TO_CHECK = (
    "parsed_statements",
    "queries",
    "table_lineage",
    "column_lineage",
    "quarantine",
    "lineage_runs",
    "openlineage_emissions",
)
"""The tables a run of the harness writes (graph stage off): each must be read, and hold rows.
Any other Delta table found in the warehouse is checked as well."""


def delta_tables(warehouse: Path) -> list[str]:
    """Names of the Delta tables (folders with a ``_delta_log``) under ``warehouse``."""
    if not warehouse.is_dir():
        return []
    return sorted(p.name for p in warehouse.iterdir() if (p / "_delta_log").is_dir())


def check_tables(
    spark: Any,
    warehouse: Path,
    marker: str = CANARY,
    required: tuple[str, ...] = TABLES_TO_CHECK,
) -> dict[str, Any]:
    """Every row of every table of ``required`` and of any other Delta table under
    ``warehouse``, as JSON text, searched for ``marker``.

    Returns ``tables`` (per table: rows checked, rows holding the marker), ``unreadable`` (per
    table that could not be checked: why), the quarantine's rows per reason and the newest run's
    status. A table is never left out silently: a required one that is missing or fails to read
    is in ``unreadable``.
    """
    from pyspark.sql import functions as F

    from lineage_udfs.core.errors import one_line

    names = [*required, *(n for n in delta_tables(warehouse) if n not in required)]
    tables: dict[str, dict[str, int]] = {}
    unreadable: dict[str, str] = {}
    for name in names:
        path = warehouse / name
        if not (path / "_delta_log").is_dir():
            unreadable[name] = "no Delta table (no _delta_log folder)"
            continue
        try:
            frame = spark.read.format("delta").load(str(path))
            text = F.to_json(F.struct(*[F.col(c) for c in frame.columns]))
            row = frame.agg(
                F.count(F.lit(1)).alias("rows"), F.count_if(text.contains(marker)).alias("hits")
            ).first()
        except Exception as exc:  # any failure to read is reported, never skipped
            unreadable[name] = one_line(exc, with_type=True)
            continue
        tables[name] = {"rows": int(row["rows"]), "canaries": int(row["hits"])}
    result: dict[str, Any] = {"tables": tables, "unreadable": unreadable}
    if "quarantine" in tables:
        reasons = (
            spark.read.format("delta")
            .load(str(warehouse / "quarantine"))
            .groupBy(F.substring("reason", 1, 60).alias("reason"))
            .count()
            .orderBy(F.desc("count"), "reason")
            .collect()
        )
        result["quarantine_reasons"] = {r["reason"]: r["count"] for r in reasons}
    if "lineage_runs" in tables:
        run = (
            spark.read.format("delta")
            .load(str(warehouse / "lineage_runs"))
            .orderBy(F.col("started_at").desc())
            .first()
        )
        result["run_status"] = run["status"] if run else None
    return result


SPARK_CHECK = r"""
import json, sys
from pathlib import Path
from pyspark.sql import SparkSession
sys.path.insert(0, sys.argv[1])
from hostile_bench import check_tables
from lineage_udfs.settings import load_settings
settings = load_settings(sys.argv[2:-2])
spark = SparkSession.builder.master("local[2]").config(
    "spark.jars.packages", ",".join(settings.spark.packages)).config(
    "spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension").config(
    "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog").config(
    "spark.ui.enabled", "false").getOrCreate()
print("CHECK " + json.dumps(check_tables(spark, Path(sys.argv[-2]), sys.argv[-1])))
"""
"""The table check in a Spark application of its own (the job's has ended)."""


def run_check(config: Path, warehouse: Path, out: Path) -> dict[str, Any]:
    """``check_tables`` in a child process; on a failure of the child itself, ``error``."""
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            SPARK_CHECK,
            str(ROOT / "bench"),
            str(ROOT / "conf/base.yaml"),
            str(config),
            str(warehouse),
            CANARY,
        ],
        cwd=out,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    line = next((x for x in check.stdout.splitlines() if x.startswith("CHECK ")), None)
    if check.returncode != 0 or line is None:
        last = (check.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"the check's Spark application failed (exit {check.returncode}): {last}"}
    return dict(json.loads(line[len("CHECK ") :]))


def run_job(config: Path, out: Path) -> dict[str, Any]:
    """Run jobs/extract.py on the overlay; returns timing, exit code and the log's path."""
    log = out / "job.log"
    watcher = Watcher(out / "spark-local")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    watcher.start()
    with log.open("wb") as sink:
        done = subprocess.run(
            [
                sys.executable,
                str(ROOT / "jobs/extract.py"),
                "--config",
                str(config),
            ],
            cwd=out,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            check=False,
        )
    wall = time.perf_counter() - started
    watcher.stop.set()
    watcher.join()
    return {
        "exit_code": done.returncode,
        "wall_seconds": round(wall, 1),
        "local_dir_scans_during_run": watcher.scans,
        "local_dir_files_max": watcher.files,
        "local_dir_canary_hits_during_run": watcher.hits,
    }


_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ ([\w.]+): (.*)$")
_EMIT = re.compile(r"OpenLineage emit.*? rows=(\d+) skipped=(\d+) emitted=(\d+)")


def summary_from_log(log: Path) -> dict[str, Any]:
    """The run summary's counts, the extraction's seconds per stage, the emission's rows and
    seconds (from the end of the extraction to its summary line) and the failed-task count,
    from the job's log."""
    text = log.read_text(errors="replace")
    lines = text.splitlines()
    counts: dict[str, Any] = {}
    for key, label in (
        ("rows_read", "rows read"),
        ("load_quarantined", "quarantined at load"),
        ("not_relevant", "not lineage-relevant"),
        ("relevant", "relevant rows"),
        ("distinct_statements", "distinct statements"),
    ):
        for line in lines:
            if line.strip().startswith(label):
                counts[key] = int(line.split()[len(label.split())])
                break
    extracted = emitted = None
    for line in lines:
        if "duplicate query ids dropped:" in line:
            counts["duplicates"] = int(line.rsplit(":", 1)[1].strip(" )"))
        if "seconds per stage" in line:
            stages = line.split("seconds per stage", 1)[1].split(",")
            counts["extraction_seconds"] = {
                k.strip(): float(v.strip().rstrip("s"))
                for k, v in (part.split("=") for part in stages if "=" in part)
            }
        m = _LOG_LINE.match(line)
        if m and m.group(3).startswith("extraction summary"):
            extracted = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
        emit = _EMIT.search(line)
        if emit:
            counts["events_skipped_rows"] = int(emit.group(2))
            if m:
                emitted = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
    if extracted and emitted:
        counts["emission_seconds"] = round((emitted - extracted).total_seconds(), 1)
    # Spark logs every failed task attempt at WARN ("TaskSetManager: Lost task 0.0 in stage …")
    counts["failed_tasks"] = sum(1 for line in lines if "Lost task" in line)
    return counts


def problems(report: dict[str, Any]) -> list[str]:
    """One line per reason the run fails: a table or file that could not be checked, a row not
    accounted for, a failed task, a canary found; empty when the run passes."""
    out = [f"the job exited with {report['exit_code']}"] if report.get("exit_code") else []
    if report.get("check_error"):
        out.append(f"the Delta tables were not checked: {report['check_error']}")
    for name, why in report.get("unreadable_tables", {}).items():
        out.append(f"table {name} was not checked: {why}")
    for name in TABLES_TO_CHECK:
        if report.get("tables", {}).get(name, {}).get("rows") == 0:
            out.append(f"table {name} holds no rows: nothing in it was checked")
    if report.get("events") is None:
        out.append("the OpenLineage events were not checked: no events file")
    if not report.get("every_row_accounted"):
        out.append(
            f"rows not accounted for: {report.get('rows_read')} read,"
            f" {report.get('rows_accounted')} accounted for,"
            f" {report.get('records_in_files')} records in the files"
        )
    if report.get("failed_tasks"):
        out.append(f"{report['failed_tasks']} failed Spark tasks")
    found = {f"table {n}": t["canaries"] for n, t in report.get("tables", {}).items()}
    found.update(
        {
            "the events": report.get("canaries_in_events") or 0,
            "the spool": report.get("canaries_in_spool", 0),
            "the job log": report.get("canary_lines_in_log", 0),
            "spark.local.dir during the run": report.get("local_dir_canary_hits_during_run", 0),
            "spark.local.dir after the run": report.get("local_dir_canary_hits_after_run", 0),
        }
    )
    out += [f"planted secrets found in {where}: {n}" for where, n in found.items() if n]
    return out


def _load() -> list[float]:
    return [round(x, 1) for x in os.getloadavg()]


def _machine() -> str:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    memory = int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    return f"{platform.machine()}, {os.cpu_count()} CPUs ({cpu}), {memory:.1f} GiB"


def _versions(master: str) -> dict[str, str]:
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    first = (java.stderr.splitlines() or ["?"])[0]
    return {
        "spark": importlib.metadata.version("pyspark"),
        "master": master,
        "delta": importlib.metadata.version("delta-spark"),
        "java": first.split('"')[1] if '"' in first else first,
        "python": platform.python_version(),
    }


def _code() -> str:
    """The checkout's commit, and whether it had uncommitted changes."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"`{head}`" + (" with uncommitted changes" if dirty else "") if head else "not in git"


def _command(argv: list[str]) -> str:
    """The command line as run from the repository root; a folder outside it shown as <dir>."""
    python = ".venv/bin/python" if Path(sys.prefix) == ROOT / ".venv" else "python"
    shown = []
    for arg in argv:
        path = Path(arg)
        if path.is_absolute():
            arg = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else "<dir>"
        shown.append(arg)
    return " ".join([python, "bench/hostile_bench.py", *shown])


# --- the results file --------------------------------------------------------------------------


def _n(value: int | float) -> str:
    return f"{value:,.0f}"


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, width=96, break_long_words=False, break_on_hyphens=False)


def render(doc: dict[str, Any]) -> str:
    """``bench/results/hostile.md`` from the run's JSON (``--json``): the figures of the run,
    then the notes kept with it (each a list of lines) or, without notes, the verdict."""
    load, load_end = (
        " / ".join(f"{x:.1f}" for x in doc[k]) if doc.get(k) else "not recorded"
        for k in ("load_start", "load_end")
    )
    v = doc["versions"]
    machine = (
        f"Date: {doc['date']}. Machine: {doc['machine']}: `uptime` load average {load}"
        f" (1 / 5 / 15 min) when the run started, {load_end} when it ended."
    )
    software = (
        f"Spark {v['spark']} ({v['master']}), Delta {v['delta']}, Java {v['java']},"
        f" Python {v['python']}. Code: {doc['code']}."
    )
    parts = [doc[k] for k in ("load_quarantined", "not_relevant", "relevant", "duplicates")]
    reasons = doc["quarantine_reasons"]
    tables = doc["tables"]
    if all(t["canaries"] == 0 for t in tables.values()):
        listed = ", ".join(
            name + ("" if t["rows"] is None else f" {_n(t['rows'])} row{'s' * (t['rows'] != 1)}")
            for name, t in tables.items()
        )
        in_tables = f"0 in every table ({listed})"
    else:
        in_tables = ", ".join(
            f"{name}: {t['canaries']}" + ("" if t["rows"] is None else f" of {_n(t['rows'])} rows")
            for name, t in tables.items()
        )
    for name, why in doc.get("unreadable_tables", {}).items():
        in_tables += f"; {name} not checked: {why}"
    stages = dict(doc["extraction_seconds"])
    total = stages.pop("total")
    if doc.get("emission_seconds") is not None:
        emission = f"emission {_n(doc['emission_seconds'])} s"
    else:
        emission = f"emission ~{doc['emission_seconds_approx'] / 60:.0f} min"
    events = "not found" if doc["events"] is None else _n(doc["events"])
    rows = [
        ("records generated (in the files)", _n(doc["records_in_files"])),
        (
            "CSV records absorbed by an unterminated quote (Python's csv module on the same file)",
            _n(doc["csv_records_absorbed"]),
        ),
        (
            "rows read",
            f"{_n(doc['rows_read'])} (= {_n(doc['records_in_files'])}"
            f" - {_n(doc['csv_records_absorbed'])})"
            if doc["rows_read"] + doc["csv_records_absorbed"] == doc["records_in_files"]
            else f"{_n(doc['rows_read'])} (not {_n(doc['records_in_files'])}"
            f" - {_n(doc['csv_records_absorbed'])})",
        ),
        (
            "quarantined at load / not relevant / relevant / duplicate ids",
            " / ".join(_n(x) for x in parts) + f" (sum {_n(sum(parts))})",
        ),
        (
            "quarantine rows (load + parse)",
            f"{_n(sum(reasons.values()))}: "
            + ", ".join(f"{reason} {_n(n)}" for reason, n in reasons.items()),
        ),
        ("distinct statements parsed", _n(doc["distinct_statements"])),
        ('failed Spark tasks ("Lost task" lines in the job log)', _n(doc["failed_tasks"])),
        (
            "OpenLineage events written",
            f"{events} ({_n(doc['events_skipped_rows'])} rows skipped: not emitted kinds)",
        ),
        ("canaries in Delta tables", in_tables),
        (
            "canaries in events / spool / job log",
            f"{doc['canaries_in_events']} / {doc['canaries_in_spool']}"
            f" / {doc['canary_lines_in_log']}",
        ),
        (
            "spark.local.dir: scans while the job ran / most files seen / canary hits",
            f"{_n(doc['local_dir_scans_during_run'])} / {_n(doc['local_dir_files_max'])}"
            f" / {doc['local_dir_canary_hits_during_run']}",
        ),
        (
            "spark.local.dir after the run",
            f"{_n(doc['local_dir_files_after_run'])} files,"
            f" {doc['local_dir_canary_hits_after_run']} hits",
        ),
        (
            "wall time (extraction + emission, JVM start included)",
            f"{_n(doc['wall_seconds'])} s (extraction {_n(total)} s: "
            + ", ".join(f"{k} {_n(x)}" for k, x in stages.items())
            + f"; {emission})",
        ),
    ]
    lines = [
        f"# Hostile-input harness: {_n(doc['records_generated'])} rows",
        "",
        f"Command: `{doc['command']}` (seed {doc['seed']}).",
        *_wrap(machine),
        *_wrap(software),
        "",
        "| figure | value |",
        "|---|---|",
        *(f"| {label} | {value} |" for label, value in rows),
    ]
    notes = doc.get("notes") or [_wrap(_verdict(doc))]
    for paragraph in notes:
        lines += ["", *paragraph]
    return "\n".join(lines) + "\n"


def _verdict(doc: dict[str, Any]) -> str:
    found = problems(doc)
    if not found:
        return (
            "Every row is accounted for, no Spark task failed and no planted secret was found in"
            " any table, event, spool file, log line or spark.local.dir."
        )
    return "The run fails: " + "; ".join(found) + "."


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--out", type=Path, help="the run's folder (input, warehouse, logs)")
    parser.add_argument(
        "--check-only",
        action="store_true",
        help="report on an earlier run in --out (regenerates the plan from --rows/--seed)",
    )
    parser.add_argument("--json", type=Path, help="write the run's figures here")
    parser.add_argument("--report", type=Path, help="write the Markdown results file here")
    parser.add_argument(
        "--from-json",
        type=Path,
        help="no run: write --report from the figures of an earlier --json",
    )
    args = parser.parse_args(argv)
    if args.from_json:
        if not args.report:
            parser.error("--from-json needs --report")
        args.report.write_text(render(json.loads(args.from_json.read_text())))
        return 0
    if args.out is None:
        parser.error("--out is required")
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    load_start = _load()
    if args.check_only:
        plan = Plan(records=args.rows)  # the kinds are not regenerated
        config = out / "hostile.yaml"
        job = json.loads((out / "job.json").read_text())
        job.setdefault("load_start", None)  # not recorded by older runs
        job.setdefault("load_end", None)
    else:
        plan = generate(out, args.rows, args.seed)
        config = write_config(out)
        job = run_job(config, out)
        job["load_start"], job["load_end"] = load_start, _load()
        (out / "job.json").write_text(json.dumps(job))
    counts = summary_from_log(out / "job.log")
    records = count_records(out, args.seed)
    check = run_check(config, out / "warehouse", out)
    events = out / "events.jsonl"
    event_hits = event_count = None
    if events.exists():
        event_hits = sum(CANARY in line for line in events.open(errors="replace"))
        event_count = sum(1 for _ in events.open(errors="replace"))
    log_hits = sum(CANARY in line for line in (out / "job.log").open(errors="replace"))
    after_files, after_hits = scan_folder(out / "spark-local")
    spool_hits = scan_folder(out / "spool")[1] if (out / "spool").exists() else 0
    accounted = sum(
        counts.get(k, 0) for k in ("load_quarantined", "not_relevant", "relevant", "duplicates")
    )
    report = {
        "command": _command(argv),
        "seed": args.seed,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": _machine(),
        "versions": _versions("local[2]"),
        "code": _code(),
        "records_generated": plan.records,
        **records,
        "kinds": plan.kinds,
        **counts,
        "rows_accounted": accounted,
        "every_row_accounted": counts.get("rows_read") == accounted
        and counts.get("rows_read", -1) + records["csv_records_absorbed"]
        == records["records_in_files"]
        == plan.records,
        **job,
        "tables": check.get("tables", {}),
        "unreadable_tables": check.get("unreadable", {}),
        "check_error": check.get("error", ""),
        "quarantine_reasons": check.get("quarantine_reasons", {}),
        "run_status": check.get("run_status"),
        "events": event_count,
        "canaries_in_events": event_hits,
        "canaries_in_spool": spool_hits,
        "canary_lines_in_log": log_hits,
        "local_dir_files_after_run": after_files,
        "local_dir_canary_hits_after_run": after_hits,
    }
    (out / "report.json").write_text(json.dumps(report, indent=2))
    for name, table in report["tables"].items():
        print(f"{name}: {table['rows']:,} rows checked, {table['canaries']} holding a canary")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    if args.report:
        args.report.write_text(render(report))
    failures = problems(report)
    for line in failures:
        print(f"hostile_bench: {line}", file=sys.stderr)
    print(f"{out / 'report.json'}: {'FAILED' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
