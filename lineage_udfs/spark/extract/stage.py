"""The extraction stages: query logs → parsed statements → lineage Delta tables.

:func:`extract` runs them in order over one :class:`~lineage_udfs.spark.extract.context.RunContext`:

1. **read**: the only pass over the SQL text; every row is masked and fingerprinted
   (``transforms.prepare_rows``) and kept at ``execution.storage_level``;
2. **prepare**: narrow rows (no SQL text) are deduplicated by query id and one representative
   row per fingerprint gets its text back;
3. **parse**: the parse UDF over the fingerprints not parsed yet under this parser version;
4. **write**: ``queries``, ``parsed_statements``, the edge tables and the quarantine, each with
   an idempotent MERGE (``extract.merges``); then the run's ``lineage_runs`` row
   (``extract.rerun``).

Memory does not grow with the log: shuffles by query id and by fingerprint carry narrow rows,
and the text joins back for one row per fingerprint. Shuffle partitions are derived from the
input's size (``extract.sizing``), and no join is broadcast from a size estimate
(``spark.sql.autoBroadcastJoinThreshold`` -1 in conf/base.yaml): only AQE broadcasts, from
measured sizes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from contextlib import nullcontext

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.settings import ROW_OVERHEAD_BYTES, JobSettings
from lineage_udfs.sources.jdbc import jdbc_passwords
from lineage_udfs.sources.secrets import event_source_secrets
from lineage_udfs.spark.extract.aliases import write_aliases
from lineage_udfs.spark.extract.batch import FACT_TABLES, Batch, Inputs, fact_table_versions
from lineage_udfs.spark.extract.catalog import (
    Catalog,
    import_catalog,
    load_catalog,
    with_statement_catalogs,
)
from lineage_udfs.spark.extract.context import (
    RunContext,
    RunSummary,
    default_parallelism,
    session_confs,
)
from lineage_udfs.spark.extract.merges import tally_outcomes, write_batch
from lineage_udfs.spark.extract.ol_source import ingest_openlineage, openlineage_sources
from lineage_udfs.spark.extract.readers import LOAD_ERROR, SOURCE_NAME, read_query_logs
from lineage_udfs.spark.extract.reconcile import reconcile_native_lineage
from lineage_udfs.spark.extract.rerun import already_stored, record_run, unchanged_since
from lineage_udfs.spark.extract.sizing import (
    CACHE_BATCH_CONF,
    MIN_FILE_PARTITIONS_CONF,
    SHUFFLE_PARTITIONS_CONF,
    min_read_partitions,
    parse_partitions,
)
from lineage_udfs.spark.extract.transforms import (
    DEDUPE_RANK,
    FINGERPRINT,
    QUERY_BYTES,
    narrow_relevant_rows,
    parse_statements,
    prepare_rows,
    representative_rows,
    with_default_dialect,
    with_statement_texts,
)
from lineage_udfs.spark.extract.watermark import IncrementalRead
from lineage_udfs.spark.parse.udfs import parser_version
from lineage_udfs.spark.runtime.checkpoints import run_checkpoints
from lineage_udfs.spark.runtime.concurrency import in_background
from lineage_udfs.spark.runtime.preflight import check_sink_writable, input_listing
from lineage_udfs.spark.storage.claim import WRITE, warehouse_claim

logger = logging.getLogger(__name__)


def extract(
    spark: SparkSession, settings: JobSettings, environ: Mapping[str, str] = os.environ
) -> RunSummary:
    """Extract lineage from the configured query logs into the configured Delta tables.

    Re-running on the same input leaves parsed_statements, queries, table_lineage,
    column_lineage and quarantine unchanged; lineage_runs gets one row per run. The watermarks
    of incremental sources are committed last, after every lineage table
    (``extract.watermark``). JDBC passwords, Kafka SASL passwords and Marquez tokens are read
    from ``environ`` (``jdbc.password_env``, ``kafka.sasl.password_env``,
    ``marquez.api_key_env``).

    Raises:
        ConfigError: a source's password or token variable is not set.
        InputError: a source cannot be read or lacks a required column.
        OutputError: the output location is not writable (checked before any work).
    """
    check_sink_writable(spark, settings.sink)  # before any work
    ctx = RunContext.start(spark, settings, parser_version(settings.parser.options))
    confs = {
        CACHE_BATCH_CONF: str(settings.execution.cache_batch_rows),
        MIN_FILE_PARTITIONS_CONF: min_read_partitions(spark, settings.execution),
    }
    versions: dict[str, int] = {}
    try:
        inputs = Inputs(
            jdbc_passwords([*settings.sources, *settings.catalog.sources], environ)
            | event_source_secrets(settings.sources, environ),
            IncrementalRead(ctx.tables, ctx.summary.run_id),
        )
        with (
            session_confs(spark, confs),
            run_checkpoints(spark, settings.execution.checkpoint_dir, ctx.summary.run_id),
        ):
            versions = _stages(ctx, inputs)
            events = openlineage_sources(settings.sources)
            if events and ctx.summary.unchanged_since is None:
                with ctx.stage("openlineage"):
                    ctx.summary.openlineage = ingest_openlineage(
                        ctx, events, inputs.incremental, inputs.passwords
                    )
            if settings.identity.enabled:  # also on unchanged input: the evidence may be new
                with ctx.stage("identity"):
                    ctx.summary.aliases = write_aliases(ctx, settings.identity)
            if ctx.summary.unchanged_since is None:  # else: as that run left it
                ctx.summary.reconciliation = reconcile_native_lineage(
                    spark, settings.sources, ctx.tables
                )
            inputs.incremental.commit()  # the last write: see extract.watermark
        ctx.finish("succeeded")
    except Exception:
        ctx.finish("failed")
        raise
    finally:
        ctx.release()
        current = fact_table_versions(ctx) if ctx.summary.status == "succeeded" else None
        if current is not None and versions == current:
            ctx.summary.changed = False  # nothing new: no table gets a new version
            logger.info("nothing new in the input: no lineage table changed, run not recorded")
        else:
            record_run(ctx, current)
            if ctx.summary.status == "succeeded":
                for table in (*FACT_TABLES, "lineage_runs"):
                    ctx.tables.compact(table)
    logger.info("extraction summary\n%s", ctx.summary.describe())
    return ctx.summary


def _stages(ctx: RunContext, inputs: Inputs) -> dict[str, int]:
    """Run the stages; returns the written tables' versions before the run wrote them.

    On a new warehouse (no ``lineage_runs`` yet, no incremental source: nothing to compare
    with, no watermark to read) the tables are created while the log is read and prepared:
    creating a dozen Delta tables is mostly the driver's work, reading the log the cores'."""
    settings, summary = ctx.settings, ctx.summary
    if settings.execution.skip_unchanged_input:
        summary.input_listing = input_listing(ctx.spark, settings.sources)
    fresh = not any(s.incremental for s in settings.sources) and not ctx.tables.exists(
        "lineage_runs"
    )
    creating = in_background(ctx.tables.ensure_all) if fresh else nullcontext(None)
    with creating as created:
        versions: dict[str, int] = {}
        if created is None:
            with ctx.stage("setup"):
                ctx.tables.ensure_all()
                versions = _setup(ctx, inputs)
                summary.unchanged_since = unchanged_since(ctx, versions)
        if summary.unchanged_since is not None:
            summary.stored_already = True
            logger.info(
                "the input files and settings are those of run %s, and no lineage table was"
                " written since: nothing to read",
                summary.unchanged_since,
            )
            return versions
        with ctx.stage("read"):
            rows = _read(ctx, inputs)
        partitions = summary.shuffle_partitions
        shuffle = str(partitions) if partitions else None
        with session_confs(ctx.spark, {SHUFFLE_PARTITIONS_CONF: shuffle}), ctx.stage("prepare"):
            batch = _prepare(ctx, rows)
        if created is not None:
            with ctx.stage("setup"):
                created.result()  # raises what creating the tables raised
                versions = _setup(ctx, inputs)
    with session_confs(ctx.spark, {SHUFFLE_PARTITIONS_CONF: shuffle}):
        with ctx.stage("parse"):
            parsed = _parse(ctx, batch, inputs.catalog)
        with ctx.stage("write"):
            if already_stored(ctx, rows, batch):
                ctx.summary.stored_already = True
                logger.info("every row of the batch is stored already: no MERGE needed")
                tally_outcomes(ctx, batch.fingerprints)
            else:
                # an emission never reads the batch half-written (queries without their edges)
                wait = ctx.settings.openlineage.claim_wait_seconds
                with warehouse_claim(ctx.tables, WRITE, wait_seconds=wait):
                    write_batch(ctx, rows, batch, parsed)
    return versions


def _setup(ctx: RunContext, inputs: Inputs) -> dict[str, int]:
    """The written tables' versions before the run (its tables exist), and the catalog
    imported."""
    versions = fact_table_versions(ctx)
    inputs.catalog = _catalog(ctx, inputs)
    return versions


def _catalog(ctx: RunContext, inputs: Inputs) -> Catalog | None:
    """Import the catalog sources; the catalog the parser gets (None: no catalog). Its digest
    joins the parser version, so statements are parsed again against a changed catalog."""
    settings = ctx.settings.catalog
    import_catalog(ctx.spark, settings, ctx.tables, inputs.passwords)
    catalog = load_catalog(ctx.tables) if settings.sources else None
    if catalog is not None:
        ctx.summary.parser_version = f"{ctx.summary.parser_version}+c{catalog.digest}"
        ctx.kept.append(catalog.tables)
    return catalog


def _read(ctx: RunContext, inputs: Inputs) -> DataFrame:
    """Every log row (of incremental sources: those newer than their watermark), prepared once
    (``prepare_rows``) and persisted; fills the read counts and the shuffle partition count."""
    settings, summary = ctx.settings, ctx.summary
    logs = read_query_logs(
        ctx.spark,
        settings.sources,
        settings.limits.max_field_chars,
        passwords=inputs.passwords,
        incremental=inputs.incremental,
    )
    log = with_default_dialect(logs, settings.parser.options.default_dialect)
    rows = ctx.persist(
        prepare_rows(
            log, settings.limits.max_masked_sql_chars, keep_reads=settings.activity.keep_reads
        )
    )
    stats = rows.agg(
        F.count(F.lit(1)).alias("rows"),
        F.count(F.when(F.col(LOAD_ERROR).isNotNull(), 1)).alias("bad"),
        F.sum(QUERY_BYTES).alias("bytes"),
        # order-independent, overflow-free digest of the input's identities
        F.sum(F.xxhash64(SOURCE_NAME, "query_id").bitwiseAND(F.lit(0xFFFFFFFF))).alias("input"),
    ).first()
    assert stats is not None  # an aggregate without grouping has one row
    summary.rows_read = int(stats["rows"] or 0)
    summary.load_quarantined = int(stats["bad"] or 0)
    summary.input_bytes = int(stats["bytes"] or 0)
    summary.input_fingerprint = f"{int(stats['input'] or 0):016x}"
    summary.shuffle_partitions = settings.execution.shuffle_partitions_for(
        summary.input_bytes + ROW_OVERHEAD_BYTES * summary.rows_read,
        default_parallelism(ctx.spark) or 1,
    )
    return rows


def _prepare(ctx: RunContext, rows: DataFrame) -> Batch:
    """Narrow rows (no SQL text) through the shuffles by query id and by fingerprint, then the
    text of one row per fingerprint (the representatives are broadcast when small)."""
    summary = ctx.summary
    relevant, relevant_with_dups = ctx.keep(narrow_relevant_rows(rows))
    summary.rows_not_relevant = summary.rows_read - summary.load_quarantined - relevant_with_dups
    relevant = relevant.where(F.col(DEDUPE_RANK) == 1).drop(DEDUPE_RANK)
    summary.rows_relevant = relevant.count()
    summary.duplicate_query_ids = relevant_with_dups - summary.rows_relevant
    representatives, summary.distinct_statements = ctx.keep(representative_rows(relevant))
    statements, n_statements = ctx.keep(with_statement_texts(representatives, rows))
    if n_statements != summary.distinct_statements:
        raise RuntimeError(
            f"{summary.distinct_statements} distinct statements but {n_statements} with"
            " their text: the cached log rows changed under the run"
        )
    return Batch(relevant, statements, n_statements, representatives.select(FINGERPRINT))


def _parse(ctx: RunContext, batch: Batch, catalog: Catalog | None) -> DataFrame:
    """Parse the batch's statements not parsed yet under this parser version (all of them when
    ``parser.incremental`` is off), each with the part of the catalog its text names; the
    results are checkpointed."""
    settings, summary = ctx.settings, ctx.summary
    to_parse = batch.statements
    if settings.parser.incremental:
        done = (
            ctx.tables.read("parsed_statements")
            .where(F.col("parser_version") == summary.parser_version)
            .select(FINGERPRINT)
        )
        to_parse = to_parse.join(done, FINGERPRINT, "left_anti")
    if catalog is not None:
        to_parse = with_statement_catalogs(
            to_parse, catalog, settings.catalog.max_tables_per_statement
        )
    partitions = settings.parser.partitions or parse_partitions(ctx.spark, batch.statement_count)
    parsed, summary.parsed_statements = ctx.keep(
        parse_statements(to_parse, settings.parser.options, partitions), checkpoint=True
    )
    summary.reused_statements = summary.distinct_statements - summary.parsed_statements
    return parsed
