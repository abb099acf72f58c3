"""``dataset_owners``: explicit owners file, the catalog's owner, else the dominant writer."""

from __future__ import annotations

from pathlib import Path

import yaml
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from lineage_udfs.core.errors import ConfigError, InputError, one_line
from lineage_udfs.core.ownership import OwnerRule, glob_regex, owner_rules
from lineage_udfs.settings import ActivitySettings


def load_owner_rules(path: str | None) -> tuple[OwnerRule, ...]:
    """The rules of the owners file at ``path`` (none without a path).

    Raises:
        ConfigError: the file cannot be read, is not YAML or not of the owners shape.
    """
    if not path:
        return ()
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"activity.owners_file {path}: {one_line(exc)}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"activity.owners_file {path} is not valid YAML: {one_line(exc)}"
        ) from None
    return owner_rules(document, f"activity.owners_file {path}")


def catalog_owners(spark: SparkSession, path: str | None) -> DataFrame | None:
    """(name, owner, evidence) from a catalog's table export (``activity.catalog_owners``):
    each table under its ``catalog.schema.table`` and ``schema.table`` names, lower-case.

    Raises:
        InputError: the export cannot be read or has no TABLE_NAME / TABLE_OWNER column.
    """
    if not path:
        return None
    try:
        frame = spark.read.option("header", "true").csv(path)
        columns = {c.lower(): c for c in frame.columns}
    except Exception as exc:  # a missing file is an AnalysisException with a Java stack
        raise InputError(f"activity.catalog_owners {path}: {one_line(exc)}") from None
    if "table_name" not in columns or "table_owner" not in columns:
        raise InputError(
            f"activity.catalog_owners {path}: needs TABLE_NAME and TABLE_OWNER columns"
            f" (has {', '.join(frame.columns)})"
        )

    def col(name: str) -> Column:
        return F.col(f"`{columns[name]}`") if name in columns else F.lit(None).cast("string")

    parts = [col("table_catalog"), col("table_schema"), col("table_name")]
    owned = frame.where(col("table_owner").isNotNull() & (F.trim(col("table_owner")) != ""))
    full = owned.select(
        F.lower(F.concat_ws(".", *parts)).alias("name"),
        F.trim(col("table_owner")).alias("owner"),
        F.lit(0).alias("rank"),
    )
    short = owned.select(
        F.lower(F.concat_ws(".", *parts[1:])).alias("name"),
        F.trim(col("table_owner")).alias("owner"),
        F.lit(1).alias("rank"),
    )
    evidence = F.concat(F.lit(f"TABLE_OWNER in {Path(path).name}"))
    return full.unionByName(short).withColumn("evidence", evidence)


# --- dataset_owners ----------------------------------------------------------------------------


def dataset_owners(
    datasets: DataFrame,
    usage: DataFrame,
    rules: tuple[OwnerRule, ...],
    catalog: DataFrame | None,
    settings: ActivitySettings,
    as_of: Column,
) -> DataFrame:
    """``dataset_owners``: per dataset, the first rule that gives an owner: an explicit
    pattern, the catalog's owner, else the dominant writer over the window (inferred)."""
    name = F.col("dataset")
    explicit: Column = F.lit(None).cast("struct<owner:string,contact:string,evidence:string>")
    for index, rule in reversed(list(enumerate(rules, start=1))):
        explicit = F.when(
            name.rlike(glob_regex(rule.pattern)),
            F.struct(
                F.lit(rule.team).alias("owner"),
                F.lit(rule.contact).cast("string").alias("contact"),
                F.lit(f"owners file entry {index}: {rule.pattern}").alias("evidence"),
            ),
        ).otherwise(explicit)
    frame = datasets.withColumn("_explicit", explicit)
    if catalog is not None:
        best = (
            catalog.withColumn(
                "_r", F.row_number().over(Window.partitionBy("name").orderBy("rank", "owner"))
            )
            .where(F.col("_r") == 1)
            .select(F.col("name").alias("dataset"), F.struct("owner", "evidence").alias("_catalog"))
        )
        frame = frame.join(best, "dataset", "left")
    else:
        frame = frame.withColumn(
            "_catalog", F.lit(None).cast("struct<owner:string,evidence:string>")
        )
    writes = usage.where((F.col("kind") == "write") & (F.col("count_in_window") > 0))
    ranked = writes.withColumn(
        "_r",
        F.row_number().over(
            Window.partitionBy("dataset").orderBy(F.desc("count_in_window"), "user_name")
        ),
    ).withColumn("_total", F.sum("count_in_window").over(Window.partitionBy("dataset")))
    dominant = ranked.where((F.col("_r") == 1) & (F.col("user_name") != "")).select(
        "dataset",
        F.struct(
            F.col("user_name").alias("owner"),
            F.concat(
                F.col("user_name"),
                F.lit(": "),
                F.col("count_in_window").cast("string"),
                F.lit(" of "),
                F.col("_total").cast("string"),
                F.lit(f" successful writes in {settings.window_days} days"),
            ).alias("evidence"),
        ).alias("_inferred"),
    )
    frame = frame.join(dominant, "dataset", "left")
    return frame.select(
        "dataset",
        F.coalesce("_explicit.owner", "_catalog.owner", "_inferred.owner").alias("owner"),
        F.col("_explicit.contact").alias("contact"),
        F.when(F.col("_explicit").isNotNull(), "explicit")
        .when(F.col("_catalog").isNotNull(), "catalog")
        .when(F.col("_inferred").isNotNull(), "inferred")
        .otherwise("none")
        .alias("rule"),
        F.coalesce("_explicit.evidence", "_catalog.evidence", "_inferred.evidence").alias(
            "evidence"
        ),
        as_of.alias("as_of"),
    )
