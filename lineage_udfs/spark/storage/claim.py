"""One job at a time sends events from the warehouse or writes a batch into it: the claim.

Two jobs that emit at once (two extracts over overlapping logs, or an extract and
``jobs/emit_openlineage.py``) would each plan from the same watermark and send the same events
twice; they would also share the driver's spool. And an emission that reads while an extraction
is between its ``queries`` commit and its edge commits sends runs without their column lineage,
and its watermark then moves past them. So an emission with something to send, and the write
stage of an extraction, first claim the one row of ``openlineage_claim``: a MERGE that takes the
row only when it is free (released, or its lease lapsed). Two claims at once both read that row,
so Delta lets one commit and makes the other retry on the new snapshot, where the row is taken:
the claim holds exactly when the row, read back, names this holder.

A job that finds the claim held waits for its release (polling); an emission then plans again
from the watermark the holder recorded, so it sends only what is still unsent. The holder renews
its lease while it works (a background thread); a holder whose driver died without releasing
leaves a claim that lapses after :data:`LEASE_SECONDS`, and the next job takes it over (with a
warning). A job that waits longer than ``openlineage.claim_wait_seconds`` stops with one line.

A job with nothing to send or write takes no claim and writes nothing (a no-op rerun adds no
Delta version).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from lineage_udfs.core.errors import LineageError, one_line
from lineage_udfs.spark.storage.schemas import OPENLINEAGE_CLAIM
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Upsert

logger = logging.getLogger(__name__)

CLAIM_TABLE = "openlineage_claim"
CLAIM_KEY = "warehouse"
EMISSION = "emission"
WRITE = "extraction write"
"""The purposes a claim is held for."""
LEASE_SECONDS = 300.0
"""How long a claim holds without renewal: a driver that died holding it blocks the next
emission at most this long."""
RENEW_SECONDS = 60.0
"""How often the holder renews its lease while it sends."""
POLL_SECONDS = 2.0
"""How often a waiting emission reads the claim."""


class ClaimTimeoutError(LineageError):
    """Another job held the claim longer than ``openlineage.claim_wait_seconds``."""


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) the claim, as its row says.

    Attributes:
        holder: the holder's id.
        purpose: what it holds the claim for (:data:`EMISSION`, :data:`WRITE`).
        host: its driver's host.
        application_id: its Spark application.
        claimed_at: when it claimed, ``YYYY-MM-DD HH:MM:SS`` (UTC).
        released: it released the claim.
        free: released, or its lease lapsed (by the session's clock).
    """

    holder: str
    purpose: str | None
    host: str | None
    application_id: str | None
    claimed_at: str
    released: bool
    free: bool

    def describe(self) -> str:
        return (
            f"{self.purpose or 'job'} {self.holder[:12]} on {self.host or '?'} "
            f"({self.application_id or '?'}, since {self.claimed_at} UTC)"
        )


@dataclass(frozen=True)
class Claim:
    """A claim this emission holds.

    Attributes:
        holder: this job's id in the claim row.
        waited: another job held the claim when this one asked: what it planned before may
            have been sent or written meanwhile.
    """

    holder: str
    waited: bool
    claimed_at: datetime


def current_holder(tables: LineageTables) -> Holder | None:
    """The claim row, or None when no emission ever claimed. Times are compared in Spark (UTC
    session), not in Python: a collected timestamp is in the driver's local time zone."""
    row = (
        tables.read(CLAIM_TABLE)
        .where(F.col("claim") == CLAIM_KEY)
        .select(
            "holder",
            "purpose",
            "host",
            "application_id",
            F.date_format(
                F.to_utc_timestamp("claimed_at", F.current_timezone()),
                "yyyy-MM-dd HH:mm:ss",
            ).alias("claimed"),
            F.col("released_at").isNotNull().alias("released"),
            (
                F.col("released_at").isNotNull() | (F.col("expires_at") <= F.current_timestamp())
            ).alias("free"),
        )
        .first()
    )
    if row is None:
        return None
    return Holder(row[0], row[1], row[2], row[3], row[4], bool(row[5]), bool(row[6]))


@contextmanager
def warehouse_claim(
    tables: LineageTables,
    purpose: str,
    *,
    wait_seconds: float,
    lease_seconds: float = LEASE_SECONDS,
    renew_seconds: float = RENEW_SECONDS,
    poll_seconds: float = POLL_SECONDS,
) -> Iterator[Claim]:
    """Hold the warehouse's claim for ``purpose`` during the ``with`` block: wait for it (at
    most ``wait_seconds``), renew it every ``renew_seconds`` while the block runs, release it
    after.

    Raises:
        ClaimTimeoutError: the claim stayed held by another job for ``wait_seconds``.
    """
    claim = _acquire(tables, purpose, wait_seconds, lease_seconds, poll_seconds)
    stop = threading.Event()
    renewer = threading.Thread(
        target=_renew_until,
        args=(tables, claim, purpose, lease_seconds, renew_seconds, stop),
        name="warehouse-claim-renewal",
        daemon=True,
    )
    renewer.start()
    try:
        yield claim
    finally:
        stop.set()
        renewer.join()
        try:
            _write(tables, claim, purpose, lease_seconds, released=True)
        except Exception as exc:  # the job's own outcome (or error) is what counts
            logger.warning(
                "releasing the warehouse claim failed (%s); it lapses in %.0f s",
                one_line(exc),
                lease_seconds,
            )


def _acquire(
    tables: LineageTables,
    purpose: str,
    wait_seconds: float,
    lease_seconds: float,
    poll_seconds: float,
) -> Claim:
    tables.ensure(CLAIM_TABLE)
    holder = uuid.uuid4().hex
    deadline = time.monotonic() + wait_seconds
    waited = False
    told: str | None = None
    while True:
        current = current_holder(tables)
        if current is None or current.free:
            claim = Claim(holder, waited, datetime.now(UTC))
            _write(tables, claim, purpose, lease_seconds, released=False, taking=True)
            now_held = current_holder(tables)
            if now_held is not None and now_held.holder == holder:
                if current is not None and not current.released:
                    logger.warning(
                        "the warehouse claim of %s lapsed without release (its driver "
                        "stopped?); this %s takes it over",
                        current.describe(),
                        purpose,
                    )
                return claim
            current = now_held  # another job claimed it first
        if current is not None and current.holder != told:
            told = current.holder
            logger.info(
                "%s: %s holds the warehouse claim; waiting for it (at most %.0f s)",
                purpose,
                current.describe(),
                wait_seconds,
            )
        if time.monotonic() >= deadline:
            raise ClaimTimeoutError(
                f"{purpose}: another job held the warehouse claim for longer than "
                f"openlineage.claim_wait_seconds={wait_seconds:g}"
                + (f" ({current.describe()})" if current is not None else "")
                + ": stopped before it began; the next run does its work"
            )
        waited = True
        time.sleep(poll_seconds)


def _write(
    tables: LineageTables,
    claim: Claim,
    purpose: str,
    lease_seconds: float,
    *,
    released: bool,
    taking: bool = False,
) -> None:
    """Take the claim where it is free (``taking``), else renew or release ``claim``'s own."""
    now = datetime.now(UTC)
    row: tuple[Any, ...] = (
        CLAIM_KEY,
        claim.holder,
        purpose,
        socket.gethostname(),
        tables.spark.sparkContext.applicationId,
        claim.claimed_at,
        now if released else now + timedelta(seconds=lease_seconds),
        now if released else None,
    )

    def free(s: str, t: str) -> Column:
        return F.col(f"{t}.released_at").isNotNull() | (
            F.col(f"{t}.expires_at") <= F.col(f"{s}.claimed_at")
        )

    def own(s: str, t: str) -> Column:
        return (F.col(f"{t}.holder") == F.col(f"{s}.holder")) & F.col(f"{t}.released_at").isNull()

    rows = tables.spark.createDataFrame([row], OPENLINEAGE_CLAIM.schema)
    tables.write(CLAIM_TABLE, Upsert(rows, prefer=free if taking else own))


def _renew_until(
    tables: LineageTables,
    claim: Claim,
    purpose: str,
    lease_seconds: float,
    renew_seconds: float,
    stop: threading.Event,
) -> None:
    """The holder's lease renewal, until ``stop`` (a renewal that fails is logged: the claim
    then lapses after the lease and a waiting emission may take it over)."""
    while not stop.wait(renew_seconds):
        try:
            _write(tables, claim, purpose, lease_seconds, released=False)
        except Exception as exc:  # a renewal must never kill the job
            logger.warning("renewing the warehouse claim failed: %s", one_line(exc))
