"""The catalog: definitions imported into catalog_columns, handed to the parser per statement."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from lineage_udfs.settings import (
    CatalogSettings,
    CatalogSourceSettings,
    JobSettings,
    SinkSettings,
    SourceSettings,
)
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.storage.tables import LineageTables

HEADER = "table_catalog,table_schema,table_name,column_name,ordinal_position,data_type\n"
STAR = "INSERT INTO mart.copy SELECT * FROM raw.orders"
POSITIONAL = "INSERT INTO mart.totals SELECT customer_id, sum(amount) FROM raw.orders GROUP BY 1"


def _catalog(path: Path, orders: list[str]) -> None:
    lines = [f",raw,orders,{c},{i},int" for i, c in enumerate(orders, 1)]
    lines += [f",mart,copy,{c},{i},int" for i, c in enumerate(orders, 1)]
    lines += [",mart,totals,customer_id,1,int", ",mart,totals,total,2,int"]
    path.write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")


def _direct_edges(tables: LineageTables) -> set[tuple[str, str]]:
    rows = tables.read("column_lineage").where("transformation_type = 'DIRECT'").collect()
    return {
        (f"{r.source_table}.{r.source_column}", f"{r.target_table}.{r.target_column}") for r in rows
    }


def test_catalog_resolves_star_and_positional_insert(spark: SparkSession, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"query_text": q}) + "\n" for q in (STAR, POSITIONAL)))
    catalog_file = tmp_path / "catalog.csv"
    _catalog(catalog_file, ["id", "customer_id", "amount"])
    source = SourceSettings(name="log", format="jsonl", path=str(log))
    catalog = CatalogSettings(
        sources=[CatalogSourceSettings(name="files", format="csv", path=str(catalog_file))]
    )
    settings = JobSettings(
        sources=[source], sink=SinkSettings(base_path=str(tmp_path / "with")), catalog=catalog
    )
    tables = LineageTables(spark, settings.sink)

    first = extract(spark, settings)
    assert first.parser_version.rsplit("+", 1)[1].startswith("c")
    assert _direct_edges(tables) == {
        ("raw.orders.id", "mart.copy.id"),
        ("raw.orders.customer_id", "mart.copy.customer_id"),
        ("raw.orders.amount", "mart.copy.amount"),
        ("raw.orders.customer_id", "mart.totals.customer_id"),
        ("raw.orders.amount", "mart.totals.total"),
    }

    _catalog(catalog_file, ["id", "customer_id", "amount", "note"])  # a column added
    second = extract(spark, settings)
    assert second.parser_version != first.parser_version
    assert second.parsed_statements == 2  # parsed again against the changed catalog
    assert ("raw.orders.note", "mart.copy.note") in _direct_edges(tables)
    imported = {(r.table_id, r.column_name) for r in tables.read("catalog_columns").collect()}
    assert len(imported) == 10 and ("raw.orders", "note") in imported

    without = settings.model_copy(
        update={"catalog": CatalogSettings(), "sink": SinkSettings(base_path=str(tmp_path / "no"))}
    )
    extract(spark, without)
    # no expansion of *, and the INSERT's unnamed aggregate lands on a made-up column
    assert _direct_edges(LineageTables(spark, without.sink)) == {
        ("raw.orders.customer_id", "mart.totals.customer_id"),
        ("raw.orders.amount", "mart.totals._col_1"),
    }
