"""Generate the sample query logs in data/sample/ (deterministic: same output on every run).

A fictional retailer: a Spark lakehouse (raw → staging → marts → reports) logged as JSON Lines
without query ids, and a Snowflake reporting warehouse exported from QUERY_HISTORY as CSV. Daily
ETL statements repeat with different date literals; there are temporary tables, views (one
redefined), a stored procedure, plain SELECT noise, and a few malformed rows.

Usage: python scripts/make_sample_log.py [output_dir]
"""

from __future__ import annotations

import csv
import json
import random
import sys
from datetime import date, datetime, timedelta
from pathlib import Path

DAYS = [date(2024, 3, 1) + timedelta(days=i) for i in range(7)]
ANALYSTS = ["ana", "bo", "chen", "dara"]


def _spark_etl(day: date) -> list[str]:
    d = day.isoformat()
    return [
        # staging: daily incremental loads
        "INSERT OVERWRITE staging.stg_orders\n"
        "SELECT order_id, customer_id, CAST(order_ts AS DATE) AS order_date, amount\n"
        f"FROM raw.orders\nWHERE order_ts >= DATE '{d}' AND status <> 'cancelled';",
        "INSERT INTO staging.stg_customers\n"
        "SELECT customer_id, lower(email) AS email, country\n"
        f"FROM raw.customers WHERE updated_at >= '{d}'",
        # a temporary staging table, used and dropped
        "CREATE TABLE tmp.order_items_daily AS\n"
        "SELECT order_id, SUM(quantity * unit_price) AS items_amount\n"
        f"FROM raw.order_items WHERE item_date = '{d}' GROUP BY order_id",
        "-- nightly fact load\n"
        "INSERT INTO marts.fct_sales\n"
        "SELECT o.order_id, o.customer_id, o.order_date, o.amount, i.items_amount\n"
        "FROM staging.stg_orders o JOIN tmp.order_items_daily i ON o.order_id = i.order_id\n"
        f"WHERE o.amount >= 1250 AND o.order_date = '{d}'",
        "DROP TABLE IF EXISTS tmp.order_items_daily",
        "MERGE INTO marts.dim_customer t USING staging.stg_customers s\n"
        "ON t.customer_id = s.customer_id\n"
        "WHEN MATCHED THEN UPDATE SET t.email = s.email, t.country = s.country\n"
        "WHEN NOT MATCHED THEN INSERT (customer_id, email, country) "
        "VALUES (s.customer_id, s.email, s.country)",
        # contacts for the marketing tool: the address only as a hash (a masking function)
        "INSERT OVERWRITE marts.customer_contacts\n"
        "SELECT customer_id, sha2(email, 256) AS email_hash, country\n"
        "FROM staging.stg_customers WHERE email IS NOT NULL",
    ]


def _spark_noise(day: date, rng: random.Random) -> list[str]:
    d = day.isoformat()
    country = rng.choice(["'Portugal'", "'Kenya'", "'Uruguay'", "'Finland'"])
    return [
        f"SELECT count(*) FROM marts.fct_sales WHERE order_date = '{d}'",
        f"select customer_id, email from marts.dim_customer where country = {country}",
        "SHOW TABLES IN staging",
        "DESCRIBE TABLE marts.fct_sales",
        f"WITH t AS (SELECT * FROM marts.fct_sales WHERE amount > {rng.randint(3000, 9000)})\n"
        "SELECT customer_id, SUM(amount) FROM t GROUP BY customer_id",
        "SET spark.sql.shuffle.partitions = 8",
    ]


VIEW_V1 = (
    "CREATE OR REPLACE VIEW reports.daily_revenue AS\n"
    "SELECT order_date, SUM(amount) AS revenue FROM staging.stg_orders GROUP BY order_date"
)
VIEW_V2 = (
    "CREATE OR REPLACE VIEW reports.daily_revenue AS\n"
    "SELECT s.order_date, c.country, SUM(s.amount) AS revenue\n"
    "FROM marts.fct_sales s JOIN marts.dim_customer c ON s.customer_id = c.customer_id\n"
    "GROUP BY s.order_date, c.country"
)
VIEW_TOP = (
    "CREATE VIEW reports.top_customers AS\n"
    "SELECT customer_id, SUM(amount) AS total_amount FROM marts.fct_sales\n"
    "GROUP BY customer_id HAVING SUM(amount) > 77777"
)


def make_spark_log(rng: random.Random) -> list[str]:
    """JSON Lines, no query_id (the reader hashes rows), ISO timestamps with a Z."""
    lines: list[str] = []

    def row(ts: datetime, text: str, user: str, **extra: str) -> None:
        rec = {
            "query_text": text,
            "user_name": user,
            "start_time": ts.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "end_time": (ts + timedelta(seconds=rng.randint(2, 90))).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "status": "success",
            **extra,
        }
        lines.append(json.dumps(rec))

    for n, day in enumerate(DAYS):
        base = datetime(day.year, day.month, day.day, 2, 0, 0)
        for i, text in enumerate(_spark_etl(day)):
            row(base + timedelta(minutes=5 * i, seconds=n), text, "etl_bot")
        for i, text in enumerate(_spark_noise(day, rng)):
            row(base + timedelta(hours=7, minutes=11 * i), text, rng.choice(ANALYSTS))
        for i in range(14):
            row(
                base + timedelta(hours=9 + i, minutes=rng.randint(0, 59)),
                f"SELECT order_id, amount FROM staging.stg_orders WHERE customer_id = "
                f"{rng.randint(100000, 999999)} LIMIT {rng.randint(20, 99)}",
                rng.choice(ANALYSTS),
            )
    # view definitions (object_kind=view), the first one redefined on day 5
    row(
        datetime(2024, 3, 1, 1, 0, 0),
        VIEW_V1,
        "dba",
        object_kind="view",
        object_name="reports.daily_revenue",
    )
    row(
        datetime(2024, 3, 5, 1, 0, 0),
        VIEW_V2,
        "dba",
        object_kind="view",
        object_name="reports.daily_revenue",
    )
    row(
        datetime(2024, 3, 2, 1, 0, 0),
        VIEW_TOP,
        "dba",
        object_kind="view",
        object_name="reports.top_customers",
    )
    # a multi-statement script in one log row
    row(
        datetime(2024, 3, 6, 3, 0, 0),
        "CREATE TEMPORARY VIEW recent AS SELECT * FROM staging.stg_orders "
        "WHERE order_date >= '2024-02-15';\n"
        "INSERT INTO marts.recent_orders SELECT order_id, amount FROM recent;",
        "etl_bot",
    )
    # malformed rows: truncated statements (parse quarantine), unparsable timestamp, empty text
    row(datetime(2024, 3, 3, 4, 0, 0), "INSERT OVERWRITE TABLE", "etl_bot")
    row(datetime(2024, 3, 4, 4, 0, 0), "MERGE INTO WHEN MATCHED THEN UPDATE SET", "etl_bot")
    lines.append(
        json.dumps(
            {
                "query_text": "INSERT INTO marts.fct_sales SELECT * FROM staging.stg_orders "
                "WHERE order_date = '2024-03-09'",
                "user_name": "etl_bot",
                "start_time": "the ninth of March",
                "status": "success",
            }
        )
    )
    lines.append(
        json.dumps(
            {
                "query_text": "   ",
                "user_name": "ana",
                "start_time": "2024-03-06T10:00:00Z",
                "status": "success",
            }
        )
    )
    # a corrupt (cut-off) JSON line
    lines.append('{"query_text": "INSERT INTO marts.fct_sales SELECT * FROM staging.stg_o')
    return lines


PROCEDURE = (
    "CREATE OR REPLACE PROCEDURE analytics.marts.refresh_sessions()\n"
    "RETURNS VARCHAR\nLANGUAGE SQL\nAS\n$$\nBEGIN\n"
    "  DELETE FROM analytics.marts.sessions_daily WHERE session_date = CURRENT_DATE();\n"
    "  INSERT INTO analytics.marts.sessions_daily (session_date, sessions)\n"
    "    SELECT session_date, COUNT(*) FROM analytics.staging.web_sessions\n"
    "    WHERE session_date = CURRENT_DATE() GROUP BY session_date;\n"
    "  RETURN 'refreshed-ok';\nEND;\n$$"
)


def make_snowflake_history(rng: random.Random) -> list[dict[str, str]]:
    """A QUERY_HISTORY-shaped CSV export (upper-case column names, millisecond timestamps)."""
    rows: list[dict[str, str]] = []
    seq = 0

    def row(ts: datetime, text: str, user: str, status: str = "SUCCESS", **extra: str) -> None:
        nonlocal seq
        seq += 1
        rows.append(
            {
                "QUERY_ID": f"01b2c3d4-0000-{seq:04d}-0000-00a1b2c3d4e5",
                "QUERY_TEXT": text,
                "DATABASE_NAME": "ANALYTICS",
                "SCHEMA_NAME": "PUBLIC",
                "USER_NAME": user,
                "START_TIME": ts.strftime("%Y-%m-%d %H:%M:%S.") + f"{ts.microsecond // 1000:03d}",
                "END_TIME": (ts + timedelta(seconds=rng.randint(1, 30))).strftime(
                    "%Y-%m-%d %H:%M:%S.000"
                ),
                "EXECUTION_STATUS": status,
                "WAREHOUSE_NAME": "REPORTING_WH",
                "OBJECT_KIND": extra.get("OBJECT_KIND", ""),
                "OBJECT_NAME": extra.get("OBJECT_NAME", ""),
            }
        )

    row(
        datetime(2024, 2, 29, 23, 0, 0, 250000),
        PROCEDURE,
        "DBA",
        OBJECT_KIND="procedure",
        OBJECT_NAME="analytics.marts.refresh_sessions",
    )
    for day in DAYS:
        d = day.isoformat()
        base = datetime(day.year, day.month, day.day, 5, 0, 0, rng.randint(0, 999) * 1000)
        row(
            base,
            "COPY INTO analytics.raw.web_events FROM @analytics.raw.events_stage\n"
            f"PATTERN = '.*/{d}/.*[.]json' FILE_FORMAT = (TYPE = 'JSON')",
            "LOADER",
        )
        row(
            base + timedelta(minutes=10),
            "CREATE OR REPLACE TABLE analytics.staging.web_sessions COPY GRANTS AS\n"
            "SELECT session_id, user_id, TO_DATE(event_ts) AS session_date, COUNT(*) AS events\n"
            "FROM analytics.raw.web_events\n"
            f"WHERE event_ts >= '{d} 00:00:00' AND event_type <> 'heartbeat'\n"
            "GROUP BY session_id, user_id, TO_DATE(event_ts);",
            "LOADER",
        )
        row(base + timedelta(minutes=20), "CALL analytics.marts.refresh_sessions()", "LOADER")
        row(
            base + timedelta(minutes=25),
            "INSERT INTO analytics.marts.channel_revenue (channel, revenue)\n"
            "SELECT e.channel, SUM(e.revenue) * 0.85 FROM analytics.raw.web_events e\n"
            f"WHERE e.event_ts::DATE = '{d}' AND e.channel IN ('paid_search', 'newsletter')\n"
            "GROUP BY e.channel",
            "LOADER",
        )
        for _ in range(9):
            row(
                base + timedelta(hours=4, minutes=rng.randint(0, 400)),
                rng.choice(
                    [
                        f"SELECT * FROM analytics.marts.channel_revenue WHERE revenue > "
                        f"{rng.randint(10000, 99999)}",
                        "SHOW WAREHOUSES",
                        f"select count(*) from sessions_daily where session_date = '{d}'",
                        "ALTER SESSION SET TIMEZONE = 'Europe/Lisbon'",
                        "USE SCHEMA analytics.marts",
                    ]
                ),
                rng.choice(ANALYSTS).upper(),
            )
    row(datetime(2024, 3, 2, 6, 0, 0), "CREATE TABLE AS SELECT * FROM WHERE", "LOADER", "FAIL")
    row(
        datetime(2024, 3, 2, 6, 5, 0),
        "INSERT INTO analytics.marts.channel_revenue "
        "SELECT channel FROM analytics.raw.web_events WHERE channel = 'affiliate'",
        "LOADER",
    )
    rows[-1]["START_TIME"] = "02/03/2024 06:05"  # a row with a timestamp in another format
    row(datetime(2024, 3, 3, 6, 0, 0), "", "LOADER", "FAIL")  # empty query text
    return rows


def main(argv: list[str] | None = None) -> int:
    """Write both sample files into the output folder (default: data/sample)."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "data" / "sample"
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20240301)
    (out / "spark_query_log.jsonl").write_text(
        "\n".join(make_spark_log(rng)) + "\n", encoding="utf-8"
    )
    history = make_snowflake_history(rng)
    with (out / "snowflake_query_history.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(history[0]), quoting=csv.QUOTE_ALL)
        writer.writeheader()
        writer.writerows(history)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
