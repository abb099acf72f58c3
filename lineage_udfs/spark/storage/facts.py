"""What the stored facts mean, for every stage that reads them."""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from lineage_udfs.core.enums import ABORTED_EXECUTION_STATUSES, FAILED_EXECUTION_STATUSES
from lineage_udfs.spark.storage.schemas import QUERIES


def failed_execution(status: Column) -> Column:
    """True where a logged execution status says the statement failed or was aborted (any case,
    surrounding blanks ignored); false for a null status (unknown counts as succeeded)."""
    statuses = sorted(FAILED_EXECUTION_STATUSES | ABORTED_EXECUTION_STATUSES)
    return F.coalesce(F.lower(F.trim(status)).isin(*statuses), F.lit(False))


_NAMED_FIRST: tuple[str, ...] = ("start_time", "end_time", "status", "user_name", "fingerprint")
QUERY_ORDER_COLUMNS: tuple[str, ...] = (
    *_NAMED_FIRST,
    *(c for c in QUERIES.columns if c not in _NAMED_FIRST and c not in QUERIES.keys),
)
"""The ``queries`` columns in the order :func:`query_row_order` compares them (every column
but the key)."""


def _query_order(col: Callable[[str], Column]) -> list[tuple[Column, bool]]:
    """The sort keys of :func:`query_row_order` as (value, descending); nulls sort last."""
    keys = [
        (col("start_time"), False),
        (col("end_time"), True),
        (failed_execution(col("status")), True),
        (col("status"), False),
    ]
    return keys + [(col(c), False) for c in QUERY_ORDER_COLUMNS[3:]]


def query_row_order() -> list[Column]:
    """Which of several log rows sharing a query id is its ``queries`` row: the first in this
    order (a total order over every column of the row, so the same row wins whatever the
    input's order, partitioning or split into runs):

    1. ``start_time`` ascending: the earliest logged start of the query id;
    2. ``end_time`` descending: the record of the finished execution over one logged before it
       ended (no end time), and the latest end over an earlier one;
    3. ``status``: a failed or aborted status (``failed_execution``) first, then the status
       text ascending: when two records of one execution disagree, the job takes no lineage
       from an execution one of them says did not complete (unless
       ``lineage.include_failed_executions``);
    4. ``user_name``, ``fingerprint``, then the other columns in declared order, ascending.

    Nulls sort last in every key (a value over none). Rows equal in every column are the same
    ``queries`` row.
    """
    return [v.desc_nulls_last() if desc else v.asc_nulls_last() for v, desc in _query_order(F.col)]


def query_row_preferred(candidate: str, stored: str) -> Column:
    """True where the row aliased ``candidate`` comes strictly before the row aliased
    ``stored`` in :func:`query_row_order` (both rows of one query id): the candidate replaces
    the stored row. False where they are equal in every column or the stored row comes first.
    """

    def column_of(alias: str) -> Callable[[str], Column]:
        return lambda name: F.col(f"{alias}.`{name}`")

    pairs = zip(_query_order(column_of(candidate)), _query_order(column_of(stored)), strict=True)
    preferred = F.lit(False)
    for (a, descending), (b, _) in reversed(list(pairs)):
        before = (a.isNotNull() & b.isNull()) | F.coalesce(
            a > b if descending else a < b, F.lit(False)
        )
        preferred = before | (a.eqNullSafe(b) & preferred)
    return preferred
