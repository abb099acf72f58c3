"""The Kafka and Marquez OpenLineage sources without Spark: their settings (credentials only by
environment-variable name), the offset bookkeeping of a topic, and the paging of Marquez's
events API by event time (against a fake of the API that answers as its SQL does)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest
from pydantic import ValidationError

from lineage_udfs.core.errors import ConfigError, InputError
from lineage_udfs.redaction import settings_json
from lineage_udfs.settings import JobSettings, SinkSettings, SourceSettings
from lineage_udfs.sources.ol_kafka import (
    client_properties,
    committed_offsets,
    plan_offsets,
    reader_options,
)
from lineage_udfs.sources.ol_marquez import (
    EPOCH,
    PageStats,
    api_fetch,
    api_time,
    lower_bound,
    page_events,
)
from lineage_udfs.sources.openlineage import validation_error
from lineage_udfs.sources.secrets import event_source_secrets

SASL = {"mechanism": "SCRAM-SHA-512", "username": "svc-lineage", "password_env": "KAFKA_PW"}


def _kafka(**kafka: Any) -> SourceSettings:
    return SourceSettings(
        name="topic",
        format="openlineage",
        kafka={"bootstrap_servers": "b1:9092, b2:9092", "topic": "ol.events", **kafka},
    )


# settings ------------------------------------------------------------------------------------


def test_kafka_source_path_names_servers_and_topic_and_survives_a_dump() -> None:
    source = _kafka()
    assert source.path == "kafka://b1:9092,b2:9092/ol.events"
    assert source.event_service == source.path
    assert SourceSettings.model_validate(source.model_dump()) == source
    assert source.kafka is not None and source.kafka.protocol == "PLAINTEXT"
    assert _kafka(sasl=SASL).kafka.protocol == "SASL_SSL"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            {"format": "jsonl", "kafka": {"bootstrap_servers": "b:1", "topic": "t"}},
            "needs format openlineage",
        ),
        ({"path": "/data/x.jsonl"}, "takes no path"),
        ({"incremental": {"column": "event_time"}}, "read by its offsets"),
        ({"kafka": {"bootstrap_servers": "b:1", "topic": "a/b"}}, "topic name"),
        ({"kafka": {"bootstrap_servers": "u:p@b:1", "topic": "t"}}, "no credentials"),
        (
            {"kafka": {"bootstrap_servers": "b:1", "topic": "t", "options": {"subscribe": "x"}}},
            "may not set ['subscribe']",
        ),
        (
            {
                "kafka": {
                    "bootstrap_servers": "b:1",
                    "topic": "t",
                    "options": {"kafka.ssl.key.password": "hunter2"},
                }
            },
            "may not carry credentials",
        ),
        (
            {"kafka": {"bootstrap_servers": "b:1", "topic": "t", "security_protocol": "SASL_SSL"}},
            "needs a kafka.sasl section",
        ),
        ({"marquez": {"url": "http://m:5000"}}, "not both"),
    ],
)
def test_kafka_source_rejects(source: dict[str, Any], message: str) -> None:
    data = {
        "name": "topic",
        "format": "openlineage",
        "kafka": {"bootstrap_servers": "b:1", "topic": "t"},
        **source,
    }
    with pytest.raises(ValidationError) as info:
        SourceSettings.model_validate(data)
    assert message in str(info.value)
    assert "hunter2" not in str(info.value)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://m:5000", "starts with http"),
        ("http://bob:hunter2@m:5000", "no credentials"),
        ("http://m:5000/?api_key=hunter2", "no query string"),
    ],
)
def test_marquez_source_rejects(url: str, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        SourceSettings(name="mq", format="openlineage", marquez={"url": url})
    assert message in str(info.value) and "hunter2" not in str(info.value)


def test_marquez_source_reads_the_events_endpoint_by_event_time_only() -> None:
    source = SourceSettings(name="mq", format="openlineage", marquez={"url": "http://m:5000/"})
    assert source.path == "http://m:5000/api/v1/events/lineage"
    with pytest.raises(ValidationError, match="column event_time"):
        SourceSettings(
            name="mq",
            format="openlineage",
            marquez={"url": "http://m:5000"},
            incremental={"column": "other"},
        )


def test_secrets_come_from_the_environment_and_never_reach_the_stored_settings() -> None:
    kafka = _kafka(sasl=SASL, security_protocol="SASL_PLAINTEXT")
    marquez = SourceSettings(
        name="mq", format="openlineage", marquez={"url": "http://m:5000", "api_key_env": "MQ"}
    )
    environ = {"KAFKA_PW": "hunter2", "MQ": "tok-123"}
    assert event_source_secrets([kafka, marquez], environ) == {"topic": "hunter2", "mq": "tok-123"}
    with pytest.raises(ConfigError, match=r"KAFKA_PW \(kafka.sasl.password_env\) is not set"):
        event_source_secrets([kafka], {})
    stored = settings_json(JobSettings(sources=[kafka, marquez], sink=SinkSettings()))
    assert "KAFKA_PW" in stored and "hunter2" not in stored and "tok-123" not in stored


def test_sasl_password_goes_only_into_the_jaas_option() -> None:
    kafka = _kafka(sasl=SASL, options={"kafka.ssl.truststore.location": "/etc/ts.jks"}).kafka
    assert kafka is not None
    props = client_properties(kafka, "pw")
    assert props == {
        "ssl.truststore.location": "/etc/ts.jks",
        "bootstrap.servers": "b1:9092,b2:9092",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required"
        ' username="svc-lineage" password="pw";',
    }
    plan = plan_offsets("ol.events", {}, {0: 0}, {0: 4})
    options = reader_options(kafka, "pw", plan)
    assert [k for k, v in options.items() if "pw" in v.split('"')] == ["kafka.sasl.jaas.config"]


# Kafka offsets -------------------------------------------------------------------------------


def test_committed_offsets_keep_only_the_topic_read_now() -> None:
    state = {"ol.events:0": "7", "ol.events:1": "3", "ol.old:0": "99", "": "x"}
    assert committed_offsets("ol.events", state) == {0: 7, 1: 3}


def test_plan_reads_from_the_committed_offsets_to_the_end() -> None:
    plan = plan_offsets("t", {0: 7, 1: 3}, {0: 0, 1: 0}, {0: 10, 1: 3})
    assert (plan.start, plan.end, plan.to_read) == ({0: 7, 1: 3}, {0: 10, 1: 3}, 3)
    assert plan.state({0: 7, 1: 3}) == {"t:0": "10"}  # partition 1 has nothing new
    assert plan.state({}) == {"t:0": "10", "t:1": "3"}
    assert json.loads(plan.options()["startingOffsets"]) == {"t": {"0": 7, "1": 3}}
    assert json.loads(plan.options()["endingOffsets"]) == {"t": {"0": 10, "1": 3}}
    assert json.loads(plan.options()["assign"]) == {"t": [0, 1]}
    assert (plan.lost, plan.restarted) == ({}, ())


def test_plan_new_partition_reads_from_its_earliest_offset() -> None:
    plan = plan_offsets("t", {0: 5}, {0: 0, 1: 2}, {0: 5, 1: 6})
    assert (plan.start, plan.to_read) == ({0: 5, 1: 2}, 4)


def test_plan_counts_offsets_deleted_by_retention_before_they_were_read() -> None:
    plan = plan_offsets("t", {0: 3}, {0: 8}, {0: 12})
    assert (plan.start[0], plan.lost) == (8, {0: 5})


def test_plan_restarts_a_partition_whose_committed_offset_lies_beyond_its_end() -> None:
    plan = plan_offsets("t", {0: 40}, {0: 0}, {0: 6})  # the topic was created again
    assert (plan.start[0], plan.restarted, plan.to_read) == (0, (0,), 6)


def test_rerun_after_commit_plans_nothing() -> None:
    first = plan_offsets("t", {}, {0: 0, 1: 0}, {0: 4, 1: 2})
    committed = committed_offsets("t", first.state({}))
    again = plan_offsets("t", committed, {0: 0, 1: 0}, {0: 4, 1: 2})
    assert (again.to_read, again.state(committed)) == (0, {})


# Marquez paging ------------------------------------------------------------------------------

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _event(n: int, seconds: float, offset: str = "Z") -> dict[str, Any]:
    at = (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%f")
    return {"eventTime": at + offset, "run": {"runId": f"r{n}"}}


class FakeEventsApi:
    """Marquez's ``GET /api/v1/events/lineage`` as its SQL answers: ``after <= event_time <
    before``, ``ORDER BY event_time ASC LIMIT limit OFFSET offset``; ties in the order they
    were stored."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = list(events)
        self.calls: list[tuple[datetime, int]] = []

    def time(self, event: dict[str, Any]) -> datetime:
        return datetime.fromisoformat(event["eventTime"]).astimezone(UTC)

    def __call__(
        self, after: datetime, before: datetime, limit: int, offset: int
    ) -> list[dict[str, Any]]:
        self.calls.append((after, offset))
        window = [e for e in self.events if after <= self.time(e) < before]
        window.sort(key=self.time)  # stable: ties stay in stored order
        return window[offset : offset + limit]


def _runs(events: list[dict[str, Any]]) -> list[str]:
    return [e["run"]["runId"] for e in events]


FAR = T0 + timedelta(days=1)


@pytest.mark.parametrize("page_size", [1, 2, 3, 5, 100])
def test_paging_reads_every_event_once_in_time_order(page_size: int) -> None:
    seconds = [0, 1, 1, 1, 2, 3, 3, 4, 5, 5, 5, 5, 6]
    events = [_event(i, s) for i, s in enumerate(seconds)]
    api = FakeEventsApi(events[::-1])  # stored out of order
    got = list(page_events(api, EPOCH, FAR, page_size, max_events=1000))
    assert sorted(_runs(got)) == sorted(_runs(events))
    assert [api.time(e) for e in got] == sorted(api.time(e) for e in got)


def test_paging_is_not_shifted_by_events_stored_or_deleted_meanwhile() -> None:
    events = [_event(i, i) for i in range(6)]
    api = FakeEventsApi(events)
    reader = page_events(api, EPOCH, FAR, page_size=2, max_events=1000)
    got = [next(reader)]  # event 0 of the first page (0, 1)
    api.events.remove(events[0])  # retention deletes the oldest
    api.events.append(_event(9, 0.5))  # a late event stored before the cursor
    got.extend(reader)
    assert _runs(got) == ["r0", "r1", "r2", "r3", "r4", "r5"]  # none skipped by the shift


def test_paging_a_tie_group_larger_than_a_page_by_offset() -> None:
    events = [_event(i, 1) for i in range(5)] + [_event(9, 2)]
    api = FakeEventsApi(events)
    got = list(page_events(api, EPOCH, FAR, page_size=2, max_events=1000))
    assert sorted(_runs(got)) == sorted(_runs(events))
    assert any(offset > 0 for _, offset in api.calls)


def test_paging_stops_at_max_events_where_no_earlier_event_is_left() -> None:
    seconds = [0, 1, 2, 2, 2, 3, 4, 5]
    events = [_event(i, s) for i, s in enumerate(seconds)]
    stats = PageStats()
    got = list(page_events(FakeEventsApi(events), EPOCH, FAR, 3, max_events=2, stats=stats))
    assert stats.capped and stats.events == len(got)
    last = max(datetime.fromisoformat(e["eventTime"]) for e in got)
    # every event up to the last time read was read: the watermark skips none next run
    assert {
        e["run"]["runId"] for e in events if datetime.fromisoformat(e["eventTime"]) <= last
    } == {e["run"]["runId"] for e in got}
    rest = list(page_events(FakeEventsApi(events), last, FAR, 3, max_events=100))
    assert set(_runs(got)) | set(_runs(rest)) == set(_runs(events))


def test_paging_keeps_the_window_and_compares_times_across_offsets() -> None:
    events = [_event(1, 10, "+02:00"), _event(2, 5), _event(3, 3600 * 3)]
    api = FakeEventsApi(events)
    after, before = T0, T0 + timedelta(hours=1)
    got = list(page_events(api, after, before, 1, max_events=10))
    # 00:00:10+02:00 is 22:00:10 the day before: outside; 03:00Z is past ``before``
    assert _runs(got) == ["r2"]


def test_lower_bound_and_api_time() -> None:
    assert lower_bound("2026-11-01 02:00:00", 90, "Europe/Berlin") == datetime(
        2026, 11, 1, 0, 58, 30, tzinfo=UTC
    )
    assert lower_bound("1970-01-01 00:00:10", 3600, "UTC") == EPOCH
    assert api_time(datetime(2026, 11, 1, 1, 2, 3, 4, tzinfo=UTC)) == "2026-11-01T01:02:03.000004Z"


# the events API over HTTP (a local stand-in server) -------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    answers: ClassVar[list[tuple[int, bytes]]] = []
    seen: ClassVar[list[tuple[str, dict[str, list[str]], str | None]]] = []

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        self.seen.append((url.path, parse_qs(url.query), self.headers.get("Authorization")))
        status, body = self.answers.pop(0)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def events_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Handler.answers, _Handler.seen = [], []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _marquez_source(url: str) -> SourceSettings:
    return SourceSettings(
        name="mq", format="openlineage", marquez={"url": url, "api_key_env": "MQ_TOKEN"}
    )


def test_api_fetch_sends_the_window_and_the_token(events_server: str) -> None:
    page = {"events": [_event(1, 0)], "totalCount": 1}
    _Handler.answers = [(200, json.dumps(page).encode())]
    fetch, close = api_fetch(_marquez_source(events_server), "tok-123")
    try:
        assert fetch(T0, FAR, 500, 0) == page["events"]
    finally:
        close()
    ((path, params, auth),) = _Handler.seen
    assert path == "/api/v1/events/lineage" and auth == "Bearer tok-123"
    assert params == {
        "after": ["2026-11-01T00:00:00.000000Z"],
        "before": ["2026-11-02T00:00:00.000000Z"],
        "sortDirection": ["asc"],
        "limit": ["500"],
        "offset": ["0"],
    }


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (500, b'{"code":500}', "HTTP 500 Internal Server Error"),
        (200, b"<html>not json</html>", "the answer is not Marquez's lineage events"),
        (200, b'{"jobs": []}', "the answer is not Marquez's lineage events"),
    ],
)
def test_api_fetch_failures_are_one_line_without_the_token(
    events_server: str, status: int, body: bytes, message: str
) -> None:
    _Handler.answers = [(status, body)]
    fetch, close = api_fetch(_marquez_source(events_server), "tok-123")
    try:
        with pytest.raises(InputError) as error:
            fetch(T0, FAR, 10, 0)
    finally:
        close()
    text = str(error.value)
    assert text.startswith(f"marquez source 'mq' ({events_server}/api/v1/events/lineage): ")
    assert message in text and "tok-123" not in text and "\n" not in text


MARQUEZ_ANSWER = {
    "totalCount": 1,
    "events": [
        {
            "eventType": "COMPLETE",
            "eventTime": "2026-11-28T18:19:49.324442Z",
            "run": {"runId": "7eb241d0-a3ca-5754-9892-500ef60d33df", "facets": None},
            "job": {"namespace": "dbg", "name": "etl.clean", "facets": None},
            "inputs": [
                {
                    "namespace": "file",
                    "name": "/wh/raw.db/orders",
                    "facets": {"documentation": None, "schema": None, "columnLineage": None},
                    "inputFacets": None,
                    "outputFacets": None,
                }
            ],
            "outputs": [
                {
                    "namespace": "warehouse",
                    "name": "mart.daily",
                    "facets": {"symlinks": None},
                    "inputFacets": None,
                    "outputFacets": None,
                }
            ],
            "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
    ],
}
"""What Marquez 0.51.1 answered for a posted event (null for every member it lacked)."""


def test_api_fetch_leaves_out_marquez_nulls_so_the_event_validates(events_server: str) -> None:
    _Handler.answers = [(200, json.dumps(MARQUEZ_ANSWER).encode())]
    fetch, close = api_fetch(_marquez_source(events_server), None)
    try:
        (event,) = fetch(T0, FAR, 10, 0)
    finally:
        close()
    assert event["run"] == {"runId": "7eb241d0-a3ca-5754-9892-500ef60d33df"}
    assert event["inputs"][0] == {"namespace": "file", "name": "/wh/raw.db/orders", "facets": {}}
    assert validation_error(event) is None
    assert validation_error(MARQUEZ_ANSWER["events"][0]) == (  # as answered: invalid
        "not an OpenLineage RunEvent: run.facets: None is not of type 'object'"
    )
