"""Write the vendor query-history fixtures under tests/data/sources/<preset>/.

Each fixture holds one workload in the vendor's own export shape (column names and types as the
vendor documents them): repeated daily statements, a failed statement, a multi-statement script,
non-ASCII identifiers, statements on unqualified names (resolved through the recorded default
database/schema) and rows that are not user SQL. Run ``python tests/data/sources/generate.py``
after changing the workload; the files are committed.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).parent
BASE = datetime(2026, 3, 2, 6, 0, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Stmt:
    key: str
    text: str
    failed: bool = False
    runs: int = 1
    reads: tuple[str, ...] = ()
    writes: str | None = None


def workload(q: Callable[[str], str], qual: Callable[[str, str], str]) -> list[Stmt]:
    """The logical workload; ``q`` quotes an identifier, ``qual`` qualifies schema.table."""
    orders, customers, refunds = (
        qual("raw", "orders"),
        qual("raw", "customers"),
        qual("raw", "refunds"),
    )
    adressen = qual("raw", q("adressen_ü"))
    kunden = qual("marts", q("kundenübersicht"))
    uriage = qual("marts", q("売上_日次"))
    return [
        Stmt(
            "daily_revenue",
            f"INSERT INTO {qual('marts', 'daily_revenue')} (order_day, revenue)\n"
            f"SELECT CAST(created_at AS DATE), SUM(amount)\nFROM {orders}\n"
            "WHERE status = 'paid'\nGROUP BY CAST(created_at AS DATE)",
            runs=6,
            reads=("raw.orders",),
            writes="marts.daily_revenue",
        ),
        Stmt(
            "customer_orders",
            f"CREATE TABLE {qual('marts', 'customer_orders')} AS\n"
            f"SELECT c.id, c.name, o.amount\nFROM {customers} AS c\n"
            f"JOIN {orders} AS o ON o.customer_id = c.id",
            reads=("raw.customers", "raw.orders"),
            writes="marts.customer_orders",
        ),
        Stmt(
            "refund_fail",
            f"INSERT INTO {qual('marts', 'refund_totals')} (customer_id, total)\n"
            f"SELECT customer_id, SUM(amount) FROM {refunds} GROUP BY customer_id",
            failed=True,
            runs=2,
            reads=("raw.refunds",),
            writes="marts.refund_totals",
        ),
        Stmt(
            "adhoc_select",
            f"SELECT id, amount FROM {orders} WHERE amount > 100",
            runs=8,
            reads=("raw.orders",),
        ),
        Stmt(
            "umlaut",
            f"INSERT INTO {kunden} ({q('straße')}, {q('größe')})\n"
            f"SELECT {q('straße')}, {q('größe')} FROM {adressen}",
            runs=2,
            reads=("raw.adressen_ü",),
            writes="marts.kundenübersicht",
        ),
        Stmt(
            "kanji",
            f"INSERT INTO {uriage} ({q('日付')}, {q('金額')})\n"
            f"SELECT CAST(created_at AS DATE), amount FROM {orders}",
            reads=("raw.orders",),
            writes="marts.売上_日次",
        ),
        Stmt(
            "script",
            f"CREATE TEMPORARY TABLE tmp_big AS SELECT customer_id, amount FROM {orders}"
            " WHERE amount > 1000;\n"
            f"INSERT INTO {qual('marts', 'big_spenders')} (customer_id, total)\n"
            "SELECT customer_id, SUM(amount) FROM tmp_big GROUP BY customer_id;",
            reads=("raw.orders",),
            writes="marts.big_spenders",
        ),
        Stmt(
            "merge",
            f"MERGE INTO {qual('marts', 'customer_dim')} AS t\nUSING {customers} AS s\n"
            "ON t.id = s.id\nWHEN MATCHED THEN UPDATE SET name = s.name\n"
            "WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, s.name)",
            runs=2,
            reads=("raw.customers",),
            writes="marts.customer_dim",
        ),
        Stmt(
            "unqualified",
            "INSERT INTO event_summary (kind, n) SELECT kind, COUNT(*) FROM events GROUP BY kind",
            runs=2,
            reads=("<default>.events",),
            writes="<default>.event_summary",
        ),
    ]


# ---------------------------------------------------------------- helpers


def _rows(stmts: list[Stmt]) -> list[tuple[int, Stmt, datetime]]:
    out = []
    n = 0
    for s in stmts:
        for r in range(s.runs):
            out.append((n, s, BASE + timedelta(hours=r * 24, minutes=n)))
            n += 1
    return out


def _csv(
    path: Path, header: list[str], rows: list[list[object]], *, write_header: bool = True
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        if write_header:
            w.writerow(header)
        w.writerows(rows)


def _jsonl(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")


def _dq(name: str) -> str:
    return f'"{name}"' if not name.isascii() or name != name.lower() else name


def _bt(name: str) -> str:
    return f"`{name}`" if not name.isascii() else name


# ---------------------------------------------------------------- Snowflake


def snowflake() -> None:
    stmts = workload(_dq, lambda s, t: f"{s.upper()}.{t.upper() if t.isascii() else t}")
    header = [
        "QUERY_ID",
        "QUERY_TEXT",
        "DATABASE_NAME",
        "SCHEMA_NAME",
        "QUERY_TYPE",
        "SESSION_ID",
        "USER_NAME",
        "ROLE_NAME",
        "WAREHOUSE_NAME",
        "EXECUTION_STATUS",
        "ERROR_CODE",
        "ERROR_MESSAGE",
        "START_TIME",
        "END_TIME",
        "TOTAL_ELAPSED_TIME",
        "ROWS_PRODUCED",
        # ACCOUNT_USAGE.ACCESS_HISTORY joined by QUERY_ID (a script's parent query has none:
        # Snowflake records its child statements)
        "DIRECT_OBJECTS_ACCESSED",
        "OBJECTS_MODIFIED",
    ]
    qtype = {
        "daily_revenue": "INSERT",
        "customer_orders": "CREATE_TABLE_AS_SELECT",
        "refund_fail": "INSERT",
        "adhoc_select": "SELECT",
        "umlaut": "INSERT",
        "kanji": "INSERT",
        "script": "MULTI_STATEMENT",
        "merge": "MERGE",
        "unqualified": "INSERT",
    }
    rows: list[list[object]] = []
    for n, s, t in _rows(stmts):
        local = t.astimezone(tz=__import__("datetime").timezone(timedelta(hours=-8)))
        fmt = "%Y-%m-%d %H:%M:%S.%f"
        rows.append(
            [
                f"01b3{n:04x}-0604-6a1f-0000-4b1d0001{n:04x}",
                s.text,
                "ANALYTICS",
                "RAW",
                qtype[s.key],
                2938475619 + n,
                "ETL_SVC",
                "TRANSFORMER",
                "TRANSFORM_WH",
                "FAIL" if s.failed else "SUCCESS",
                "002003" if s.failed else "",
                "SQL compilation error: Object 'ANALYTICS.RAW.REFUNDS' does not exist"
                " or not authorized."
                if s.failed
                else "",
                local.strftime(fmt)[:-3] + " -0800",
                (local + timedelta(seconds=3)).strftime(fmt)[:-3] + " -0800",
                3000,
                0 if s.failed else 100 + n,
                *_sf_access(s),
            ]
        )
    for i, text in enumerate(
        [
            "SHOW TABLES IN SCHEMA ANALYTICS.RAW",
            "USE WAREHOUSE TRANSFORM_WH",
            "DESCRIBE TABLE ANALYTICS.RAW.ORDERS",
        ]
    ):
        t = BASE + timedelta(minutes=200 + i)
        local = t.astimezone(tz=__import__("datetime").timezone(timedelta(hours=-8)))
        stamp = local.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " -0800"
        rows.append(
            [
                f"01b3ff{i:02x}-0604-6a1f-0000-4b1d0001ffff",
                text,
                "ANALYTICS",
                "RAW",
                text.split()[0].upper(),
                2938475000,
                "ANALYST",
                "PUBLIC",
                "",
                "SUCCESS",
                "",
                "",
                stamp,
                stamp,
                40,
                0,
                "[]",
                "[]",
            ]
        )
    _csv(HERE / "snowflake_query_history" / "query_history.csv", header, rows)


def _sf_name(name: str) -> str:
    schema, table = name.replace("<default>", "raw").split(".")
    return f"ANALYTICS.{schema.upper()}.{table.upper() if table.isascii() else table}"


_SF_COLUMNS = {  # target column: (source table, source column), as ACCESS_HISTORY lists them
    "daily_revenue": {
        "ORDER_DAY": ("raw.orders", "CREATED_AT"),
        "REVENUE": ("raw.orders", "AMOUNT"),
    },
    "customer_orders": {
        "ID": ("raw.customers", "ID"),
        "NAME": ("raw.customers", "NAME"),
        "AMOUNT": ("raw.orders", "AMOUNT"),
    },
}


def _sf_access(s: Stmt) -> list[str]:
    """DIRECT_OBJECTS_ACCESSED and OBJECTS_MODIFIED of one query, as ACCESS_HISTORY has them."""
    if s.failed or s.key == "script":
        return ["[]", "[]"]
    reads = [*s.reads, *([s.writes] if s.key == "merge" and s.writes else [])]
    accessed = [{"objectDomain": "Table", "objectId": 100 + i, "objectName": _sf_name(r),
                 "columns": []} for i, r in enumerate(reads)]  # fmt: skip
    modified = []
    if s.writes:
        columns = [
            {
                "columnId": 900 + i,
                "columnName": target,
                "directSources": [
                    {"columnName": col, "objectDomain": "Table", "objectName": _sf_name(table)}
                ],
                "baseSources": [],
            }
            for i, (target, (table, col)) in enumerate(_SF_COLUMNS.get(s.key, {}).items())
        ]
        modified = [
            {"objectDomain": "Table", "objectId": 800, "objectName": _sf_name(s.writes),
             "columns": columns}
        ]  # fmt: skip
    return [json.dumps(accessed, ensure_ascii=False), json.dumps(modified, ensure_ascii=False)]


# ---------------------------------------------------------------- BigQuery

PROJECT = "acme-prod"


def _bq_table(name: str) -> dict[str, str]:
    dataset, table = name.split(".", 1)
    return {"project_id": PROJECT, "dataset_id": dataset, "table_id": table}


def bigquery() -> None:
    stmts = workload(_bt, lambda s, t: f"{s}.{t}")
    stype = {
        "daily_revenue": "INSERT",
        "customer_orders": "CREATE_TABLE_AS_SELECT",
        "refund_fail": "INSERT",
        "adhoc_select": "SELECT",
        "umlaut": "INSERT",
        "kanji": "INSERT",
        "script": "SCRIPT",
        "merge": "MERGE",
        "unqualified": "INSERT",
    }
    records: list[dict[str, object]] = []

    def stamp(t: datetime) -> str:
        return t.strftime("%Y-%m-%d %H:%M:%S.%f UTC")

    for n, s, t in _rows(stmts):
        job_id = f"bquxjob_{n:04d}_18e0c3a1f2"
        refs = [_bq_table(r.replace("<default>", "raw")) for r in s.reads]
        dest: dict[str, str] | None = (
            _bq_table(s.writes.replace("<default>", "raw"))
            if s.writes
            else {"project_id": PROJECT, "dataset_id": "_8b01e7c0a1f2", "table_id": f"anon{n:04d}"}
        )
        text = s.text
        if s.key == "unqualified":  # BigQuery needs the dataset: the default dataset is raw
            text = text.replace("INTO event_summary", "INTO raw.event_summary").replace(
                "FROM events", "FROM raw.events"
            )
        error = None
        if s.failed:
            error = {
                "reason": "notFound",
                "location": "",
                "debug_info": "",
                "message": f"Not found: Table {PROJECT}:raw.refunds was not found",
            }
            refs = []
        state = "DONE"
        base = {
            "creation_time": stamp(t),
            "project_id": PROJECT,
            "project_number": 734019283745,
            "user_email": "etl@acme-prod.iam.gserviceaccount.com",
            "job_type": "QUERY",
            "statement_type": stype[s.key],
            "priority": "INTERACTIVE",
            "start_time": stamp(t),
            "end_time": stamp(t + timedelta(seconds=4)),
            "state": state,
            "reservation_id": None,
            "total_bytes_processed": 0 if s.failed else 1048576 * (n + 1),
            "error_result": error,
            "cache_hit": False,
        }
        if s.key == "script":
            records.append(
                {
                    **base,
                    "job_id": job_id,
                    "query": text,
                    "referenced_tables": [],
                    "destination_table": None,
                    "parent_job_id": None,
                }
            )
            tmp = {"project_id": PROJECT, "dataset_id": "_script7c2d0e", "table_id": "tmp_big"}
            parts = [p.strip() for p in text.split(";") if p.strip()]
            records.append(
                {
                    **base,
                    "job_id": f"script_job_{n:04d}_0",
                    "query": parts[0],
                    "statement_type": "CREATE_TABLE_AS_SELECT",
                    "referenced_tables": [_bq_table("raw.orders")],
                    "destination_table": tmp,
                    "parent_job_id": job_id,
                }
            )
            records.append(
                {
                    **base,
                    "job_id": f"script_job_{n:04d}_1",
                    "query": parts[1],
                    "statement_type": "INSERT",
                    "referenced_tables": [tmp],
                    "destination_table": _bq_table("marts.big_spenders"),
                    "parent_job_id": job_id,
                }
            )
            continue
        if s.key == "merge" and n % 2:
            # a view: BigQuery lists the view's base tables, the SQL names the view
            text = text.replace("raw.customers", "raw.v_active_customers")
        records.append(
            {
                **base,
                "job_id": job_id,
                "query": text,
                "referenced_tables": refs,
                "destination_table": dest,
                "parent_job_id": None,
            }
        )
    t = BASE + timedelta(minutes=300)
    records.append(
        {
            "creation_time": stamp(t),
            "project_id": PROJECT,
            "project_number": 734019283745,
            "user_email": "loader@acme-prod.iam.gserviceaccount.com",
            "job_id": "bqjob_load_0001",
            "job_type": "LOAD",
            "statement_type": None,
            "priority": "BATCH",
            "start_time": stamp(t),
            "end_time": stamp(t),
            "state": "DONE",
            "query": None,
            "referenced_tables": [],
            "destination_table": _bq_table("raw.orders"),
            "error_result": None,
            "parent_job_id": None,
            "total_bytes_processed": None,
        }
    )
    records.append(
        {
            "creation_time": stamp(t),
            "project_id": PROJECT,
            "project_number": 734019283745,
            "user_email": "analyst@acme.com",
            "job_id": "bquxjob_running_0001",
            "job_type": "QUERY",
            "statement_type": "SELECT",
            "priority": "INTERACTIVE",
            "start_time": stamp(t),
            "end_time": None,
            "state": "RUNNING",
            "query": "SELECT COUNT(*) FROM raw.orders",
            "referenced_tables": [_bq_table("raw.orders")],
            "destination_table": None,
            "error_result": None,
            "parent_job_id": None,
            "total_bytes_processed": None,
        }
    )
    _jsonl(HERE / "bigquery_jobs" / "jobs.jsonl", records)


# ---------------------------------------------------------------- Databricks


def databricks() -> None:
    stmts = workload(_bt, lambda s, t: f"main.{s}.{t}")
    records: list[dict[str, object]] = []
    for n, s, t in _rows(stmts):
        text = s.text
        if s.key == "unqualified":
            text = text.replace("INTO event_summary", "INTO main.raw.event_summary").replace(
                "FROM events", "FROM raw.events"
            )
        records.append(
            {
                "account_id": "2f7a9c1e-0000-4f00-9000-3b4a5c6d7e8f",
                "workspace_id": "1234567890123456",
                "statement_id": f"01ef0c2a-{n:04x}-1b2c-9d3e-4f5a6b7c8d9e",
                "session_id": "01ef0c2a-0000-1b2c-9d3e-000000000001",
                "execution_status": "FAILED" if s.failed else "FINISHED",
                "compute": {
                    "type": "WAREHOUSE",
                    "cluster_id": None,
                    "warehouse_id": "a1b2c3d4e5f6a7b8",
                },
                "executed_by_user_id": "4455667788990011",
                "executed_by": "etl@acme.com",
                "statement_text": text,
                "statement_type": "SELECT" if s.key == "adhoc_select" else "OTHER",
                "error_message": "[TABLE_OR_VIEW_NOT_FOUND] The table or view"
                " `main`.`raw`.`refunds` cannot be found."
                if s.failed
                else None,
                "client_application": "Databricks SQL Editor",
                "client_driver": None,
                "total_duration_ms": 2400,
                "start_time": t.isoformat().replace("+00:00", "Z"),
                "end_time": (t + timedelta(seconds=2)).isoformat().replace("+00:00", "Z"),
                "update_time": (t + timedelta(seconds=2)).isoformat().replace("+00:00", "Z"),
            }
        )
    t = BASE + timedelta(minutes=400)
    for i, text in enumerate(["SHOW TABLES IN main.raw", "DESCRIBE TABLE main.raw.orders"]):
        records.append(
            {
                "account_id": "2f7a9c1e-0000-4f00-9000-3b4a5c6d7e8f",
                "workspace_id": "1234567890123456",
                "statement_id": f"01ef0c2a-ff{i:02x}-1b2c-9d3e-4f5a6b7c8d9e",
                "session_id": "01ef0c2a-0000-1b2c-9d3e-000000000002",
                "execution_status": "FINISHED",
                "compute": {
                    "type": "WAREHOUSE",
                    "cluster_id": None,
                    "warehouse_id": "a1b2c3d4e5f6a7b8",
                },
                "executed_by_user_id": "99",
                "executed_by": "analyst@acme.com",
                "statement_text": text,
                "statement_type": "SHOW" if i == 0 else "DESCRIBE",
                "error_message": None,
                "client_application": "Databricks SQL Editor",
                "client_driver": None,
                "total_duration_ms": 80,
                "start_time": t.isoformat().replace("+00:00", "Z"),
                "end_time": t.isoformat().replace("+00:00", "Z"),
                "update_time": t.isoformat().replace("+00:00", "Z"),
            }
        )
    _jsonl(HERE / "databricks_query_history" / "query_history.jsonl", records)
    _databricks_lineage(stmts)


def _databricks_lineage(stmts: list[Stmt]) -> None:
    """system.access.table_lineage / column_lineage rows of the workload's finished writes.
    The script's statement has none (the lineage tables left it out), and one row reads a path,
    not a table."""
    tables: list[dict[str, object]] = []
    columns: list[dict[str, object]] = []
    for n, s, t in _rows(stmts):
        if s.failed or not s.writes or s.key == "script":
            continue
        statement_id = f"01ef0c2a-{n:04x}-1b2c-9d3e-4f5a6b7c8d9e"
        target = "main." + s.writes.replace("<default>", "raw")
        common = {
            "account_id": "2f7a9c1e-0000-4f00-9000-3b4a5c6d7e8f",
            "metastore_id": "5c6d7e8f-1111-2222-3333-444455556666",
            "workspace_id": "1234567890123456",
            "entity_type": None,
            "entity_id": None,
            "entity_run_id": None,
            "statement_id": statement_id,
            "created_by": "etl@acme.com",
            "event_time": t.isoformat().replace("+00:00", "Z"),
            "event_date": t.date().isoformat(),
        }
        for read in s.reads:
            source = "main." + read.replace("<default>", "raw")
            tables.append(
                {
                    **common,
                    "source_table_full_name": source,
                    "source_type": "TABLE",
                    "source_path": None,
                    "target_table_full_name": target,
                    "target_type": "TABLE",
                    "target_path": None,
                }
            )
        if s.key == "daily_revenue":
            tables.append(
                {
                    **common,
                    "source_table_full_name": None,
                    "source_type": "PATH",
                    "source_path": "s3://acme-landing/orders/",
                    "target_table_full_name": target,
                    "target_type": "TABLE",
                    "target_path": None,
                }
            )
            for source_column, target_column in (
                ("created_at", "order_day"),
                ("amount", "revenue"),
            ):
                columns.append(
                    {
                        **common,
                        "source_table_full_name": "main.raw.orders",
                        "source_column_name": source_column,
                        "source_type": "TABLE",
                        "target_table_full_name": target,
                        "target_column_name": target_column,
                        "target_type": "TABLE",
                    }
                )
    _jsonl(HERE / "databricks_query_history" / "table_lineage.jsonl", tables)
    _jsonl(HERE / "databricks_query_history" / "column_lineage.jsonl", columns)


# ---------------------------------------------------------------- Redshift


def _long_select(chunk: int, newline: str = "\n") -> str:
    """A statement whose chunk edges fall inside a quoted string right after a blank (the
    trailing-blank trap), inside an identifier, and (with an escaped newline) between the
    backslash and the ``n``."""
    nl = newline

    def fill(prefix: str, suffix: str) -> str:
        return prefix + " " * (chunk - len(prefix) - len(suffix)) + suffix

    head = f"INSERT INTO marts.chunked_report (note, amount){nl}SELECT '"
    c0 = head + "x" * (chunk - len(head) - 1) + " "  # ends with a blank inside the string
    c1 = fill(f"a b' AS note,{nl}  amount{nl}", "FROM raw.order_li")  # cuts the identifier
    c2 = fill(f"nes{nl}WHERE note <> 'it''s a chunk edge'", nl[:1])
    return c0 + c1 + c2 + nl[1:] + "  AND amount > 0"


def redshift() -> None:
    stmts = workload(_dq, lambda s, t: f"{s}.{t}")
    header = [
        "user_id",
        "query_id",
        "query_label",
        "transaction_id",
        "session_id",
        "database_name",
        "query_type",
        "status",
        "result_cache_hit",
        "start_time",
        "end_time",
        "elapsed_time",
        "queue_time",
        "execution_time",
        "error_message",
        "returned_rows",
        "returned_bytes",
        "query_text",
        "redshift_version",
        "usage_limit",
        "compute_type",
    ]
    qtype = {"adhoc_select": "SELECT", "customer_orders": "CTAS", "merge": "MERGE", "script": "DDL"}
    rows: list[list[object]] = []
    texts: list[list[object]] = []

    def add(
        qid: int,
        s_text: str,
        failed: bool,
        kind: str,
        t: datetime,
        user_id: int = 104,
        chunk: int = 4000,
    ) -> None:
        rows.append(
            [
                user_id,
                qid,
                "default",
                88000 + qid,
                1073800000 + qid % 3,
                "dev",
                kind,
                "failed" if failed else "success",
                "f",
                t.strftime("%Y-%m-%d %H:%M:%S.%f"),
                (t + timedelta(seconds=1)).strftime("%Y-%m-%d %H:%M:%S.%f"),
                1000000,
                0,
                990000,
                'relation "raw.refunds" does not exist' if failed else "",
                0,
                0,
                s_text[:4000],
                "1.0.78880",
                "",
                "main",
            ]
        )
        for seq, start in enumerate(range(0, len(s_text), chunk)):
            texts.append(
                [
                    user_id,
                    qid,
                    88000 + qid,
                    1073800000 + qid % 3,
                    t.strftime("%Y-%m-%d %H:%M:%S.%f"),
                    seq,
                    s_text[start : start + chunk],
                ]
            )

    for n, s, t in _rows(stmts):
        add(5000 + n, s.text, s.failed, qtype.get(s.key, "INSERT"), t)
    long_text = _long_select(4000)
    add(5900, long_text, False, "INSERT", BASE + timedelta(minutes=500))
    add(
        5901,
        "SELECT pg_catalog.current_setting('search_path')",
        False,
        "SELECT",
        BASE + timedelta(minutes=501),
        user_id=1,
    )
    add(
        5902,
        "padb_fetch_sample: select count(*) from raw.orders",
        False,
        "UTILITY",
        BASE + timedelta(minutes=502),
        user_id=1,
    )
    # the text export lists chunks in no particular order
    texts.sort(key=lambda r: (int(r[5]) % 2, -int(r[1])))
    # the history export's query_text holds the first 4,000 characters only
    _csv(HERE / "redshift_query_history" / "sys_query_history.csv", header, rows)
    _csv(
        HERE / "redshift_query_history" / "sys_query_text.csv",
        ["user_id", "query_id", "transaction_id", "session_id", "start_time", "sequence", "text"],
        texts,
    )
    # STL_QUERYTEXT: 200-character chunks, newlines written as the two characters \n
    stl: list[list[object]] = []
    escaped = _long_select(200, "\\n")
    for seq, start in enumerate(range(0, len(escaped), 200)):
        # CHAR(200), blank-padded: exports trim the trailing blanks, real ones included
        chunk_text = escaped[start : start + 200].rstrip(" ")
        stl.append([104, 88950, 30211, 6950, seq, chunk_text])
    stl.reverse()
    _csv(
        HERE / "redshift_stl" / "stl_query.csv",
        [
            "userid",
            "query",
            "label",
            "xid",
            "pid",
            "database",
            "querytxt",
            "starttime",
            "endtime",
            "aborted",
            "insert_pristine",
            "concurrency_scaling_status",
        ],
        [
            [
                104,
                6950,
                "default",
                88950,
                30211,
                "dev",
                escaped[:4000],
                "2026-03-02 09:00:00.000000",
                "2026-03-02 09:00:01.000000",
                0,
                0,
                0,
            ],
            [
                104,
                6951,
                "default",
                88951,
                30211,
                "dev",
                "INSERT INTO marts.refund_totals SELECT customer_id, amount FROM raw.refunds",
                "2026-03-02 09:01:00.000000",
                "2026-03-02 09:01:01.000000",
                1,
                0,
                0,
            ],
        ],
    )
    stl.append(
        [
            104,
            88951,
            30211,
            6951,
            0,
            "INSERT INTO marts.refund_totals SELECT customer_id, amount FROM raw.refunds",
        ]
    )
    _csv(
        HERE / "redshift_stl" / "stl_querytext.csv",
        ["userid", "xid", "pid", "query", "sequence", "text"],
        stl,
    )


# ---------------------------------------------------------------- PostgreSQL


def _pg_normalize(text: str) -> str:
    """pg_stat_statements replaces constants by $n."""
    import re

    n = 0

    def repl(_m: object) -> str:
        nonlocal n
        n += 1
        return f"${n}"

    return re.sub(r"'(?:[^']|'')*'|\b\d+\b(?![A-Za-z_])", repl, text)


def postgres() -> None:
    stmts = [s for s in workload(_dq, lambda s, t: f"{s}.{t}") if not s.failed]
    header = [
        "datname",
        "rolname",
        "userid",
        "dbid",
        "toplevel",
        "queryid",
        "query",
        "plans",
        "total_plan_time",
        "calls",
        "total_exec_time",
        "min_exec_time",
        "max_exec_time",
        "mean_exec_time",
        "rows",
        "shared_blks_hit",
        "shared_blks_read",
    ]
    rows: list[list[object]] = []
    for i, s in enumerate(stmts):
        rows.append(
            [
                "shop",
                "etl",
                16384,
                16390,
                "t",
                -7312448102931 + i * 7919,
                _pg_normalize(s.text),
                0,
                0.0,
                s.runs,
                12.5 * s.runs,
                1.1,
                9.3,
                12.5,
                100 * s.runs,
                40,
                3,
            ]
        )
    rows.append(
        [
            "shop",
            "etl",
            16384,
            16390,
            "f",
            4411002200330011,
            "INSERT INTO marts.daily_revenue (order_day, revenue) SELECT "
            "CAST(created_at AS DATE), SUM(amount) FROM raw.orders GROUP BY $1",
            0,
            0.0,
            3,
            4.0,
            1.0,
            2.0,
            1.3,
            3,
            1,
            0,
        ]
    )
    rows.append(
        [
            "shop",
            "etl",
            16384,
            16390,
            "t",
            4411002200330012,
            "SELECT refresh_daily_revenue()",
            0,
            0.0,
            3,
            9.0,
            2.0,
            4.0,
            3.0,
            3,
            1,
            0,
        ]
    )
    rows.append(
        [
            "shop",
            "monitor",
            10,
            16390,
            "t",
            4411002200330013,
            "<insufficient privilege>",
            0,
            0.0,
            1,
            0.1,
            0.1,
            0.1,
            0.1,
            0,
            0,
            0,
        ]
    )
    rows.append(
        [
            "shop",
            "etl",
            16384,
            16390,
            "t",
            4411002200330014,
            "BEGIN",
            0,
            0.0,
            40,
            0.2,
            0.0,
            0.0,
            0.0,
            0,
            0,
            0,
        ]
    )
    _csv(HERE / "postgres_pg_stat_statements" / "pg_stat_statements.csv", header, rows)

    # csvlog (PostgreSQL 14+: 26 columns, no header), log_statement = 'all'
    log: list[list[object]] = []
    line = 0

    def entry(
        t: datetime,
        severity: str,
        message: str,
        sqlstate: str = "00000",
        query: str = "",
        session: str = "65f2a1b0.1a2b",
        tag: str = "idle",
    ) -> None:
        nonlocal line
        line += 1
        log.append(
            [
                t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC",
                "etl",
                "shop",
                6699,
                "127.0.0.1:52514",
                session,
                line,
                tag,
                "2026-03-02 06:00:00 UTC",
                "3/1",
                0,
                severity,
                sqlstate,
                message,
                "",
                "",
                "",
                "",
                "",
                query,
                "",
                "",
                "psql",
                "client backend",
                "",
                0,
            ]
        )

    entry(BASE, "LOG", "connection authorized: user=etl database=shop", tag="authentication")
    for _n, s, t in _rows(workload(_dq, lambda s, t: f"{s}.{t}")):
        entry(t, "LOG", f"statement: {s.text}")
        if s.failed:
            entry(
                t,
                "ERROR",
                'relation "raw.refunds" does not exist',
                "42P01",
                query=s.text,
                tag="INSERT",
            )
    entry(BASE + timedelta(minutes=600), "LOG", "checkpoint starting: time", tag="")
    _csv(HERE / "postgres_csvlog" / "postgresql.csv", [], log, write_header=False)


# ---------------------------------------------------------------- Trino


def _trino_table(name: str) -> dict[str, str]:
    schema, table = name.split(".", 1)
    return {"catalogName": "hive", "schema": schema, "table": table}


def trino() -> None:
    stmts = [s for s in workload(_dq, lambda s, t: f"{s}.{t}") if s.key != "merge"]
    records: list[dict[str, object]] = []
    for n, s, t in _rows(stmts):
        if s.key == "script":  # Trino runs one statement per query
            continue
        qid = f"20260302_{t:%H%M%S}_{n:05d}_x7k2p"
        inputs = [
            {
                **_trino_table(r.replace("<default>", "raw")),
                "columns": [],
                "connectorInfo": None,
                "physicalInputBytes": 4096,
                "physicalInputRows": 100,
            }
            for r in s.reads
        ]
        output = None
        if s.writes:
            out = _trino_table(s.writes.replace("<default>", "raw"))
            columns = []
            if s.key == "daily_revenue":
                src = {"catalog": "hive", "schema": "raw", "table": "orders"}
                columns = [
                    {"column": "order_day", "sourceColumns": [{**src, "columnName": "created_at"}]},
                    {"column": "revenue", "sourceColumns": [{**src, "columnName": "amount"}]},
                ]
            output = {
                **out,
                "columns": columns,
                "connectorOutputMetadata": None,
                "jsonLengthLimitExceeded": False,
            }
        failure = None
        if s.failed:
            failure = {
                "errorCode": {"code": 46, "name": "TABLE_NOT_FOUND", "type": "USER_ERROR"},
                "failureType": "io.trino.spi.TrinoException",
                "failureMessage": "line 2:43: Table 'hive.raw.refunds' does not exist",
                "failureTask": None,
                "failureHost": None,
                "failuresJson": "[]",
            }
            inputs, output = [], None
        records.append(
            {
                "metadata": {
                    "queryId": qid,
                    "transactionId": "c5b2f0a3-7d1e-4c8a-9e2b-11aa22bb33cc",
                    "query": s.text,
                    "updateType": None if s.key == "adhoc_select" else "INSERT",
                    "preparedQuery": None,
                    "queryState": "FAILED" if s.failed else "FINISHED",
                    "tables": [],
                    "routines": [],
                    "uri": f"http://coordinator:8080/v1/query/{qid}",
                    "plan": None,
                    "payload": None,
                },
                "statistics": {
                    "cpuTime": 0.8,
                    "wallTime": 1.2,
                    "queuedTime": 0.01,
                    "totalRows": 100,
                    "outputRows": 1,
                    "writtenRows": 0 if s.failed else 100,
                },
                "context": {
                    "user": "etl",
                    "principal": "etl",
                    "groups": [],
                    "traceToken": None,
                    "remoteClientAddress": "10.0.0.12",
                    "userAgent": "StatementClientV1/435",
                    "clientInfo": None,
                    "clientTags": [],
                    "clientCapabilities": [],
                    "source": "trino-cli",
                    "catalog": "hive",
                    "schema": "raw",
                    "resourceGroupId": ["global"],
                    "sessionProperties": {},
                    "resourceEstimates": {},
                    "serverAddress": "coordinator",
                    "serverVersion": "435",
                    "environment": "production",
                    "queryType": "SELECT" if s.key == "adhoc_select" else "INSERT",
                    "retryPolicy": "NONE",
                },
                "ioMetadata": {"inputs": inputs, "output": output},
                "failureInfo": failure,
                "warnings": [],
                "createTime": t.isoformat().replace("+00:00", "Z"),
                "executionStartTime": t.isoformat().replace("+00:00", "Z"),
                "endTime": (t + timedelta(seconds=1)).isoformat().replace("+00:00", "Z"),
            }
        )
    _jsonl(HERE / "trino_query_completed" / "query_completed.jsonl", records)


if __name__ == "__main__":
    snowflake()
    bigquery()
    databricks()
    redshift()
    postgres()
    trino()
