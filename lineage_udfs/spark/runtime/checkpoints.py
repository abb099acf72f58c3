"""Where materialized intermediate results live: :func:`checkpointed`, the one place that
checkpoints a frame, and :func:`run_checkpoints`, the folder of a run's reliable checkpoints.

The job cuts the plans of frames it reads several times, and of frames that read a lineage
table it is about to write (a Delta commit would make a cached plan recompute against the new
version). By default they are *local* checkpoints: blocks on the executors' disks, fast, but
lost with their executor, and a plan that needs a lost block fails the run
(``CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND``). With ``execution.checkpoint_dir`` set, the jobs run in
:func:`run_checkpoints`: every checkpoint is a reliable ``checkpoint()`` written to
``<checkpoint_dir>/<run id>/`` on durable storage (HDFS, s3a, abfss, dbfs, a Unity Catalog
volume), read back by any executor, and the folder is removed through Hadoop's FileSystem when
the run ends, also when it fails.

Spark keeps one checkpoint directory per application (``SparkContext.setCheckpointDir``), so the
run folder is the application's while a run is in progress: runs that overlap in one
application (a notebook, the tests) share the folder of the first, and it is removed when the
last of them ends. The SparkContext's previous checkpoint directory is put back then.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from lineage_udfs.core.errors import ConfigError, one_line
from lineage_udfs.spark.runtime.preflight import fs_and_path

logger = logging.getLogger(__name__)


@dataclass
class _RunFolder:
    """The checkpoint folder of the runs in progress in this application."""

    path: str
    """``<checkpoint_dir>/<run id>`` of the run that created it."""
    spark: SparkSession
    """The session (its Hadoop configuration reaches the folder's file system)."""
    context: Any
    """The JVM SparkContext whose checkpoint directory points into ``path``."""
    jvm: Any
    """The driver's JVM view."""
    previous: str | None
    """The SparkContext's checkpoint directory before (put back when the folder goes)."""
    runs: int = 0
    """Runs using the folder now."""


_lock = threading.Lock()
_folder: _RunFolder | None = None


def checkpointed(frame: DataFrame, *, level: StorageLevel | None = None) -> DataFrame:
    """``frame`` computed now and its plan cut: a reliable ``checkpoint()`` into the run's
    folder inside :func:`run_checkpoints` with a checkpoint dir, else a local checkpoint
    (kept at ``level``; None: Spark's default for local checkpoints)."""
    if reliable_checkpoints():
        return frame.checkpoint(eager=True)
    return frame.localCheckpoint(eager=True, storageLevel=level)


def reliable_checkpoints() -> bool:
    """Whether checkpoints are reliable now (a run folder is in place)."""
    return _folder is not None


@contextmanager
def run_checkpoints(
    spark: SparkSession, checkpoint_dir: str | None, run_id: str
) -> Iterator[str | None]:
    """Checkpoints of the block go to ``<checkpoint_dir>/<run_id>/``, removed when the block
    ends (also on an exception); ``checkpoint_dir`` None: local checkpoints, nothing to
    remove. Yields the folder (None: local). A block that starts while another run's folder
    is in place uses that folder (see the module's docstring).

    Raises:
        ConfigError: ``checkpoint_dir`` is set but the session has no SparkContext (Spark
            Connect), or the folder cannot be created.
    """
    if checkpoint_dir is None:
        yield None
        return
    path = _enter(spark, checkpoint_dir, run_id)
    try:
        yield path
    finally:
        _leave()


def _enter(spark: SparkSession, checkpoint_dir: str, run_id: str) -> str:
    global _folder
    with _lock:
        if _folder is None:
            path = f"{checkpoint_dir.rstrip('/')}/{run_id}"
            try:
                context = spark.sparkContext._jsc.sc()
                previous = context.getCheckpointDir()
                context.setCheckpointDir(path)  # creates it, and a subfolder of Spark's own
            except Exception as exc:
                raise ConfigError(
                    f"execution.checkpoint_dir {checkpoint_dir}: cannot use {path} for the run's"
                    f" checkpoints ({one_line(exc)}); it needs a classic Spark session (not"
                    " Spark Connect) and a folder the driver and every executor can write"
                ) from exc
            _folder = _RunFolder(
                path,
                spark,
                context,
                spark.sparkContext._jvm,
                previous.get() if previous.isDefined() else None,
            )
            logger.info("checkpoints of run %s go to %s (removed when it ends)", run_id, path)
        _folder.runs += 1
        return _folder.path


def _leave() -> None:
    global _folder
    with _lock:
        folder = _folder
        assert folder is not None  # entered before
        folder.runs -= 1
        if folder.runs:
            return
        _folder = None
        _restore(folder)
        _remove(folder.spark, folder.path)


def _restore(folder: _RunFolder) -> None:
    """Point the SparkContext's checkpoint directory back where it was, through the setter
    behind ``setCheckpointDir`` (which would add a new subfolder to the old directory)."""
    try:
        previous = folder.jvm.scala.Option.apply(folder.previous)
        getattr(folder.context, "checkpointDir_$eq")(previous)
    except Exception as exc:  # a later reliable checkpoint would recreate the removed folder
        logger.warning(
            "could not put the SparkContext's checkpoint directory back to %s (%s)",
            folder.previous,
            one_line(exc),
        )


def _remove(spark: SparkSession, path: str) -> None:
    """Delete the run folder and everything in it, on its own file system (Hadoop's: s3a,
    abfss, dbfs and volumes alike)."""
    try:
        fs, folder = fs_and_path(spark, path)
        fs.delete(folder, True)
    except Exception as exc:  # leave the run's outcome as it is; say what is left behind
        logger.warning("could not remove the run's checkpoints at %s (%s)", path, one_line(exc))
