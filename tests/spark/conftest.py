"""One local SparkSession with real Delta for the whole test run, and the DataFrame helper."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession

from lineage_udfs.spark.runtime.session import (
    REPOSITORIES_ENV_VAR,
    build_spark_session,
    maven_repositories,
)
from tests.support.spark_session import PACKAGES, session_settings

VOLATILE_COLUMNS: tuple[str, ...] = ("run_id", "parsed_at", "started_at", "ended_at")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """Built by the production session factory (local master, Delta and GraphFrames packages
    with the extra Maven repositories of ``LINEAGE_MAVEN_REPOSITORIES``, Arrow confs)."""
    settings = session_settings(str(tmp_path_factory.mktemp("spark-warehouse")))
    try:
        session = build_spark_session(settings)
    except Exception as exc:  # make a jar problem obvious instead of a bare Py4J trace
        pytest.fail(
            f"cannot start Spark with {','.join(PACKAGES)} from Maven Central or "
            f"{maven_repositories(settings) or 'no extra repository'} (set {REPOSITORIES_ENV_VAR}, "
            f"comma-separated; `make test` sets it to ../shared/maven when that exists): {exc}"
        )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _forget_delta_logs(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each Spark test, drop Delta's cache of table logs and Spark's cached data.

    Delta keeps a ``DeltaLog`` per table path for the session's life, each with its snapshot's
    cached state (a persisted Dataset and its plans); every test writes fresh tables under
    its own tmp_path, so without this the one session's driver heap holds ~130 dead tables'
    logs by tests/spark/test_graph.py (at 1g the JVM ended up collecting garbage more than it
    ran; see also ``spark.driver.memory`` above).
    """
    yield
    if "spark" not in request.fixturenames:
        return
    session: SparkSession = request.getfixturevalue("spark")
    jvm = session.sparkContext._jvm
    assert jvm is not None
    jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
    session.catalog.clearCache()


def _assert_frames_equal(
    actual: DataFrame, expected: DataFrame, *, ignore_columns: Sequence[str] = ()
) -> None:
    """chispa equality ignoring row order and nullability, without volatile columns."""
    drop = [c for c in (*VOLATILE_COLUMNS, *ignore_columns) if c in actual.columns]
    assert_df_equality(
        actual.drop(*drop),
        expected.drop(*[c for c in drop if c in expected.columns]),
        ignore_row_order=True,
        ignore_nullable=True,
    )


@pytest.fixture(scope="session")
def assert_frames_equal() -> Callable[..., None]:
    """The one DataFrame assertion helper: ``assert_frames_equal(actual, expected)``."""
    return _assert_frames_equal
