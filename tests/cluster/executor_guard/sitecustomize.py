"""Loaded by every Python process of an executor (this folder is put on the executors'
``PYTHONPATH`` through ``spark.executorEnv.PYTHONPATH``): a folder that exists only for the
driver, as the driver's disk does on a cluster of several machines.

``LINEAGE_TEST_DRIVER_ONLY`` names folders (``os.pathsep``-separated) that no executor may
write under: an audit hook refuses the write (``PermissionError``) and records the attempt, with
the process id and the path, as one file in ``LINEAGE_TEST_EXECUTOR_WRITES`` (a folder the test
reads afterwards). The driver does not load this module (the variable is an executor's).
"""

from __future__ import annotations

import os
import sys
from typing import Any

_FOLDERS = tuple(
    os.path.realpath(p)
    for p in os.environ.get("LINEAGE_TEST_DRIVER_ONLY", "").split(os.pathsep)
    if p
)
_RECORDS = os.environ.get("LINEAGE_TEST_EXECUTOR_WRITES", "")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_PATH_EVENTS = {"os.mkdir": 0, "os.rename": 0, "os.remove": 0, "os.rmdir": 0, "os.truncate": 0}
_recording = False


def _under(path: Any) -> bool:
    if isinstance(path, int) or path is None:
        return False
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return False
    return any(real == folder or real.startswith(folder + os.sep) for folder in _FOLDERS)


def _refuse(event: str, path: Any) -> None:
    global _recording
    if _RECORDS and not _recording:
        _recording = True  # the record's own open() comes through this hook too
        try:
            name = os.path.join(_RECORDS, f"{os.getpid()}-{len(os.listdir(_RECORDS))}.txt")
            with open(name, "w", encoding="utf-8") as record:
                record.write(f"{os.getpid()} {event} {os.fsdecode(path)}\n")
        finally:
            _recording = False
    raise PermissionError(f"executor process {os.getpid()} may not write {os.fsdecode(path)}")


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _recording:
        return
    if event == "open":
        path, _mode, flags = args
        if flags & _WRITE_FLAGS and _under(path):
            _refuse(event, path)
    elif event in _PATH_EVENTS and args and _under(args[0]):
        _refuse(event, args[0])
    elif event == "os.rename" and len(args) > 1 and _under(args[1]):
        _refuse(event, args[1])


if _FOLDERS:
    sys.addaudithook(_hook)
