"""The spool's writer and the emitter's hand-back (no Spark, no collector)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from lineage_udfs.emit.spool import Spool, SpoolingEmitter


def _down(event: Any) -> None:
    raise requests.ConnectionError("collector down")


def test_spool_writer_writes_one_new_segment_sequentially(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    real_open = open

    def recording_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith(".part"):
            opened.append(mode)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", recording_open)
    spool = Spool(tmp_path / "spool", 10_000)
    writer = spool.writer("p00001")
    for n in range(3):
        writer.append(json.dumps({"n": n}))
    writer.close()

    assert opened == ["xb"]  # one handle on a new file; never an append to an existing one
    (segment,) = spool.segments()
    assert "p00001" in segment.name and not list(spool.path.glob("*.part"))
    assert [json.loads(line)["n"] for line in segment.read_text("utf-8").splitlines()] == [0, 1, 2]
    assert spool.pending() == 3


def test_spool_writer_without_events_leaves_no_file(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool", 10_000)
    spool.writer("p00002").close()
    assert [p.name for p in spool.path.iterdir()] == []


def test_spooling_emitter_hands_undelivered_events_back_in_order() -> None:
    held: list[str] = []
    emitter = SpoolingEmitter(send=_down, spool=None, hold=held.append)
    for n in range(3):
        emitter.emit({"eventType": "START", "n": n})

    assert [json.loads(line)["n"] for line in held] == [0, 1, 2]
    assert emitter.is_down
    # not spooled yet: the driver counts them once it has spooled them
    assert (emitter.counts.spooled, emitter.counts.failed, emitter.counts.emitted) == (0, 0, 0)


def test_spooling_emitter_without_spool_or_hold_counts_failed() -> None:
    emitter = SpoolingEmitter(send=_down, spool=None)
    emitter.emit({"eventType": "START"})
    assert (emitter.counts.failed, emitter.counts.spooled) == (1, 0)
