"""The stored parser version decides which fingerprints an incremental run parses again."""

from __future__ import annotations

from lineage_udfs.core.options import PARSER_REVISION, ParserOptions
from lineage_udfs.spark.parse.udfs import parser_version


def test_version_names_the_rule_revision_and_sqlglot() -> None:
    version = parser_version(ParserOptions())
    assert f"+r{PARSER_REVISION}+sqlglot" in version
    assert version.endswith("+o" + ParserOptions().digest())


def test_same_options_same_version_other_options_other_version() -> None:
    assert parser_version(ParserOptions()) == parser_version(ParserOptions())
    changed = [
        ParserOptions(conditions_as_direct=True),
        ParserOptions(rename_as_lineage=False),
        ParserOptions(default_dialect="snowflake"),
        ParserOptions(timeout_seconds=5),
    ]
    versions = {parser_version(o) for o in changed} | {parser_version(ParserOptions())}
    assert len(versions) == len(changed) + 1
