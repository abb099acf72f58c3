"""Settings loading: overlays, validation errors, the shipped configs (no Spark)."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.core.options import ENGINE_CONVENTIONS, ParserOptions
from lineage_udfs.emit.config import FileTransportSettings, OpenLineageSettings
from lineage_udfs.settings import (
    ExecutionSettings,
    JobSettings,
    ParserSettings,
    load_settings,
)

CONF = Path(__file__).resolve().parents[2] / "conf"
PARSER_KEYS = {f.name for f in dataclasses.fields(ParserOptions)} | {"incremental", "partitions"}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_load_settings_shipped_local_config_is_valid() -> None:
    settings = load_settings([CONF / "base.yaml", CONF / "local.yaml"])
    assert settings.spark.master == "local[*]"
    assert [s.name for s in settings.sources] == ["spark_history", "snowflake_history"]
    assert settings.sources[1].columns["query_text"] == "QUERY_TEXT"
    # relative paths are resolved against the working directory when the settings load
    assert settings.sink.base_path == str(Path.cwd() / "warehouse" / "lineage")
    # overlay confs merge into the base confs instead of replacing them
    assert settings.spark.confs["spark.sql.shuffle.partitions"] == "4"
    assert settings.spark.confs["spark.sql.session.timeZone"] == "UTC"
    # the embedded default runs the whole product: graph stage and OpenLineage to a file
    assert settings.graph.enabled is True
    assert settings.graph.max_depth == 20
    assert settings.openlineage.enabled is True
    assert settings.openlineage.transport is not None
    assert settings.openlineage.transport.type == "file"


def test_load_settings_shipped_databricks_config_has_no_master() -> None:
    settings = load_settings([CONF / "base.yaml", CONF / "databricks.yaml"])
    assert settings.spark.master is None
    assert settings.spark.packages == []
    assert settings.sources[0].format == "delta"
    # durable checkpoints on the cluster; the embedded default keeps local ones
    assert settings.execution.checkpoint_dir == "/Volumes/main/lineage/checkpoints"
    assert load_settings([CONF / "base.yaml"]).execution.checkpoint_dir is None


def test_load_settings_graph_checkpoint_dir_names_its_replacement(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.yaml", "graph: {checkpoint_dir: /mnt/checkpoints}\n")
    with pytest.raises(ConfigError, match=r"graph\.checkpoint_dir is replaced by execution\."):
        load_settings([CONF / "base.yaml", old])
    unset = _write(tmp_path / "unset.yaml", "graph: {checkpoint_dir: null}\n")
    assert load_settings([CONF / "base.yaml", unset]).execution.checkpoint_dir is None


def test_load_settings_overlays_apply_left_to_right(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.yaml", "parser: {default_dialect: snowflake, timeout_seconds: 5}\n")
    b = _write(tmp_path / "b.yaml", "parser: {timeout_seconds: 7}\nlogging: {level: DEBUG}\n")
    settings = load_settings([CONF / "base.yaml", a, b])
    assert settings.parser.options.default_dialect == "snowflake"
    assert settings.parser.options.timeout_seconds == 7.0
    assert settings.logging.level == "DEBUG"


def test_parser_section_validates_into_parser_options() -> None:
    assert JobSettings().parser.options == ParserOptions()
    flat = {"timeout_seconds": "5", "conditions_as_direct": True, "incremental": False}
    parser = ParserSettings.model_validate(flat)
    assert parser.options == ParserOptions(timeout_seconds=5.0, conditions_as_direct=True)
    assert parser.incremental is False
    assert parser.model_dump() == {**dataclasses.asdict(parser.options), **parser.model_dump()}
    assert set(parser.model_dump()) == PARSER_KEYS  # dumped flat, as conf/base.yaml writes it


def test_parser_conventions_preset_sets_the_engine_options_and_keys_beside_it_win() -> None:
    parser = ParserSettings.model_validate({"conventions": "openlineage_spark"})
    assert parser.options == ParserOptions(**ENGINE_CONVENTIONS["openlineage_spark"])
    assert parser.options.merge_unchanged_columns_as_identity is True
    assert parser.options.destructive_statements_as_targets is False
    mixed = ParserSettings.model_validate(
        {"conventions": "openlineage_spark", "update_target_as_source": False}
    )
    assert mixed.options.update_target_as_source is False
    assert mixed.options.merge_unchanged_columns_as_identity is True
    with pytest.raises(ValidationError, match="unknown parser conventions 'spark'"):
        ParserSettings.model_validate({"conventions": "spark"})
    assert JobSettings().parser.options.merge_unchanged_columns_as_identity is False


def test_base_yaml_documents_every_parser_option() -> None:
    base = yaml.safe_load((CONF / "base.yaml").read_text(encoding="utf-8"))
    assert set(base["parser"]) == PARSER_KEYS


def test_base_yaml_documents_every_openlineage_option() -> None:
    base = yaml.safe_load((CONF / "base.yaml").read_text(encoding="utf-8"))
    assert set(base["openlineage"]) == set(OpenLineageSettings.model_fields)
    assert base["openlineage"]["scope"] == OpenLineageSettings().scope == "incremental"


def test_openlineage_relative_paths_are_the_drivers_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The executors write the events file and the spool with the settings the driver loaded
    and pickled: a relative path must name the driver's directory, not each executor's."""
    driver = tmp_path / "driver"
    driver.mkdir()
    monkeypatch.chdir(driver)
    openlineage = load_settings([CONF / "base.yaml", CONF / "local.yaml"]).openlineage
    shipped = pickle.dumps(openlineage)
    executor = tmp_path / "app-1" / "0"  # a standalone worker's folder for executor 0
    executor.mkdir(parents=True)
    monkeypatch.chdir(executor)
    on_executor = pickle.loads(shipped)
    assert isinstance(on_executor.transport, FileTransportSettings)
    here = driver.resolve()
    assert on_executor.transport.log_file_path == str(here / "warehouse/openlineage/events.jsonl")
    assert on_executor.spool.path == str(here / "warehouse/openlineage/spool")
    default = OpenLineageSettings().spool.path
    assert default == str(executor.resolve() / ".lineage/openlineage-spool")
    url = FileTransportSettings(log_file_path="s3://bucket/events.jsonl")
    assert url.log_file_path == "s3://bucket/events.jsonl"


def test_load_settings_openlineage_scope_is_incremental_or_all(tmp_path: Path) -> None:
    every = _write(tmp_path / "all.yaml", "openlineage: {scope: all}\n")
    assert load_settings([CONF / "base.yaml", every]).openlineage.scope == "all"
    bad = _write(tmp_path / "bad.yaml", "openlineage: {scope: everything}\n")
    with pytest.raises(ConfigError, match="scope"):
        load_settings([CONF / "base.yaml", bad])


def test_load_settings_unknown_key_names_the_file(tmp_path: Path) -> None:
    bad = _write(tmp_path / "typo.yaml", "parser: {time_out_seconds: 3}\n")
    with pytest.raises(ConfigError, match=r"typo\.yaml") as info:
        load_settings([CONF / "base.yaml", bad])
    assert "time_out_seconds" in str(info.value)


def test_load_settings_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    bad = _write(tmp_path / "broken.yaml", "parser: [unclosed\n")
    with pytest.raises(ConfigError, match=r"broken\.yaml"):
        load_settings([bad])


def test_load_settings_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml"):
        load_settings([tmp_path / "nope.yaml"])


def test_load_settings_unknown_canonical_column_is_rejected(tmp_path: Path) -> None:
    bad = _write(
        tmp_path / "src.yaml",
        "sources:\n  - {name: x, format: csv, path: x.csv, columns: {query_txt: TEXT}}\n",
    )
    with pytest.raises(ConfigError, match="query_txt"):
        load_settings([bad])


def test_settings_are_frozen() -> None:
    settings = JobSettings()
    with pytest.raises(ValueError, match="frozen"):
        settings.parser.incremental = False  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.parser.options.default_dialect = "x"  # type: ignore[misc]


def test_shuffle_partitions_auto_grow_with_the_input_within_bounds() -> None:
    execution = ExecutionSettings(target_partition_bytes=64 * 2**20, max_shuffle_partitions=500)
    counts = [
        execution.shuffle_partitions_for(n, parallelism=4)
        for n in (0, 2**20, 64 * 2**20, 65 * 2**20, 10 * 2**30, 2**50)
    ]
    assert counts == [4, 4, 4, 4, 160, 500]  # parallelism is the floor, max the ceiling
    assert counts == sorted(counts)
    floor = ExecutionSettings(min_shuffle_partitions=16)
    assert floor.shuffle_partitions_for(1, parallelism=4) == 16


def test_shuffle_partitions_fixed_or_from_the_session() -> None:
    assert ExecutionSettings(shuffle_partitions=3).shuffle_partitions_for(2**40, 8) == 3
    assert ExecutionSettings(shuffle_partitions="session").shuffle_partitions_for(2**40, 8) is None
    with pytest.raises(ValueError):
        ExecutionSettings(shuffle_partitions=0)
    with pytest.raises(ValueError):
        ExecutionSettings(storage_level="OFF_HEAP_SOMEWHERE")


def test_base_yaml_documents_every_execution_key() -> None:
    base = yaml.safe_load((CONF / "base.yaml").read_text(encoding="utf-8"))
    assert set(base["execution"]) == set(ExecutionSettings.model_fields)
    assert ExecutionSettings.model_validate(base["execution"]) == ExecutionSettings()
