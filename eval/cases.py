"""Build the held-out sets' JSONL, which the scorer reads, from their YAML source.

A YAML file holds ``origin`` and ``cases``. Each case is a record of the corpus format
(``../shared/corpus/README.md``) without ``origin``, and its id has no ``<origin>:`` prefix.
The cases are validated, and each record is written with its keys in one fixed order, so the
JSONL depends only on the data. Run ``.venv/bin/python eval/cases.py`` to rewrite every
``eval/*_cases.jsonl`` from its ``.yaml``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from sqlglot.dialects.dialect import Dialect

EVAL = Path(__file__).resolve().parent
REQUIRED = ("id", "dialect", "sql", "expected", "note")
OPTIONAL = ("result_columns", "schemas", "default_db", "default_schema")
SIDES = ("sources", "targets", "columns")
# "ansi" is sqlglot's default dialect (read=None), which Dialect.classes lists as ""
DIALECTS = {"ansi"} | (set(Dialect.classes) - {""})
_ID = re.compile(r"[a-z0-9_]+")


class CaseFormatError(ValueError):
    """A YAML case file does not hold valid held-out cases."""


class _Loader(yaml.SafeLoader):  # type: ignore[misc]
    """SafeLoader that rejects a key given twice in one mapping (PyYAML keeps the last)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
        twice = sorted({str(k) for k in keys if keys.count(k) > 1})
        _check(not twice, f"line {node.start_mark.line + 1}", f"keys given twice: {twice}")
        return super().construct_mapping(node, deep=deep)


def _check(ok: bool, where: str, message: str) -> None:
    if not ok:
        raise CaseFormatError(f"{where}: {message}")


def _names(value: Any, where: str, *, pairs: bool) -> None:
    """``value`` lists lowercase names, or [``table.col``, name] pairs of them."""
    _check(isinstance(value, list), where, "not a list")
    for item in value:
        _check(not pairs or (isinstance(item, list) and len(item) == 2), where, f"{item!r}")
        for name in item if pairs else [item]:
            _check(isinstance(name, str) and name == name.lower() != "", where, f"{name!r}")
        _check(not pairs or "." in item[0], where, f"{item!r}: the source is not table.column")


def _record(case: Any, origin: str, where: str) -> dict[str, Any]:
    _check(isinstance(case, dict), where, "a case is a mapping")
    where = f"{where} {case.get('id')}"
    _check(set(REQUIRED) <= set(case), where, f"missing {sorted(set(REQUIRED) - set(case))}")
    unknown = sorted(set(case) - set(REQUIRED) - set(OPTIONAL))
    _check(not unknown, where, f"unknown keys {unknown}")
    _check(isinstance(case["id"], str) and bool(_ID.fullmatch(case["id"])), where, "id")
    _check(case["dialect"] in DIALECTS, where, f"{case['dialect']!r} is no sqlglot dialect")
    for key in ("sql", "note", "default_db", "default_schema"):
        if key in case:
            _check(isinstance(case[key], str) and case[key].strip() != "", where, f"{key}: text")
    expected = case["expected"]
    _check(isinstance(expected, dict) and set(expected) == set(SIDES), where, f"expected {SIDES}")
    for side in SIDES:
        if expected[side] is not None:
            _names(expected[side], f"{where} {side}", pairs=side == "columns")
    if "result_columns" in case:
        _names(case["result_columns"], f"{where} result_columns", pairs=True)
    schemas = case.get("schemas", {})
    _check(isinstance(schemas, dict), where, "schemas is not a mapping")
    for table, columns in schemas.items():
        _check(isinstance(columns, dict), where, f"schemas: {table} is not a mapping")
        _check(all(t is None or isinstance(t, str) for t in columns.values()), where, table)
    record: dict[str, Any] = {"id": f"{origin}:{case['id']}", "origin": origin}
    record |= {key: case[key] for key in (*REQUIRED, *OPTIONAL) if key in case and key != "id"}
    record["expected"] = {side: expected[side] for side in SIDES}
    return record


def load_cases(path: Path) -> list[dict[str, Any]]:
    """The corpus records of a YAML case file, validated; raises CaseFormatError."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)  # a SafeLoader
    _check(isinstance(data, dict) and set(data) == {"origin", "cases"}, path.name, "top keys")
    origin = data["origin"]
    _check(isinstance(origin, str) and bool(_ID.fullmatch(origin)), path.name, "origin")
    _check(isinstance(data["cases"], list), path.name, "cases is not a list")
    records = [_record(case, origin, f"{path.name}[{i}]") for i, case in enumerate(data["cases"])]
    ids = [record["id"] for record in records]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    _check(not twice, path.name, f"ids given twice: {twice}")
    return records


def to_jsonl(records: list[dict[str, Any]]) -> str:
    """One JSON object per line, as ``lineage_udfs.evaluate`` and the scorer read them."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


if __name__ == "__main__":
    for source in sorted(EVAL.glob("*_cases.yaml")):
        source.with_suffix(".jsonl").write_text(to_jsonl(load_cases(source)), encoding="utf-8")
