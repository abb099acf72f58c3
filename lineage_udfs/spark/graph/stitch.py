"""Stitching: the graph built over dataset identities, not over spellings.

The links of ``dataset_aliases`` that hold (accepted by the steward, or proposed with at least
``graph.alias_min_confidence``) are merged into classes (``core.identity.resolve``); the edge
tables are read with every name replaced by its class's name, so a table the Spark listener
names by its path and SQL names by its catalog name is one node. The edge tables themselves
are not rewritten: a link that arrives late re-stitches the stored history at the next graph
run, and a rejected one unstitches it.
"""

from __future__ import annotations

import hashlib
import json

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lineage_udfs.core.identity import AliasLink, resolve
from lineage_udfs.spark.storage.tables import LineageTables

ALIASES_TABLE = "dataset_aliases"


def stitch_names(tables: LineageTables, min_confidence: float) -> dict[str, str]:
    """Name → its class's name, for the names an alias link that holds touches (the names that
    are their class's name left out)."""
    if not tables.exists(ALIASES_TABLE):
        return {}
    rows = tables.read(ALIASES_TABLE).collect()
    links = [
        AliasLink(r.alias, r.canonical, r.evidence, r.detail or "", r.confidence, r.status)
        for r in rows
    ]
    return {k: v for k, v in resolve(links, min_confidence).items() if k != v}


def names_digest(names: dict[str, str]) -> str:
    """A digest of the mapping ('' for none): the graph's input includes it."""
    if not names:
        return ""
    text = json.dumps(sorted(names.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def stitched(frame: DataFrame, names: dict[str, str], *columns: str) -> DataFrame:
    """``frame`` with the names in ``columns`` replaced by their class's name."""
    if not names:
        return frame
    spark = frame.sparkSession
    mapping = F.broadcast(spark.createDataFrame(sorted(names.items()), "alias string, name string"))
    for column in columns:
        renamed = mapping.withColumnRenamed("alias", f"_{column}").withColumnRenamed(
            "name", f"_{column}_name"
        )
        frame = (
            frame.join(renamed, frame[column] == renamed[f"_{column}"], "left")
            .withColumn(column, F.coalesce(F.col(f"_{column}_name"), F.col(column)))
            .drop(f"_{column}", f"_{column}_name")
        )
    return frame
