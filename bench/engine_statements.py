"""Statements for the engine differential harness (``bench/engine_diff.py``).

Three parts:

* ``HANDWRITTEN``: one or more statements for every statement kind the parser supports on
  Spark (CTAS, INSERT INTO / OVERWRITE, MERGE / UPDATE / DELETE on Delta, CREATE VIEW, CACHE
  TABLE, multi-statement scripts with temp views), over the small ``SHOP`` catalog.
* ``SAMPLE_SCHEMA``: the columns of the tables that ``data/sample/spark_query_log.jsonl`` names
  (the sample generator writes SQL only; the schema is read off its statements).
* helpers that load the other origins: the shared conformance corpus, the held-out sets and the
  reference workload, keeping only Spark-dialect statements whose tables have known schemas.

Each statement is a ``Statement``; ``kind`` is derived from the SQL by ``engine_diff.kind_of``
unless given.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

Catalog = dict[str, dict[str, str]]

SPARK_DIALECTS = ("spark", "spark2", "hive", "databricks")


@dataclass
class Statement:
    """One SQL text to run in Spark and to parse."""

    id: str
    origin: str
    sql: str
    schemas: Catalog
    dialect: str = "spark"
    default_db: str = "default"
    kind: str | None = None
    # tables to create as Delta (besides DML targets, which always are)
    delta: tuple[str, ...] = ()
    setup: tuple[str, ...] = field(default_factory=tuple)


SHOP: Catalog = {
    "shop.orders": {
        "order_id": "BIGINT",
        "customer_id": "BIGINT",
        "amount": "DECIMAL(12,2)",
        "status": "STRING",
        "order_ts": "TIMESTAMP",
        "items": "ARRAY<STRUCT<sku: STRING, qty: INT>>",
    },
    "shop.customers": {
        "customer_id": "BIGINT",
        "email": "STRING",
        "country": "STRING",
        "segment": "STRING",
        "updated_at": "TIMESTAMP",
    },
    "shop.payments": {
        "payment_id": "BIGINT",
        "order_id": "BIGINT",
        "paid": "DECIMAL(12,2)",
        "method": "STRING",
    },
    "shop.dim_customer": {
        "customer_id": "BIGINT",
        "email": "STRING",
        "country": "STRING",
        "segment": "STRING",
    },
    "shop.fct_orders": {
        "order_id": "BIGINT",
        "customer_id": "BIGINT",
        "amount": "DECIMAL(12,2)",
        "paid": "DECIMAL(12,2)",
    },
    "shop.daily": {"day": "DATE", "country": "STRING", "revenue": "DECIMAL(22,2)", "n": "BIGINT"},
}

_H: list[tuple[str, str, str]] = [
    # (id, kind, sql)
    (
        "ctas_identity",
        "CTAS",
        "CREATE TABLE shop.t_ctas1 AS SELECT order_id, customer_id, amount FROM shop.orders",
    ),
    (
        "ctas_transform_filter",
        "CTAS",
        "CREATE TABLE shop.t_ctas2 AS SELECT order_id, amount * 1.2 AS gross, upper(status) AS st "
        "FROM shop.orders WHERE status <> 'cancelled'",
    ),
    (
        "ctas_join_agg",
        "CTAS",
        "CREATE TABLE shop.t_ctas3 AS SELECT c.country, sum(o.amount) AS revenue, "
        "count(*) AS n FROM shop.orders o JOIN shop.customers c ON o.customer_id = c.customer_id "
        "GROUP BY c.country",
    ),
    (
        "ctas_case",
        "CTAS",
        "CREATE TABLE shop.t_ctas4 AS SELECT order_id, CASE WHEN amount > 100 THEN 'big' "
        "ELSE 'small' END AS band, CASE WHEN status = 'paid' THEN amount ELSE 0 END AS paid_amount "
        "FROM shop.orders",
    ),
    (
        "ctas_window",
        "CTAS",
        "CREATE TABLE shop.t_ctas5 AS SELECT order_id, row_number() OVER (PARTITION BY "
        "customer_id ORDER BY order_ts DESC) AS rn, sum(amount) OVER (PARTITION BY customer_id) "
        "AS cust_total FROM shop.orders",
    ),
    (
        "ctas_cte_union",
        "CTAS",
        "CREATE TABLE shop.t_ctas6 AS WITH a AS (SELECT order_id AS id, amount AS v FROM "
        "shop.orders), b AS (SELECT payment_id AS id, paid AS v FROM shop.payments) "
        "SELECT id, v FROM a UNION ALL SELECT id, v FROM b",
    ),
    (
        "ctas_subquery_in",
        "CTAS",
        "CREATE TABLE shop.t_ctas7 AS SELECT customer_id, email FROM shop.customers WHERE "
        "customer_id IN (SELECT customer_id FROM shop.orders WHERE amount > 10)",
    ),
    (
        "ctas_coalesce_concat",
        "CTAS",
        "CREATE TABLE shop.t_ctas8 AS SELECT concat(c.email, '/', c.country) AS k, "
        "coalesce(p.paid, o.amount) AS v FROM shop.orders o LEFT JOIN shop.payments p "
        "ON p.order_id = o.order_id JOIN shop.customers c ON c.customer_id = o.customer_id",
    ),
    (
        "ctas_explode",
        "CTAS",
        "CREATE TABLE shop.t_ctas9 AS SELECT order_id, item.sku AS sku, item.qty AS qty "
        "FROM shop.orders LATERAL VIEW explode(items) x AS item",
    ),
    (
        "ctas_distinct_having",
        "CTAS",
        "CREATE TABLE shop.t_ctas10 AS SELECT customer_id, max(amount) AS top FROM shop.orders "
        "GROUP BY customer_id HAVING count(DISTINCT status) > 1 ORDER BY top DESC",
    ),
    (
        "ctas_using_parquet",
        "CTAS",
        "CREATE TABLE shop.t_ctas11 USING parquet AS SELECT DISTINCT country, segment "
        "FROM shop.customers",
    ),
    (
        "insert_into_select",
        "INSERT",
        "INSERT INTO shop.fct_orders SELECT o.order_id, o.customer_id, o.amount, p.paid "
        "FROM shop.orders o JOIN shop.payments p ON p.order_id = o.order_id",
    ),
    (
        "insert_into_columns",
        "INSERT",
        "INSERT INTO shop.dim_customer (customer_id, email) SELECT customer_id, lower(email) "
        "FROM shop.customers",
    ),
    (
        "insert_positional_renamed",
        "INSERT",
        "INSERT INTO shop.fct_orders SELECT order_id AS a, customer_id AS b, amount AS c, "
        "amount * 0 AS d FROM shop.orders",
    ),
    (
        "insert_overwrite",
        "INSERT_OVERWRITE",
        "INSERT OVERWRITE TABLE shop.daily SELECT CAST(o.order_ts AS DATE), c.country, "
        "sum(o.amount), count(1) FROM shop.orders o JOIN shop.customers c "
        "ON o.customer_id = c.customer_id GROUP BY 1, 2",
    ),
    (
        "insert_overwrite_union",
        "INSERT_OVERWRITE",
        "INSERT OVERWRITE shop.dim_customer SELECT customer_id, email, country, segment "
        "FROM shop.customers WHERE country = 'KE' UNION SELECT customer_id, email, country, "
        "'new' FROM shop.customers WHERE segment IS NULL",
    ),
    (
        "insert_cte",
        "INSERT",
        "WITH paid AS (SELECT order_id, sum(paid) AS paid FROM shop.payments GROUP BY order_id) "
        "INSERT INTO shop.fct_orders SELECT o.order_id, o.customer_id, o.amount, paid.paid "
        "FROM shop.orders o LEFT JOIN paid ON paid.order_id = o.order_id",
    ),
    (
        "insert_values",
        "INSERT",
        "INSERT INTO shop.daily VALUES (DATE'2024-01-01', 'KE', 1.0, 1)",
    ),
    (
        "merge_upsert",
        "MERGE",
        "MERGE INTO shop.dim_customer t USING shop.customers s ON t.customer_id = s.customer_id "
        "WHEN MATCHED THEN UPDATE SET t.email = s.email, t.country = s.country "
        "WHEN NOT MATCHED THEN INSERT (customer_id, email, country, segment) "
        "VALUES (s.customer_id, s.email, s.country, s.segment)",
    ),
    (
        "merge_star",
        "MERGE",
        "MERGE INTO shop.dim_customer t USING (SELECT customer_id, email, country, segment "
        "FROM shop.customers WHERE updated_at > '2024-01-01') s ON t.customer_id = s.customer_id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    ),
    (
        "merge_delete_expr",
        "MERGE",
        "MERGE INTO shop.fct_orders t USING shop.payments p ON t.order_id = p.order_id "
        "WHEN MATCHED AND p.method = 'refund' THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET t.paid = t.paid + p.paid",
    ),
    (
        "update_delta",
        "UPDATE",
        "UPDATE shop.dim_customer SET email = lower(email), segment = 'x' WHERE country = 'KE'",
    ),
    (
        "delete_delta",
        "DELETE",
        "DELETE FROM shop.fct_orders WHERE paid IS NULL",
    ),
    (
        "delete_subquery",
        "DELETE",
        "DELETE FROM shop.fct_orders WHERE customer_id IN (SELECT customer_id FROM "
        "shop.customers WHERE country = 'XX')",
    ),
    (
        "view_simple",
        "CREATE_VIEW",
        "CREATE VIEW shop.v_orders AS SELECT order_id, amount FROM shop.orders "
        "WHERE status = 'paid'",
    ),
    (
        "view_join",
        "CREATE_VIEW",
        "CREATE OR REPLACE VIEW shop.v_cust_rev AS SELECT c.customer_id, c.email, "
        "sum(o.amount) AS revenue FROM shop.customers c JOIN shop.orders o "
        "ON o.customer_id = c.customer_id GROUP BY c.customer_id, c.email",
    ),
    (
        "cache_table_as",
        "CACHE",
        "CACHE TABLE recent_orders AS SELECT order_id, amount FROM shop.orders "
        "WHERE order_ts > '2024-01-01'",
    ),
    (
        "script_temp_view",
        "SCRIPT",
        "CREATE OR REPLACE TEMPORARY VIEW big AS SELECT order_id, customer_id, amount "
        "FROM shop.orders WHERE amount > 100;\n"
        "INSERT INTO shop.fct_orders SELECT b.order_id, b.customer_id, b.amount, p.paid "
        "FROM big b JOIN shop.payments p ON p.order_id = b.order_id",
    ),
    (
        "script_two_temp_views",
        "SCRIPT",
        "CREATE TEMP VIEW c1 AS SELECT customer_id, upper(country) AS country FROM "
        "shop.customers;\n"
        "CREATE TEMP VIEW o1 AS SELECT customer_id, sum(amount) AS total FROM shop.orders "
        "GROUP BY customer_id;\n"
        "CREATE TABLE shop.t_script1 AS SELECT c1.country, o1.total FROM c1 JOIN o1 "
        "ON c1.customer_id = o1.customer_id",
    ),
    (
        "script_cache_then_insert",
        "SCRIPT",
        "CACHE TABLE pay AS SELECT order_id, paid FROM shop.payments WHERE method = 'card';\n"
        "INSERT OVERWRITE shop.fct_orders SELECT o.order_id, o.customer_id, o.amount, pay.paid "
        "FROM shop.orders o JOIN pay ON pay.order_id = o.order_id",
    ),
    (
        "script_ctas_then_merge",
        "SCRIPT",
        "CREATE TABLE shop.t_stage AS SELECT customer_id, email, country, segment FROM "
        "shop.customers WHERE updated_at > '2024-01-01';\n"
        "MERGE INTO shop.dim_customer t USING shop.t_stage s ON t.customer_id = s.customer_id "
        "WHEN MATCHED THEN UPDATE SET t.email = s.email;\n"
        "DROP TABLE shop.t_stage",
    ),
]


def handwritten() -> list[Statement]:
    """The hand-written statements, one or more per statement kind."""
    return [
        Statement(id=f"hand:{i}", origin="handwritten", sql=sql, schemas=SHOP, kind=kind)
        for i, kind, sql in _H
    ]


SAMPLE_SCHEMA: Catalog = {
    "raw.orders": {
        "order_id": "BIGINT",
        "customer_id": "BIGINT",
        "order_ts": "TIMESTAMP",
        "amount": "DECIMAL(12,2)",
        "status": "STRING",
    },
    "raw.customers": {
        "customer_id": "BIGINT",
        "email": "STRING",
        "country": "STRING",
        "updated_at": "STRING",
    },
    "raw.order_items": {
        "order_id": "BIGINT",
        "quantity": "INT",
        "unit_price": "DECIMAL(12,2)",
        "item_date": "STRING",
    },
    "staging.stg_orders": {
        "order_id": "BIGINT",
        "customer_id": "BIGINT",
        "order_date": "DATE",
        "amount": "DECIMAL(12,2)",
    },
    "staging.stg_customers": {"customer_id": "BIGINT", "email": "STRING", "country": "STRING"},
    "tmp.order_items_daily": {"order_id": "BIGINT", "items_amount": "DECIMAL(22,2)"},
    "marts.fct_sales": {
        "order_id": "BIGINT",
        "customer_id": "BIGINT",
        "order_date": "DATE",
        "amount": "DECIMAL(12,2)",
        "items_amount": "DECIMAL(22,2)",
    },
    "marts.dim_customer": {"customer_id": "BIGINT", "email": "STRING", "country": "STRING"},
    "marts.recent_orders": {"order_id": "BIGINT", "amount": "DECIMAL(12,2)"},
}


def sample_log(path: Path) -> list[Statement]:
    """Distinct statements of the sample Spark query log, in first-seen order; statements
    that differ only in literals count once (the project's own literal masking)."""
    from lineage_udfs.core.fingerprint import normalized_masked_sql

    seen: set[str] = set()
    out: list[Statement] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        try:
            text = json.loads(line).get("query_text")
        except json.JSONDecodeError:
            continue  # the log holds one deliberately truncated line
        if not isinstance(text, str) or not text.strip():
            continue
        shape = normalized_masked_sql(text, "spark")
        if shape in seen:
            continue
        seen.add(shape)
        out.append(Statement(id=f"sample:{n}", origin="sample", sql=text, schemas=SAMPLE_SCHEMA))
    return out


def _flat(schemas: object) -> Catalog:
    out: Catalog = {}
    if not isinstance(schemas, dict):
        return out
    for table, cols in schemas.items():
        if isinstance(cols, dict) and cols:
            out[str(table).lower()] = {str(c).lower(): str(t or "STRING") for c, t in cols.items()}
    return out


def corpus_cases(path: Path, origin: str) -> Iterator[Statement]:
    """Spark-dialect cases with schemas from a corpus-format JSONL file."""
    if not path.exists():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        schemas = _flat(case.get("schemas"))
        if case.get("dialect") not in SPARK_DIALECTS or not schemas:
            continue
        yield Statement(
            id=f"{origin}:{case['id']}",
            origin=origin,
            sql=case["sql"],
            schemas=schemas,
            dialect=case["dialect"],
        )


def workload(path: Path, schema_path: Path, per_group: int, tpc: int) -> list[Statement]:
    """A stratified slice of the reference workload: the first ``per_group`` rows of every
    synthetic (family, wrapper) group and the first ``tpc`` TPC-H and TPC-DS rows each."""
    nested = json.loads(schema_path.read_text(encoding="utf-8"))
    catalog: Catalog = {
        f"{db}.{t}": {c.lower(): ty for c, ty in cols.items()}
        for db, tables in nested.items()
        for t, cols in tables.items()
    }
    taken: dict[tuple[str, str], int] = {}
    out: list[Statement] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        family = row["family"]
        group = (family, row["wrapper"]) if family not in ("tpch", "tpcds") else (family, "")
        limit = tpc if family in ("tpch", "tpcds") else (1 if family == "huge" else per_group)
        if taken.get(group, 0) >= limit:
            continue
        taken[group] = taken.get(group, 0) + 1
        out.append(
            Statement(
                id=f"workload:{row['id']}",
                origin="workload",
                sql=row["sql"],
                schemas=catalog,
                default_db="tpc" if family in ("tpch", "tpcds") else "default",
            )
        )
    return out
