"""Marquez stopped in the middle of an emission: events spool, Marquez comes back, the replay
delivers each remaining event exactly once and in order; a malformed event is rejected (422),
counted and reported with Marquez's reason, never retried in a loop and never dropped."""

from __future__ import annotations

import json
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

from expected import options_of, with_openlineage
from marquez_api import MarquezApi
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from services import Marquez

from lineage_udfs.emit.client import make_client, prepare_event
from lineage_udfs.emit.events import build_run_events
from lineage_udfs.emit.spool import Spool, SpoolingEmitter
from lineage_udfs.spark.openlineage.emission import _row_inputs, emission_rows, replay_spool
from lineage_udfs.spark.storage.tables import LineageTables

NAMESPACE = "lineage-warehouse-failover"
_STATE = {"COMPLETE": "COMPLETED", "FAIL": "FAILED", "ABORT": "ABORTED"}


def _malformed(producer: str) -> RunEvent:
    """A RunEvent without a job name: Marquez answers 422."""
    return RunEvent(
        eventType=RunState.START,
        eventTime="2024-03-01T00:00:00Z",
        run=Run(runId="0190e4a4-0000-7000-8000-00000000beef"),
        job=Job(namespace=NAMESPACE, name=None),  # type: ignore[arg-type]
        producer=producer,
    )


def _key(event: Any) -> tuple[str, str]:
    data = json.loads(event) if isinstance(event, str) else event
    return data["run"]["runId"], data["eventType"]


def test_marquez_stopped_mid_emission_spool_then_replay_exactly_once(
    spark: Any, sample_settings: Any, own_marquez: Marquez, tmp_path: Path
) -> None:
    # per statement and day: other run ids than the per-run round trip on the same server
    settings = with_openlineage(
        sample_settings,
        transport={"type": "http", "url": own_marquez.url, "timeout": 60, "retries": 0},
        job_namespace=NAMESPACE,
        emit_mode="per_statement_day",
        indirect_lineage="fields",
        spool={"path": str(tmp_path / "spool")},
    )
    ol = settings.openlineage
    options = options_of(settings)
    rows = emission_rows(LineageTables(spark, settings.sink), ol).collect()
    events = [
        event
        for row in rows
        for event in build_run_events(*_row_inputs(row.asDict(recursive=True)), options=options)
    ]
    # stop Marquez right after a START whose terminal event comes next: the run is split
    cut = next(
        i + 1
        for i in range(len(events) // 2, len(events) - 1)
        if events[i].eventType == RunState.START and events[i + 1].run.runId == events[i].run.runId
    )
    client = make_client(ol)
    delivered: list[tuple[str, str]] = []
    killed: list[int] = []

    def send(event: Any) -> None:
        client.transport.emit(event)
        delivered.append(_key(json.loads(_serialise(event))))
        if len(delivered) == cut:
            killed.append(own_marquez.kill_api())

    spool = Spool(Path(ol.spool.path), ol.spool.max_bytes)
    emitter = SpoolingEmitter(
        send=send, spool=spool, writer_id="failover", prepare=partial(prepare_event, client)
    )
    emitter.emit(_malformed(options.producer))  # Marquez up: rejected at once, with the reason
    for event in events:
        emitter.emit(event)
    emitter.emit(_malformed(options.producer))  # Marquez down: spooled, rejected on replay
    counts = emitter.close()
    client.close(timeout=5.0)

    assert killed, f"Marquez was not stopped: {counts}, {emitter.rejections}"
    assert (counts.emitted, counts.failed) == (cut, 1)
    assert counts.spooled == len(events) - cut + 1 and spool.pending() == counts.spooled
    assert len(emitter.rejections) == 1
    assert "HTTP 422" in emitter.rejections[0]
    assert "job.name must not be null" in emitter.rejections[0]

    own_marquez.restart_api()
    replayed = replay_spool(settings)
    again = replay_spool(settings)
    assert (replayed.delivered, replayed.rejected, replayed.pending) == (len(events) - cut, 1, 0)
    assert "job.name must not be null" in replayed.rejections[0]
    assert (again.delivered, again.rejected, again.pending) == (0, 0, 0)
    aside = (spool.path / "rejected" / "rejected.jsonl").read_text("utf-8").splitlines()
    assert len(aside) == 1 and "HTTP 422" in json.loads(aside[0])["reason"]

    # Marquez holds every event exactly once: nothing missing, nothing twice
    api = MarquezApi(own_marquez.url)
    stored = Counter(
        _key(e) for e in api.raw_events() if (e.get("job") or {}).get("namespace") == NAMESPACE
    )
    sent = Counter(_key(json.loads(_serialise(e))) for e in events)
    assert stored == sent
    assert set(stored.values()) == {1}

    # START reached Marquez before the terminal event of every run, and each run ended
    # in the state the log says
    states: dict[str, str] = {}
    for event in events:
        if event.eventType != RunState.START:
            states[event.run.runId] = _STATE[event.eventType.value]
    jobs = {e.job.name for e in events}
    marquez_states = {run["id"]: run["state"] for job in jobs for run in api.runs(NAMESPACE, job)}
    assert {r: marquez_states.get(r) for r in states} == states
    split = events[cut - 1].run.runId
    assert marquez_states[split] == states[split]

    print(
        "\nMarquez failover (sample, per statement-day): "
        f"events={len(events)} delivered before the stop={cut} spooled={counts.spooled} "
        f"(incl. 1 malformed) replayed={replayed.delivered} rejected on emit=1 "
        f"rejected on replay={replayed.rejected} ({replayed.rejections[0].split(': ', 1)[1]}) "
        f"second replay={again.delivered} Marquez events per (run, type): max "
        f"{max(stored.values())}, runs={len(states)}"
    )


def _serialise(event: Any) -> str:
    from openlineage.client.serde import Serde

    return Serde.to_json(event)
