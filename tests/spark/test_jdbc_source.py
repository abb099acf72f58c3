"""A JDBC source fails as one line: here the test session lacks the PostgreSQL driver jar (the
live database test, tests/integration/postgres, has it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from lineage_udfs.core.errors import InputError
from lineage_udfs.settings import JobSettings
from lineage_udfs.spark.extract.stage import extract


def test_missing_driver_is_one_line_with_the_coordinates(
    spark: SparkSession, tmp_path: Path
) -> None:
    settings = JobSettings.model_validate(
        {
            "sources": [
                {
                    "name": "audit",
                    "format": "jdbc",
                    "jdbc": {
                        "url": "jdbc:postgresql://127.0.0.1:9/shop?ssl=false",
                        "table": "audit.query_log",
                        "user": "reader",
                        "password_env": "AUDIT_PW",
                    },
                }
            ],
            "sink": {"base_path": str(tmp_path / "lineage")},
        }
    )
    with pytest.raises(InputError) as info:
        extract(spark, settings, {"AUDIT_PW": "never-shown-9c1"})
    message = str(info.value)
    assert message == (
        "cannot read jdbc source 'audit' at jdbc:postgresql://127.0.0.1:9/shop: JDBC driver"
        " org.postgresql.Driver not on the Spark classpath (add org.postgresql:postgresql:42.7.14"
        " to spark.packages)"
    )
