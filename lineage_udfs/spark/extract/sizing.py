"""How an extraction run sizes its Spark work: read splits, shuffle partitions and parse tasks
from the cores and the input, never from a size estimate.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from lineage_udfs.settings import ExecutionSettings
from lineage_udfs.spark.extract.context import default_parallelism

SHUFFLE_PARTITIONS_CONF = "spark.sql.shuffle.partitions"
MIN_FILE_PARTITIONS_CONF = "spark.sql.files.minPartitionNum"
CACHE_BATCH_CONF = "spark.sql.inMemoryColumnarStorage.batchSize"


def parse_partitions(spark: SparkSession, statements: int) -> int:
    """PARSE_TASKS_PER_CORE x the cores (shuffle partitions where the SparkContext is not
    reachable), but no more tasks than it takes to give each MIN_STATEMENTS_PER_TASK
    statements, and never fewer than min(cores, statements): a run of a few dozen statements
    is not cut into dozens of near-empty tasks, and still uses every core."""
    cores = default_parallelism(spark)
    most = (
        PARSE_TASKS_PER_CORE * cores
        if cores
        else int(spark.conf.get(SHUFFLE_PARTITIONS_CONF) or "200")
    )
    by_size = -(-statements // MIN_STATEMENTS_PER_TASK)  # ceiling
    return max(1, min(most, max(by_size, min(cores or most, statements))))


PARSE_TASKS_PER_CORE = 8
"""Parse tasks per core. Parse tasks are all Python work of uneven length (a broken statement
costs many times a good one, a rare huge one seconds): with few tasks per core, one core
finishes its last task while another still runs one, idle for up to a task's length. Smaller
tasks shorten that tail; Arrow batches and the per-worker parser make a task's fixed cost
small."""

MIN_STATEMENTS_PER_TASK = 32
"""Fewest statements a parse task is cut to before PARSE_TASKS_PER_CORE applies: below it a
task's fixed cost (scheduling, the Arrow round trip, result blocks) outweighs its parsing."""


def min_read_partitions(spark: SparkSession, execution: ExecutionSettings) -> str | None:
    """``spark.sql.files.minPartitionNum`` for the run: ``execution.min_read_partitions``, else
    READ_TASKS_PER_CORE x the cores; None (leave the session's) where the session sets it or
    the cores are unknown. Spark cuts a file source into splits of at most total bytes / this
    (and at most ``spark.sql.files.maxPartitionBytes``), and the read stage (masking and
    fingerprinting every row) runs one task per split: with the default (the cores), a log of
    a few large files leaves cores idle while the last split is read alone."""
    if execution.min_read_partitions:
        return str(execution.min_read_partitions)
    if spark.conf.get(MIN_FILE_PARTITIONS_CONF, None):
        return None
    cores = default_parallelism(spark)
    return str(READ_TASKS_PER_CORE * cores) if cores else None


READ_TASKS_PER_CORE = 4
"""Read tasks per core when the session does not say: a core's idle tail at the end of the read
stage is at most a quarter of its share."""
