"""The ``symlinks`` facets of an emission: each dataset's other names, and which datasets'
names changed since the last successful emission.

A dataset's other names are the members of its class in ``dataset_aliases`` (the links that
hold at ``graph.alias_min_confidence``: the nodes the graph merges; ``core.identity``). Aliases
arrive late (an event with a symlinks facet, a ``DESCRIBE DETAIL`` export, a steward's
decision), after the statements that name the dataset were emitted; an incremental emission
would never send those statements again. So ``openlineage_symlinks`` keeps the names each
dataset's events listed at the last successful emission, and the next emission re-emits every
statement (every logged run of it) that names a dataset whose names differ now: added, changed
or gone (a rejected link). The run ids are deterministic, so consumers update those runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lineage_udfs.core.identity import AliasLink, alias_sets
from lineage_udfs.spark.storage.schemas import OPENLINEAGE_SYMLINKS
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Upsert

SYMLINKS_TABLE = "openlineage_symlinks"
ALIASES_TABLE = "dataset_aliases"

Names = dict[str, tuple[str, ...]]
"""Dataset → its other names (sorted)."""


def current_symlinks(tables: LineageTables, min_confidence: float) -> Names:
    """Every dataset's other names now (none without ``dataset_aliases``)."""
    if not tables.exists(ALIASES_TABLE):
        return {}
    links = [
        AliasLink(r.alias, r.canonical, r.evidence, r.detail or "", r.confidence, r.status)
        for r in tables.read(ALIASES_TABLE).collect()
    ]
    return alias_sets(links, min_confidence)


def emitted_symlinks(tables: LineageTables) -> Names:
    """The names the last successful emission listed (none before the first one)."""
    if not tables.exists(SYMLINKS_TABLE):
        return {}
    return {r.dataset: tuple(r.symlinks or ()) for r in tables.read(SYMLINKS_TABLE).collect()}


def changed_datasets(now: Mapping[str, tuple[str, ...]], before: Names) -> list[str]:
    """The datasets whose names differ between ``before`` and ``now`` (either side)."""
    return sorted(n for n in {*now, *before} if tuple(now.get(n, ())) != before.get(n, ()))


def statements_naming(
    tables: LineageTables, datasets: list[str], parsed_statements_version: int
) -> DataFrame:
    """The fingerprints (one column) of the statements whose events name one of ``datasets``:
    as a source or target of the parse, or an end of one of its column edges."""
    spark = tables.spark
    names = F.broadcast(spark.createDataFrame([(d,) for d in datasets], "name string"))
    parsed = tables.read("parsed_statements", version=parsed_statements_version)
    named = parsed.select(
        "fingerprint", F.explode(F.concat("sources", "targets")).alias("name")
    ).join(names, "name", "left_semi")
    edges = tables.read("column_lineage")
    ends = edges.select("fingerprint", F.col("source_table").alias("name")).union(
        edges.select("fingerprint", "target_table")
    )
    # the edges of parsed statements only (an OpenLineage source's job is no emitted run)
    in_edges = ends.join(names, "name", "left_semi").join(
        parsed.select("fingerprint"), "fingerprint", "left_semi"
    )
    return named.select("fingerprint").union(in_edges.select("fingerprint")).distinct()


def record_symlinks(tables: LineageTables, now: Names, at: datetime) -> None:
    """Store ``now`` as what was emitted (rows of datasets without other names deleted)."""
    tables.ensure(SYMLINKS_TABLE)
    frame = tables.spark.createDataFrame(
        [(d, list(names)) for d, names in sorted(now.items())],
        "dataset string, symlinks array<string>",
    ).withColumn("emitted_at", F.lit(at).cast("timestamp"))
    tables.write(
        SYMLINKS_TABLE,
        Upsert(frame.select(*OPENLINEAGE_SYMLINKS.columns), delete_missing="true"),
    )
