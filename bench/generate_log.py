"""Generate a realistic synthetic query log for throughput benchmarks.

The statement pool is the reference parser workload (``../shared/bench/workload.jsonl`` by
default: 2,000 Spark SQL lineage statements, 62 % short ETL, CTE chains, TPC-H/TPC-DS wrapped
as INSERT/CTAS/VIEW/MERGE/UPDATE, 1 % huge). From it the generator builds a log shaped like a
warehouse's query history:

* ``--rows`` log rows, of which ``--select-share`` are plain SELECT noise (dashboards, ad hoc)
  and ``--malformed-share`` are broken statements (truncated, or with a stray token);
* each distinct lineage statement runs about ``--repetition`` times (a daily ETL statement
  runs every day), each run with other literal values, so that masking and fingerprinting are
  what collapses them, as in a real log;
* distinct statements beyond the pool's size are variants: their target table gets a suffix,
  which changes the fingerprint but keeps the pool's size and cost distribution;
* ``--dialect-mix`` spreads statements over dialects by transpiling the pool with sqlglot
  (once per dialect, at start-up).

Writes CSV, JSON Lines or Parquet with the canonical log columns (query_id, query_text,
dialect, default_database, default_schema, user_name, start_time, end_time, status,
source_system, object_kind, object_name: the names the job's ``columns`` mapping defaults to, so a
source needs no mapping), streaming in chunks so that a million rows need little memory.

Example:
    python bench/generate_log.py --rows 100000 --repetition 20 --format parquet \
        --out bench/data/log_100k.parquet
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import random
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlglot

from lineage_udfs.core.records import QUERY_LOG_COLUMNS

COLUMNS = QUERY_LOG_COLUMNS

SOURCE_SYSTEMS = {
    "spark": "databricks://acme-prod",
    "snowflake": "snowflake://acme-org.acme",
    "postgres": "postgres://analytics-db:5432",
    "bigquery": "bigquery",
}

_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_QUOTED_OR_COMMENT = re.compile(r"('(?:[^']|'')*'|\"[^\"]*\"|/\*.*?\*/|--[^\n]*)", re.S)
_DATE = re.compile(r"'\d{4}-\d{2}-\d{2}'")
_STRING = re.compile(r"'[A-Za-z_ ]{1,30}'")
_TARGET = re.compile(
    r"(?i)\b(INSERT\s+(?:INTO|OVERWRITE)(?:\s+TABLE)?|CREATE\s+(?:OR\s+REPLACE\s+)?"
    r"(?:TABLE|VIEW)|MERGE\s+INTO|UPDATE)\s+([A-Za-z_][\w]*\.[A-Za-z_][\w]*)"
)

SELECT_NOISE = (
    "SELECT {c1}, COUNT(*) AS n FROM {t} WHERE {c2} > {n} GROUP BY {c1} ORDER BY n DESC LIMIT {n2}",
    "SELECT * FROM {t} WHERE {c1} = '{s}' AND {c2} >= '{d}'",
    "SELECT a.{c1}, b.{c2} FROM {t} a JOIN {t2} b ON a.{c1} = b.{c1} WHERE b.{c2} < {n}",
    "SHOW TABLES IN {db}",
    "DESCRIBE TABLE {t}",
    "SET spark.sql.shuffle.partitions = {n2}",
)

WORDS = ("pending", "shipped", "gold", "EMEA", "web", "store", "retail", "promo", "active")


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--repetition", type=float, default=20.0)
    parser.add_argument("--select-share", type=float, default=0.3)
    parser.add_argument("--malformed-share", type=float, default=0.01)
    parser.add_argument(
        "--dialect-mix",
        default="spark=0.7,snowflake=0.15,postgres=0.1,bigquery=0.05",
        help="comma list of dialect=share",
    )
    parser.add_argument(
        "--workload", type=Path, default=here.parent.parent / "shared" / "bench" / "workload.jsonl"
    )
    parser.add_argument("--format", choices=("csv", "jsonl", "parquet"), default="parquet")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args(argv)


def _load_pool(path: Path, dialects: list[str]) -> dict[str, list[str]]:
    """The workload's statements, transpiled once into each dialect of the mix."""
    base = [json.loads(line)["sql"] for line in path.read_text().splitlines() if line.strip()]
    pool: dict[str, list[str]] = {"spark": base}
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    for dialect in dialects:
        if dialect == "spark":
            continue
        out = []
        for sql in base:
            try:
                out.append(";\n".join(sqlglot.transpile(sql, read="spark", write=dialect)))
            except Exception:  # keep the Spark text when sqlglot cannot transpile it
                out.append(sql)
        pool[dialect] = out
    return pool


def _vary_literals(sql: str, rnd: random.Random, day: datetime) -> str:
    """Same statement, other literal values: what a daily ETL run looks like in the log."""
    # the odd parts of this split are quoted strings and comments: dates and words are replaced
    # inside string literals only (a pattern over the whole text would also match the text
    # *between* two literals on a line), numbers outside them only
    parts = _QUOTED_OR_COMMENT.split(sql)
    for i in range(0, len(parts), 2):
        parts[i] = _NUMBER.sub(
            lambda m: str(rnd.randint(1, 5000)) if rnd.random() < 0.5 else m[0], parts[i]
        )
    for i in range(1, len(parts), 2):
        if _DATE.fullmatch(parts[i]):
            parts[i] = f"'{(day - timedelta(days=rnd.randint(0, 3))):%Y-%m-%d}'"
        elif _STRING.fullmatch(parts[i]):
            parts[i] = f"'{rnd.choice(WORDS)}'"
    return "".join(parts)


def _variant(sql: str, variant: int) -> str:
    """A distinct statement of the same shape: the target table gets a suffix."""
    if variant == 0:
        return sql
    return _TARGET.sub(lambda m: f"{m[1]} {m[2]}_v{variant}", sql, count=1)


def _malform(sql: str, rnd: random.Random) -> str:
    if rnd.random() < 0.5:
        return sql[: max(8, int(len(sql) * rnd.uniform(0.2, 0.8)))]
    words = sql.split(" ")
    words.insert(rnd.randint(1, max(1, len(words) - 1)), rnd.choice(("FROM FROM", "((", "SELEC")))
    return " ".join(words)


def _noise(rnd: random.Random) -> str:
    db = rnd.choice(("sales", "crm", "ops", "finance", "events"))
    return rnd.choice(SELECT_NOISE).format(
        t=f"{db}.t{rnd.randint(1, 300)}",
        t2=f"{db}.t{rnd.randint(1, 300)}",
        db=db,
        c1=f"c{rnd.randint(1, 9)}",
        c2=f"c{rnd.randint(1, 9)}",
        n=rnd.randint(1, 10_000),
        n2=rnd.randint(1, 500),
        s=rnd.choice(WORDS),
        d=f"2026-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}",
    )


def generate(args: argparse.Namespace) -> Iterator[dict[str, object]]:
    """Yield log rows in time order."""
    rnd = random.Random(args.seed)
    mix = [(d, float(s)) for d, s in (p.split("=") for p in args.dialect_mix.split(","))]
    dialects = [d for d, _ in mix]
    pool = _load_pool(args.workload, dialects)
    pool_size = len(pool["spark"])
    lineage_rows = int(args.rows * (1 - args.select_share))
    distinct = max(1, round(lineage_rows / args.repetition))
    # each distinct statement gets a dialect for life, as a job runs on one engine
    stmt_dialect = rnd.choices(dialects, weights=[s for _, s in mix], k=distinct)
    start = datetime(2026, 10, 1, tzinfo=UTC)
    span = timedelta(days=args.days).total_seconds()
    for i in range(args.rows):
        at = start + timedelta(seconds=span * i / max(1, args.rows))
        if rnd.random() < args.select_share:
            dialect, text = "spark", _noise(rnd)
        else:
            k = rnd.randrange(distinct)
            dialect = stmt_dialect[k]
            text = _vary_literals(_variant(pool[dialect][k % pool_size], k // pool_size), rnd, at)
            if rnd.random() < args.malformed_share:
                text = _malform(text, rnd)
        failed = rnd.random() < 0.02
        yield {
            "query_id": f"q{args.seed}-{i:09d}",
            "query_text": text,
            "dialect": dialect,
            "default_database": "main" if dialect == "spark" else "ANALYTICS",
            "default_schema": None if dialect == "spark" else "PUBLIC",
            "user_name": f"svc_etl_{rnd.randint(1, 12)}",
            "start_time": at.isoformat(),
            "end_time": (at + timedelta(seconds=rnd.expovariate(1 / 30))).isoformat(),
            "status": "failed" if failed else "success",
            "source_system": SOURCE_SYSTEMS.get(dialect, dialect),
            "object_kind": "query",
            "object_name": None,
        }


def _write(rows: Iterator[dict[str, object]], fmt: str, out: Path) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    if fmt == "csv":
        with out.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=COLUMNS)
            writer.writeheader()
            for row in rows:
                writer.writerow(row)
                n += 1
    elif fmt == "jsonl":
        with out.open("w") as fh:
            for row in rows:
                fh.write(json.dumps(row) + "\n")
                n += 1
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema([(c, pa.string()) for c in COLUMNS])
        with pq.ParquetWriter(out, schema) as writer:
            chunk: list[dict[str, object]] = []
            for row in rows:
                chunk.append(row)
                n += 1
                if len(chunk) == 50_000:
                    writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
                    chunk = []
            if chunk:
                writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
    return n


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    if not args.workload.exists():
        sys.stderr.write(f"workload not found: {args.workload} (pass --workload)\n")
        return 2
    n = _write(generate(args), args.format, args.out)
    sys.stderr.write(f"wrote {n} rows to {args.out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
