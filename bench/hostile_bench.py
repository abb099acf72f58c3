"""Hostile-input harness: generate a log of hostile rows, run the extraction job on it, account
for every row and look for planted secrets everywhere the job leaves data.

    python bench/hostile_bench.py --rows 100000 --out bench/out/hostile   # the full run
    python bench/hostile_bench.py --rows 2000 --out /some/dir              # a small slice

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
``--out``; a watcher scans that folder while the job runs. The report (stdout and
``--out``/report.json) gives: rows generated and read, rows read = relevant + not relevant +
quarantined, failed Spark tasks, canaries found in the Delta tables, the OpenLineage events, the
job's log and spark.local.dir (during and after the run), and the wall time.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import random
import subprocess
import sys
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


SPARK_CHECK = r"""
import json, sys
from pyspark.sql import SparkSession, functions as F
from lineage_udfs.settings import load_settings
from lineage_udfs.spark.storage.tables import LineageTables
settings = load_settings(sys.argv[1:-1])
marker = sys.argv[-1]
spark = SparkSession.builder.master("local[2]").config(
    "spark.jars.packages", ",".join(settings.spark.packages)).config(
    "spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension").config(
    "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog").config(
    "spark.ui.enabled", "false").getOrCreate()
tables = LineageTables(spark, settings.sink)
found, rows = {}, {}
for name in ("parsed_statements", "queries", "table_lineage", "column_lineage", "quarantine",
             "lineage_runs", "openlineage_emissions"):
    try:
        frame = tables.read(name)
    except Exception:
        continue
    text = F.to_json(F.struct(*[F.col(c) for c in frame.columns]))
    rows[name] = frame.count()
    found[name] = frame.where(text.contains(marker)).count()
run = tables.read("lineage_runs").orderBy(F.col("started_at").desc()).first()
quarantine = {r["reason"][:60]: r["count"] for r in
              tables.read("quarantine").groupBy("reason").count().collect()}
print(json.dumps({"canaries": found, "rows": rows, "quarantine_reasons": quarantine,
                  "run_status": run["status"]}))
"""


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


def summary_from_log(log: Path) -> dict[str, Any]:
    """The run summary's counts and the failed-task count, from the job's log."""
    text = log.read_text(errors="replace")
    counts: dict[str, Any] = {}
    for key, label in (
        ("rows_read", "rows read"),
        ("load_quarantined", "quarantined at load"),
        ("not_relevant", "not lineage-relevant"),
        ("relevant", "relevant rows"),
    ):
        for line in text.splitlines():
            if line.strip().startswith(label):
                counts[key] = int(line.split()[len(label.split())])
                break
    for line in text.splitlines():
        if "duplicate query ids dropped:" in line:
            counts["duplicates"] = int(line.rsplit(":", 1)[1].strip(" )"))
    # Spark logs every failed task attempt at WARN ("TaskSetManager: Lost task 0.0 in stage …")
    counts["failed_tasks"] = sum(1 for line in text.splitlines() if "Lost task" in line)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--check-only",
        action="store_true",
        help="report on an earlier run in --out (regenerates the plan from --rows/--seed)",
    )
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.check_only:
        plan = Plan(records=args.rows)  # the kinds are not regenerated
        config = out / "hostile.yaml"
        job = json.loads((out / "job.json").read_text())
    else:
        plan = generate(out, args.rows, args.seed)
        config = write_config(out)
        job = run_job(config, out)
        (out / "job.json").write_text(json.dumps(job))
    counts = summary_from_log(out / "job.log")
    records = count_records(out, args.seed)
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            SPARK_CHECK,
            str(ROOT / "conf/base.yaml"),
            str(config),
            CANARY,
        ],
        cwd=out,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    tables = json.loads(check.stdout.strip().splitlines()[-1]) if check.returncode == 0 else {}
    events = out / "events.jsonl"
    event_hits = (
        sum(CANARY in line for line in events.open(errors="replace")) if events.exists() else -1
    )
    event_count = sum(1 for _ in events.open(errors="replace")) if events.exists() else 0
    log_hits = sum(CANARY in line for line in (out / "job.log").open(errors="replace"))
    after_files, after_hits = scan_folder(out / "spark-local")
    _, spool_hits = scan_folder(out / "spool") if (out / "spool").exists() else (0, 0)
    accounted = (
        counts.get("load_quarantined", 0)
        + counts.get("not_relevant", 0)
        + counts.get("relevant", 0)
        + counts.get("duplicates", 0)
    )
    report = {
        "command": " ".join(["python", "bench/hostile_bench.py", *(argv or sys.argv[1:])]),
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, {platform.system()}",
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
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
        "delta": tables,
        "events": event_count,
        "canaries_in_events": event_hits,
        "canaries_in_spool": spool_hits,
        "canary_lines_in_log": log_hits,
        "local_dir_files_after_run": after_files,
        "local_dir_canary_hits_after_run": after_hits,
        "check_error": check.stderr[-2000:] if check.returncode else "",
    }
    (out / "report.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    canaries = (
        sum(tables.get("canaries", {}).values())
        + max(event_hits, 0)
        + spool_hits
        + log_hits
        + after_hits
        + job["local_dir_canary_hits_during_run"]
    )
    ok = (
        job["exit_code"] == 0
        and report["every_row_accounted"]
        and canaries == 0
        and counts.get("failed_tasks", 0) == 0
        and bool(tables)
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
