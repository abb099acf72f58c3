# Databricks notebook source
# MAGIC %md
# MAGIC # Run the lineage job
# MAGIC
# MAGIC Extraction from the configured query logs, the graph stage and OpenLineage emission, in
# MAGIC this notebook's Spark session (the cluster's on Databricks, a local one elsewhere); then
# MAGIC the run's summary from `lineage_runs`.
# MAGIC
# MAGIC Parameters (widgets on Databricks; `LINEAGE_<NAME>` environment variables when run as a
# MAGIC script): `config` (overlays on conf/base.yaml, comma separated: conf/databricks.yaml on a
# MAGIC cluster, conf/local.yaml locally), `warehouse` (sink.base_path), `full_refresh` (graph stage,
# MAGIC true/false), `emit` (OpenLineage emission when enabled in the config, true/false).

# COMMAND ----------

import os
from pathlib import Path

try:
    dbutils  # type: ignore[name-defined]  # noqa: B018, F821 (defined on Databricks)
    ON_DATABRICKS = True
except NameError:
    ON_DATABRICKS = False


def param(name: str, default: str) -> str:
    """A widget on Databricks, else the LINEAGE_<NAME> environment variable."""
    if ON_DATABRICKS:
        dbutils.widgets.text(name, default)  # type: ignore[name-defined]  # noqa: F821
        return dbutils.widgets.get(name)  # type: ignore[name-defined]  # noqa: F821
    return os.environ.get(f"LINEAGE_{name.upper()}", default)


ROOT = next(p for p in (Path.cwd(), *Path.cwd().parents) if (p / "conf" / "base.yaml").is_file())
os.chdir(ROOT)

default_overlay = "conf/databricks.yaml" if ON_DATABRICKS else "conf/local.yaml"
CONFIG = [Path(p.strip()) for p in param("config", default_overlay).split(",") if p.strip()]
WAREHOUSE = param("warehouse", "")
FULL_REFRESH = param("full_refresh", "false").lower() == "true"
EMIT = param("emit", "true").lower() == "true"

# COMMAND ----------

from lineage_udfs import workflow  # noqa: E402
from lineage_udfs.logging_setup import configure_logging  # noqa: E402
from lineage_udfs.spark.runtime.session import build_spark_session

settings = workflow.settings_from(
    [ROOT / "conf" / "base.yaml", *CONFIG], [f"sink.base_path={WAREHOUSE}"]
)
configure_logging(settings.logging)
spark = build_spark_session(settings.spark)
print(f"sink: {settings.sink.base_path}; sources: {[s.name for s in settings.sources]}")

# COMMAND ----------

# MAGIC %md ## Extract, analyze the graph, emit OpenLineage

# COMMAND ----------

from lineage_udfs.spark import pipeline  # noqa: E402

settings = settings.model_copy(
    update={
        "graph": settings.graph.model_copy(
            update={"full_refresh": FULL_REFRESH or settings.graph.full_refresh}
        ),
        "openlineage": settings.openlineage.model_copy(
            update={"enabled": EMIT and settings.openlineage.enabled}
        ),
    }
)
outcome = pipeline.run_extract(spark, settings)
summary = outcome.run
print(f"extraction {summary.status}: run {summary.run_id}")
assert summary.status == "succeeded", summary.line()
if outcome.graph is not None:
    print(pipeline.graph_line(outcome.graph))
emitted = pipeline.emit_line(outcome.emit) if outcome.emit is not None else "not emitted"
print(f"openlineage: {emitted}")

# COMMAND ----------

# MAGIC %md ## The run's summary

# COMMAND ----------

from lineage_udfs.spark.storage.tables import LineageTables

tables = LineageTables(spark, settings.sink)
runs = tables.read("lineage_runs").orderBy("started_at", ascending=False)
if not summary.changed:  # a rerun with nothing new leaves no row (and no Delta version)
    print("nothing new in the input: no table changed, the run left no row in lineage_runs")
else:
    this_run = runs.where(runs.run_id == summary.run_id).collect()
    assert len(this_run) == 1, f"run {summary.run_id} is not in lineage_runs"
    row = this_run[0]
    print(
        f"rows read {row.rows_read}, relevant {row.rows_relevant}, statements parsed "
        f"{row.parsed_statements}, table edges {row.table_edges}, column edges "
        f"{row.column_edges}, quarantined {row.quarantined}; by status {dict(row.by_status)}"
    )
runs.select("run_id", "started_at", "status", "rows_read", "table_edges", "quarantined").show(
    5, truncate=False
)
