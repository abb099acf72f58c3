"""A PySpark job run with the OpenLineage Spark listener: the Spark producer of the test bed.

It writes, in one local SparkSession with Delta and the listener's file transport:

1. ``shop.customers``, a catalog table, from a landing JSON file (``saveAsTable``);
2. ``staging.customer_updates``, a catalog table, from rows in the job;
3. a path-based Delta write: customers per country to ``<workdir>/lake/country_stats``
   (``DataFrame.write.save(path)``: the listener names it by its location only);
4. ``mart.country_stats``: a catalog table over that location (``CREATE TABLE … LOCATION``), and
   ``mart.top_countries`` from it by ``INSERT INTO`` (a catalog-table write);
5. the MERGE of ``MERGE_SQL`` into ``shop.customers``.

Besides the events (``--events``) it writes ``DESCRIBE DETAIL`` of each catalog table as JSON
lines (``--table-locations``): the catalog's table ↔ location export that
``identity.table_locations`` reads. The SQL log that reads the same tables by catalog name is
``tests/data/openlineage/spark_listener/query_log.jsonl``.

Usage (from the repository root; the jars come from Maven Central, or the repositories of
``LINEAGE_MAVEN_REPOSITORIES``)::

    .venv/bin/python tests/engine/listener_job.py --workdir "$(mktemp -d)" \\
        --events tests/data/openlineage/spark_listener/events.jsonl \\
        --table-locations tests/data/openlineage/spark_listener/table_locations.jsonl \\
        --record-root /testbed

``--record-root`` writes the work directory as that root in both files, so what is recorded
names no folder of the machine that made it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path
from typing import Any

OPENLINEAGE_SPARK = "io.openlineage:openlineage-spark_2.13:1.53.0"
DELTA_SPARK = "io.delta:delta-spark_4.1_2.13:4.4.0"
JOB_NAMESPACE = "testbed"

MERGE_SQL = (
    "MERGE INTO shop.customers t USING staging.customer_updates s ON t.id = s.id "
    "WHEN MATCHED THEN UPDATE SET t.name = s.name, t.country = s.country "
    "WHEN NOT MATCHED THEN INSERT (id, name, country, segment) "
    "VALUES (s.id, s.name, s.country, s.segment)"
)
"""The statement both producers see: the job runs it, the SQL log holds its text."""

CATALOG_TABLES = (
    "shop.customers",
    "staging.customer_updates",
    "mart.country_stats",
    "mart.top_countries",
)

CUSTOMERS = [
    {"id": 1, "name": "Ada", "country": "KE", "segment": "retail"},
    {"id": 2, "name": "Bo", "country": "KE", "segment": "retail"},
    {"id": 3, "name": "Cy", "country": "NG", "segment": "b2b"},
    {"id": 4, "name": "Di", "country": "UG", "segment": "b2b"},
]


def session(workdir: Path, events: Path) -> Any:
    """Local Spark with Delta and the listener writing each event as one line of ``events``."""
    from pyspark.sql import SparkSession

    packages = f"{DELTA_SPARK},{OPENLINEAGE_SPARK}"
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("listener_job")
        .config("spark.jars.packages", packages)
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config(
            "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
        )
        .config("spark.extraListeners", "io.openlineage.spark.agent.OpenLineageSparkListener")
        .config("spark.openlineage.transport.type", "file")
        .config("spark.openlineage.transport.location", str(events))
        .config("spark.openlineage.namespace", JOB_NAMESPACE)
        # no user name, host or UI address of the machine in the events
        .config("spark.openlineage.facets.spark_applicationDetails.disabled", "true")
        .config("spark.sql.warehouse.dir", str(workdir / "warehouse"))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.databricks.delta.snapshotPartitions", "1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config(
            "spark.driver.extraJavaOptions",
            f"-Dderby.system.home={workdir} --add-opens=java.base/java.security=ALL-UNNAMED",
        )
    )
    repositories = os.environ.get("LINEAGE_MAVEN_REPOSITORIES", "").strip()
    if repositories:
        builder = builder.config("spark.jars.repositories", repositories)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run(workdir: Path, events: Path, table_locations: Path) -> None:
    """Run the job's writes; the listener appends their events to ``events``."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    events.parent.mkdir(parents=True, exist_ok=True)
    events.unlink(missing_ok=True)
    landing = workdir / "landing" / "customers"
    landing.mkdir(parents=True)
    (landing / "part-0.json").write_text(
        "".join(json.dumps(row) + "\n" for row in CUSTOMERS), encoding="utf-8"
    )
    spark = session(workdir, events)
    bus = spark.sparkContext._jsc.sc().listenerBus()
    try:
        for db in ("shop", "staging", "mart"):
            spark.sql(f"CREATE DATABASE IF NOT EXISTS {db}")
        schema = "id INT, name STRING, country STRING, segment STRING"
        customers = spark.read.schema(schema).json(str(landing))
        customers.write.format("delta").saveAsTable("shop.customers")
        updates = spark.createDataFrame(
            [(2, "Bea", "TZ", "retail"), (5, "Ed", "KE", "b2b")], schema
        )
        updates.write.format("delta").saveAsTable("staging.customer_updates")

        stats_path = (workdir / "lake" / "country_stats").resolve()
        (
            spark.table("shop.customers")
            .groupBy("country")
            .count()
            .withColumnRenamed("count", "customers")
            .write.format("delta")
            .save(str(stats_path))
        )
        spark.sql(f"CREATE TABLE mart.country_stats USING DELTA LOCATION '{stats_path}'")
        spark.sql("CREATE TABLE mart.top_countries (country STRING, customers BIGINT) USING DELTA")
        spark.sql(
            "INSERT INTO mart.top_countries "
            "SELECT country, customers FROM mart.country_stats WHERE customers > 1"
        )
        spark.sql(MERGE_SQL)
        bus.waitUntilEmpty()

        with table_locations.open("w", encoding="utf-8") as out:
            for name in CATALOG_TABLES:
                detail = spark.sql(f"DESCRIBE DETAIL {name}").first()
                out.write(json.dumps({"name": detail["name"], "location": detail["location"]}))
                out.write("\n")
    finally:
        spark.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, required=True, help="warehouse and landing files")
    ap.add_argument("--events", type=Path, required=True, help="the listener's events (JSONL)")
    ap.add_argument(
        "--table-locations", type=Path, required=True, help="DESCRIBE DETAIL export (JSONL)"
    )
    ap.add_argument(
        "--record-root", help="write the work directory as this root in both output files"
    )
    args = ap.parse_args(argv)
    workdir = args.workdir.resolve()
    run(workdir, args.events.resolve(), args.table_locations.resolve())
    if args.record_root:
        for path in (args.events, args.table_locations):
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace(str(workdir), args.record_root), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
