"""OpenLineage RunEvents stored in a Marquez server (``format: openlineage`` with ``marquez:``),
read through its HTTP API: ``GET /api/v1/events/lineage`` (Marquez 0.51.1's
``OpenLineageResource``) returns the stored RunEvents with ``after <= event_time < before``,
ordered by event time (``sortDirection=asc``), ``limit`` and ``offset`` at a time.

The API is read on the driver, page by page (:func:`page_events`, pure), and the events become
a DataFrame of lines that goes through the same validation, mapping and quarantine as the lines
of a file (``sources.openlineage``): an HTTP API has nothing for executors to split. Marquez
writes the members an event lacks as null; they are left out first (:func:`without_nulls`).

A run reads the events from the committed ``eventTime`` watermark minus
``incremental.lookback`` up to the time the read started (an event stamped later, by a producer
whose clock runs ahead, waits for a later run), ``marquez.max_events`` at most.

Paging is by event time, not by offset alone, so that events stored while the run pages, or
deleted by Marquez's retention, shift no page: each request starts at the event time of the
previous page's last event (``after`` is inclusive), and the events at that very time are taken
from the request that starts there, whole. Only when more than ``page_size`` events share one
event time (to the microsecond) is that group paged by ``offset``, which relies on PostgreSQL
returning the group in the same order each time. A run that reaches ``max_events`` stops at a
page boundary where every event before the boundary's time was read, so the watermark it
commits leaves none behind.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from lineage_udfs.core.errors import InputError, one_line
from lineage_udfs.settings import MarquezSettings, SourceSettings

if TYPE_CHECKING:  # the paging here runs without Spark (unit tests)
    import requests
    from pyspark.sql import DataFrame, SparkSession

logger = logging.getLogger(__name__)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""Where a first run starts (Marquez's own default for ``after``)."""

Fetch = Callable[[datetime, datetime, int, int], list[dict[str, Any]]]
"""``fetch(after, before, limit, offset)``: one page of the events API, in event-time order."""


def event_instant(event: Mapping[str, Any]) -> datetime | None:
    """The event's ``eventTime`` in UTC, to the microsecond (finer digits dropped, as
    PostgreSQL keeps microseconds); None when absent or not an ISO 8601 time with an offset.

    Examples:
        >>> event_instant({"eventTime": "2026-11-01T03:05:00.1234567+02:00"})
        datetime.datetime(2026, 11, 1, 1, 5, 0, 123456, tzinfo=datetime.timezone.utc)
        >>> event_instant({"eventTime": "yesterday"}) is None
        True
    """
    value = event.get("eventTime")
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.astimezone(UTC)


def api_time(instant: datetime) -> str:
    """``instant`` as the API's ``after``/``before`` parameter (ISO 8601, UTC).

    Examples:
        >>> api_time(datetime(2026, 11, 1, 1, 5, 0, 500000, tzinfo=UTC))
        '2026-11-01T01:05:00.500000Z'
    """
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def lower_bound(committed: str | None, lookback_seconds: float, time_zone: str) -> datetime:
    """Where a run starts reading: the committed watermark (``source_state``: a timestamp as
    Spark writes it in the session time zone) minus the lookback; ``EPOCH`` without one.

    Examples:
        >>> lower_bound("2026-11-01 01:05:00.5", 3600, "UTC")
        datetime.datetime(2026, 11, 1, 0, 5, 0, 500000, tzinfo=datetime.timezone.utc)
        >>> lower_bound(None, 3600, "UTC") == EPOCH
        True
    """
    if committed is None:
        return EPOCH
    mark = datetime.fromisoformat(committed)
    if mark.tzinfo is None:
        mark = mark.replace(tzinfo=ZoneInfo(time_zone))
    return max(EPOCH, mark.astimezone(UTC) - timedelta(seconds=lookback_seconds))


@dataclass
class PageStats:
    """What :func:`page_events` did: requests sent, events taken, and whether it stopped at
    ``max_events`` with more left."""

    requests: int = 0
    events: int = 0
    capped: bool = False


def without_nulls(value: Any) -> Any:
    """``value`` with every object member whose value is null left out, at any depth.

    Marquez answers with its own model of each stored event, which writes every member the
    event lacks as null (``"facets": null``, ``"inputFacets": null``, a dataset's
    ``"documentation": null``); the OpenLineage schema has no nullable member, so such an
    event would fail validation over members its producer never sent.

    Examples:
        >>> without_nulls({"run": {"runId": "r", "facets": None}, "inputs": [{"x": {"a": None}}]})
        {'run': {'runId': 'r'}, 'inputs': [{'x': {}}]}
    """
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def _digest(event: Mapping[str, Any]) -> str:
    text = json.dumps(event, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def page_events(
    fetch: Fetch,
    after: datetime,
    before: datetime,
    page_size: int,
    max_events: int,
    stats: PageStats | None = None,
) -> Iterator[dict[str, Any]]:
    """Every event of the API with ``after <= event time < before``, in event-time order,
    each once; at most about ``max_events`` (a run stops only where no event before the next
    page's time is left unread).

    Each full page gives the events before the time of its last event; the next request
    starts at that time (the API's ``after`` is inclusive), so the events at one time come
    from one request. A page whose events all share the request's start time is a group
    larger than a page: the next request pages through it by ``offset``.
    """
    stats = stats if stats is not None else PageStats()
    cursor, offset = after, 0
    seen: set[str] = set()

    def fresh(events: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for event in events:
            key = _digest(event)
            if key not in seen:
                seen.add(key)
                stats.events += 1
                yield event

    while True:
        page = fetch(cursor, before, page_size, offset)
        stats.requests += 1
        if len(page) < page_size:  # the last page: everything left
            yield from fresh(page)
            return
        times: list[datetime] = []
        for event in page:  # an unreadable time counts as the one before it
            times.append(event_instant(event) or (times[-1] if times else cursor))
        last = max(times)
        if last == cursor:  # one event time fills the page: page through it by offset
            yield from fresh(page)
            offset += len(page)
            continue
        yield from fresh([e for e, t in zip(page, times, strict=True) if t < last])
        cursor, offset = last, 0
        if stats.events >= max_events:
            stats.capped = True
            return


def _session(token: str | None) -> requests.Session:
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    session = requests.Session()
    retry = Retry(
        total=3,
        backoff_factor=0.5,
        status_forcelist=(502, 503, 504),
        allowed_methods=frozenset({"GET"}),
    )
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.mount("https://", HTTPAdapter(max_retries=retry))
    session.headers["Accept"] = "application/json"
    if token is not None:
        session.headers["Authorization"] = f"Bearer {token}"
    return session


def api_fetch(source: SourceSettings, token: str | None) -> tuple[Fetch, Callable[[], None]]:
    """A :data:`Fetch` over the source's Marquez API, and the function that closes it.

    The fetch raises InputError with one line (the endpoint, the HTTP status or the
    connection error; never the token) when a request fails or the answer is not the events
    API's."""
    import requests

    marquez: MarquezSettings | None = source.marquez
    assert marquez is not None
    session = _session(token)
    where = f"marquez source {source.name!r} ({marquez.events_url})"

    def fetch(after: datetime, before: datetime, limit: int, offset: int) -> list[dict[str, Any]]:
        params: dict[str, str | int] = {
            "after": api_time(after),
            "before": api_time(before),
            "sortDirection": "asc",
            "limit": limit,
            "offset": offset,
        }
        try:
            response = session.get(
                marquez.events_url, params=params, timeout=marquez.timeout_seconds
            )
        except requests.RequestException as exc:
            raise InputError(f"{where}: {one_line(exc, with_type=True)}") from None
        if response.status_code != 200:
            raise InputError(
                f"{where}: HTTP {response.status_code} {one_line(response.reason or '')}".rstrip()
            )
        try:
            events = response.json()["events"]
        except (ValueError, KeyError, TypeError):
            events = None
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            raise InputError(
                f"{where}: the answer is not Marquez's lineage events (no events list)"
            )
        return [without_nulls(e) for e in events]

    return fetch, session.close


def read_marquez_events(
    spark: SparkSession,
    source: SourceSettings,
    committed: str | None,
    token: str | None,
) -> DataFrame:
    """The source's events from its committed watermark minus the lookback, as the
    openlineage stage's lines: ``value`` (the event as JSON), ``source_file`` (the events
    endpoint) and ``event_time``. The events are read here, on the driver.

    Raises:
        InputError: the API cannot be read (one line).
    """
    from pyspark.sql import functions as F

    from lineage_udfs.sources.openlineage import EVENT_TIME, SOURCE_FILE, empty_lines

    marquez = source.marquez
    assert marquez is not None and source.incremental is not None
    time_zone = spark.conf.get("spark.sql.session.timeZone") or "UTC"
    after = lower_bound(committed, source.incremental.lookback_amount, time_zone)
    before = datetime.now(UTC)
    fetch, close = api_fetch(source, token)
    stats = PageStats()
    try:
        events = list(
            page_events(fetch, after, before, marquez.page_size, marquez.max_events, stats)
        )
    finally:
        close()
    logger.info(
        "marquez source %s: %d events with %s <= eventTime < %s in %d requests%s",
        source.name,
        stats.events,
        api_time(after),
        api_time(before),
        stats.requests,
        f"; stopped at max_events {marquez.max_events}, the rest next run" if stats.capped else "",
    )
    if not events:
        return empty_lines(spark)
    rows = [(json.dumps(e, separators=(",", ":")), marquez.events_url) for e in events]
    lines = spark.createDataFrame(rows, f"value string, {SOURCE_FILE} string")
    return lines.select(
        "value",
        SOURCE_FILE,
        F.try_to_timestamp(F.get_json_object("value", "$.eventTime")).alias(EVENT_TIME),
    )
