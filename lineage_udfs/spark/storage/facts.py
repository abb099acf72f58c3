"""What the stored facts mean, for every stage that reads them."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from lineage_udfs.core.enums import ABORTED_EXECUTION_STATUSES, FAILED_EXECUTION_STATUSES


def failed_execution(status: Column) -> Column:
    """True where a logged execution status says the statement failed or was aborted (any case,
    surrounding blanks ignored); false for a null status (unknown counts as succeeded)."""
    statuses = sorted(FAILED_EXECUTION_STATUSES | ABORTED_EXECUTION_STATUSES)
    return F.coalesce(F.lower(F.trim(status)).isin(*statuses), F.lit(False))
