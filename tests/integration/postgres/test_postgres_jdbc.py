"""A live PostgreSQL (the OS packages' server, ``pg_stat_statements`` preloaded) read over JDBC.

A small warehouse (schemas, tables, a view, a SQL function) runs a workload; the extract job
reads ``pg_stat_statements`` (the ``postgres_pg_stat_statements`` preset over JDBC, key-set
watermark) and ``information_schema.columns`` (the catalog) as a role of its own whose password
comes from the environment; a second workload and a second run read only the new statements.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from services import Postgres  # noqa: E402

READER_PASSWORD = "lw-reader-Secret-7f3a"
PASSWORD_ENV = "LW_TEST_PG_PASSWORD"

SETUP = f"""
CREATE EXTENSION pg_stat_statements;
CREATE ROLE etl LOGIN;
CREATE ROLE lineage_reader LOGIN PASSWORD '{READER_PASSWORD}';
GRANT pg_read_all_stats TO lineage_reader;
GRANT CREATE ON DATABASE shop TO etl;
ALTER DEFAULT PRIVILEGES FOR ROLE etl GRANT SELECT ON TABLES TO lineage_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE etl GRANT USAGE ON SCHEMAS TO lineage_reader;
"""

WORKLOAD_1 = """
SET ROLE etl;
CREATE SCHEMA raw;
CREATE SCHEMA mart;
CREATE TABLE raw.customers (id int PRIMARY KEY, name text, country text);
CREATE TABLE raw.orders (id int PRIMARY KEY, customer_id int, amount numeric, ordered_at date);
CREATE TABLE raw.kunden_straße (kunde_id int, straße text);
CREATE TABLE mart.orders_copy (id int, customer_id int, amount numeric, ordered_at date);
CREATE TABLE mart.revenue (country text, total numeric);
CREATE VIEW mart.big_orders AS
  SELECT o.id, c.name, o.amount FROM raw.orders o JOIN raw.customers c ON c.id = o.customer_id
  WHERE o.amount > 100;
CREATE FUNCTION mart.refresh_revenue() RETURNS void LANGUAGE sql AS $$
  DELETE FROM mart.revenue;
  INSERT INTO mart.revenue (country, total)
    SELECT c.country, sum(o.amount) FROM raw.orders o JOIN raw.customers c ON c.id = o.customer_id
    GROUP BY c.country;
$$;
INSERT INTO raw.customers VALUES (1, 'Ada', 'DE'), (2, 'Bo', 'SE');
INSERT INTO raw.orders VALUES (10, 1, 120, '2026-03-01'), (11, 2, 80, '2026-03-02');
INSERT INTO mart.orders_copy SELECT * FROM raw.orders;
SELECT mart.refresh_revenue();
CREATE TABLE mart.addresses AS SELECT k.kunde_id, k.straße FROM raw.kunden_straße k;
"""

WORKLOAD_2 = """
SET ROLE etl;
CREATE TABLE mart.customer_totals (customer_id int, total numeric);
INSERT INTO mart.customer_totals SELECT customer_id, sum(amount) FROM raw.orders GROUP BY 1;
"""
CHANGED_ROWS_2 = 3
"""pg_stat_statements rows WORKLOAD_2 adds or changes: CREATE TABLE and INSERT are new; SET ROLE
ran in WORKLOAD_1 already and its cumulative calls grew."""


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    server = Postgres.start()
    try:
        server.psql("CREATE DATABASE shop")
        server.psql(SETUP, database="shop")
        server.psql("SELECT pg_stat_statements_reset()", database="shop")
        yield server
    finally:
        server.stop()


def _settings(server: Postgres, base: Path) -> object:
    from lineage_udfs.settings import JobSettings

    url = f"jdbc:postgresql://127.0.0.1:{server.port}/shop"
    jdbc = {"url": url, "user": "lineage_reader", "password_env": PASSWORD_ENV}
    return JobSettings.model_validate(
        {
            "sources": [
                {
                    "name": "shop",
                    "format": "jdbc",
                    "preset": "postgres_pg_stat_statements",
                    "jdbc": jdbc,
                    "defaults": {"source_system": f"postgres://127.0.0.1:{server.port}"},
                    "incremental": {
                        "keys": ["dbid", "userid", "queryid", "toplevel"],
                        "version": "calls",
                    },
                }
            ],
            "catalog": {"sources": [{"name": "shop", "format": "jdbc", "jdbc": jdbc}]},
            "sink": {"base_path": str(base / "lineage")},
            "graph": {"enabled": False},
            # the test reads neither dataset_aliases nor an activity table: on, they only cost time
            "identity": {"enabled": False},
            "activity": {"enabled": False},
            "openlineage": {"enabled": False},
        }
    )


def _table_edges(spark: object, settings: object) -> set[tuple[str, str]]:
    from lineage_udfs.spark.storage.tables import LineageTables

    tables = LineageTables(spark, settings.sink)  # type: ignore[arg-type, attr-defined]
    rows = tables.read("table_lineage").collect()
    return {(r.source_table, r.target_table) for r in rows}


def _column_edges(spark: object, settings: object) -> set[tuple[str, str]]:
    from lineage_udfs.spark.storage.tables import LineageTables

    tables = LineageTables(spark, settings.sink)  # type: ignore[arg-type, attr-defined]
    rows = tables.read("column_lineage").where("transformation_type = 'DIRECT'").collect()
    return {
        (f"{r.source_table}.{r.source_column}", f"{r.target_table}.{r.target_column}") for r in rows
    }


def test_pg_stat_statements_and_catalog_over_jdbc_twice(
    spark: object,
    postgres: Postgres,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from lineage_udfs.spark.pipeline import run_extract
    from lineage_udfs.spark.storage.tables import LineageTables

    caplog.set_level(logging.INFO)
    settings = _settings(postgres, tmp_path)
    environ = {PASSWORD_ENV: READER_PASSWORD}
    tables = LineageTables(spark, settings.sink)  # type: ignore[arg-type, attr-defined]

    postgres.psql(WORKLOAD_1, database="shop")
    first = run_extract(spark, settings, environ).run  # type: ignore[arg-type]
    assert first.status == "succeeded"
    edges = _table_edges(spark, settings)
    assert {
        ("shop.raw.orders", "shop.mart.orders_copy"),
        ("shop.raw.orders", "shop.mart.big_orders"),
        ("shop.raw.customers", "shop.mart.big_orders"),
        ("shop.raw.orders", "shop.mart.revenue"),  # the function body (toplevel = f)
        ("shop.raw.customers", "shop.mart.revenue"),
        ("shop.raw.kunden_straße", "shop.mart.addresses"),
    } <= edges
    columns = _column_edges(spark, settings)
    # SELECT * and INSERT without a column list, resolved against information_schema.columns
    assert {
        ("shop.raw.orders.id", "shop.mart.orders_copy.id"),
        ("shop.raw.orders.amount", "shop.mart.orders_copy.amount"),
        ("shop.raw.orders.ordered_at", "shop.mart.orders_copy.ordered_at"),
        ("shop.raw.customers.country", "shop.mart.revenue.country"),
        ("shop.raw.kunden_straße.straße", "shop.mart.addresses.straße"),
    } <= columns
    catalog = {
        (r.table_id, r.column_name)
        for r in tables.read("catalog_columns").where("table_schema = 'raw'").collect()
    }
    assert ("shop.raw.orders", "amount") in catalog and len(catalog) == 9
    queries_after_first = tables.read("queries").count()
    assert queries_after_first == first.rows_relevant > 0

    postgres.psql(WORKLOAD_2, database="shop")
    second = run_extract(spark, settings, environ).run  # type: ignore[arg-type]
    assert second.status == "succeeded"
    # only the new statements, and SET ROLE whose cumulative calls grew
    assert second.rows_read == CHANGED_ROWS_2
    assert tables.read("queries").count() == queries_after_first + second.rows_relevant
    assert ("shop.raw.orders", "shop.mart.customer_totals") in _table_edges(spark, settings)
    assert {
        ("shop.raw.orders.customer_id", "shop.mart.customer_totals.customer_id"),
        ("shop.raw.orders.amount", "shop.mart.customer_totals.total"),
    } <= _column_edges(spark, settings)

    # the password is in no table, no stored config and no log line
    configs = [r.config_json for r in tables.read("lineage_runs").collect()]
    assert configs and all(READER_PASSWORD not in c and PASSWORD_ENV in c for c in configs)
    assert READER_PASSWORD not in caplog.text
