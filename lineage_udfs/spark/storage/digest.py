"""A short, order-independent digest of a DataFrame's rows: what a stage records with its
write (the commit's userMetadata) to tell, on the next run, whether an input changed."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def frame_digest(frame: DataFrame, columns: Sequence[str] | None = None) -> str:
    """16 hex digits over the row count and the sums of each row's xxhash64 of ``columns``
    (all by default): one aggregate job, the same for the same multiset of rows."""
    h = F.xxhash64(*(columns or frame.columns))
    row = frame.agg(
        F.count(F.lit(1)),
        F.sum(h.bitwiseAND(F.lit(0xFFFFFFFF))),
        F.sum(F.shiftrightunsigned(h, 32)),
    ).first()
    assert row is not None  # an aggregate without grouping has one row
    text = f"{row[0]}:{row[1] or 0:x}:{row[2] or 0:x}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]
