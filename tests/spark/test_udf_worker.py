"""The worker setup keeps PySpark's per-task ``importlib.invalidate_caches()`` cheap: a zip
archive on the worker's path is re-read only when it changed."""

from __future__ import annotations

import importlib
import os
import sys
import time
import zipfile
import zipimport
from pathlib import Path

from lineage_udfs.spark.parse import udf_worker as udfs


def _write_zip(path: Path, modules: dict[str, str], mtime_ns: int) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, source in modules.items():
            archive.writestr(f"{name}.py", source)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_the_worker_setup_installs_the_check_once() -> None:
    udfs.setup_worker()
    assert zipimport.zipimporter.invalidate_caches is udfs._invalidate_if_changed
    assert udfs.setup_worker() is False  # a later call changes nothing


def test_an_unchanged_archive_is_not_read_again_and_a_changed_one_is(tmp_path: Path) -> None:
    path = tmp_path / "lib.zip"
    _write_zip(path, {"lw_zip_a": "A = 1\n"}, mtime_ns=1_700_000_000_000_000_000)
    importer = zipimport.zipimporter(str(path))
    importer.invalidate_caches()
    directory = importer._files  # the archive's directory as read (Python 3.11 zipimport)
    importlib.invalidate_caches()  # what PySpark's worker calls before every task
    importer.invalidate_caches()
    assert importer._files is directory
    assert importer.find_spec("lw_zip_b") is None

    _write_zip(path, {"lw_zip_a": "A = 1\n", "lw_zip_b": "B = 2\n"}, 1_700_000_001_000_000_000)
    importer.invalidate_caches()
    assert importer._files is not directory
    assert importer.find_spec("lw_zip_b") is not None


def test_a_missing_archive_is_handed_to_zipimport(tmp_path: Path) -> None:
    path = tmp_path / "gone.zip"
    _write_zip(path, {"lw_zip_c": "C = 3\n"}, mtime_ns=1_700_000_000_000_000_000)
    importer = zipimport.zipimporter(str(path))
    path.unlink()
    importer.invalidate_caches()  # zipimport's own answer: an empty directory, no error
    assert importer.find_spec("lw_zip_c") is None


def test_archives_read_before_the_check_was_installed_are_not_read_again(
    tmp_path: Path,
) -> None:
    """Zipimporters made before the module's import (pyspark.zip, the jars of --packages) are
    marked as read when their archive is older than the parent process: the next task's
    invalidation does not re-read them. A younger archive is re-read as before."""
    old, young = tmp_path / "old.zip", tmp_path / "young.zip"
    _write_zip(old, {"lw_zip_d": "D = 4\n"}, mtime_ns=1_700_000_000_000_000_000)
    _write_zip(young, {"lw_zip_e": "E = 5\n"}, mtime_ns=1_700_000_100_000_000_000)
    importers = {str(p): zipimport.zipimporter(str(p)) for p in (old, young)}
    sys.path_importer_cache.update(importers)
    try:
        read = {k: importer._files for k, importer in importers.items()}
        assert udfs.stamp_read_archives(1_700_000_050.0) == 1
        importlib.invalidate_caches()
        assert importers[str(old)]._files is read[str(old)]
        assert importers[str(young)]._files is not read[str(young)]
        assert udfs.stamp_read_archives(1_700_000_050.0) == 0  # marked once
        assert udfs.stamp_read_archives(None) == 0
    finally:
        for key in importers:
            sys.path_importer_cache.pop(key, None)


def test_the_parent_process_start_is_read_from_proc() -> None:
    started = udfs._parent_started_at()
    if not Path("/proc/self/stat").exists():  # not Linux: no mark, archives re-read once
        assert started is None
        return
    assert started is not None
    assert _boot_time() <= started <= time.time()


def _boot_time() -> float:
    with open("/proc/stat") as fh:
        return float(next(line.split()[1] for line in fh if line.startswith("btime ")))


def test_long_lived_state_built_later_is_frozen_too() -> None:
    """The worker freezes the collector's view once its parser is built; a dialect or a sqlfluff
    tier built later (on first use) is frozen at the next batch boundary, so the collections
    PySpark's daemon runs between tasks do not walk it."""
    import gc

    from lineage_udfs.core.options import ParserOptions

    options = ParserOptions(timeout_seconds=17.0)  # a parser of this test's own
    try:
        parser = udfs.get_parser(options)
        assert gc.get_freeze_count() > 0
        assert not udfs.freeze_new_state(options)  # nothing built since

        before = parser.lazy_state()
        parser.parse("SELECT a FROM t", dialect="clickhouse", mask=False)
        parser.parse("INSERT INTO t SELEC a FROM s", dialect="clickhouse", mask=False)  # sqlfluff
        assert parser.lazy_state() > before
        gc.collect()
        assert len(gc.get_objects()) > 1_000  # the new long-lived objects, not frozen yet
        assert udfs.freeze_new_state(options)
        assert len(gc.get_objects()) < 1_000
        assert not udfs.freeze_new_state(options)
    finally:
        udfs._PARSERS.pop(options, None)
        udfs._FROZEN_AT.pop(options, None)
        gc.unfreeze()
