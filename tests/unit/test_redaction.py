"""No credential from config reaches lineage_runs.config_json or a log line."""

from __future__ import annotations

import json
import logging

import pytest

from lineage_udfs.logging_setup import configure_logging
from lineage_udfs.redaction import redact_text, settings_json
from lineage_udfs.settings import JobSettings

CANARY = "CANARYc0nf1g"


def _settings_with_secrets() -> JobSettings:
    return JobSettings.model_validate(
        {
            "sources": [
                {
                    "name": "pg",
                    "format": "delta",
                    "path": f"jdbc:postgresql://h/db?user=u&password={CANARY}1",
                    "options": {"password": f"{CANARY}2", "url": "jdbc:sqlserver://h;pwd=x"},
                }
            ],
            "spark": {
                "confs": {
                    "spark.hadoop.fs.s3a.secret.key": f"{CANARY}3",
                    "spark.hadoop.fs.azure.account.key.acct.blob.core.windows.net": f"{CANARY}4",
                    "spark.sql.session.timeZone": "UTC",
                }
            },
            "openlineage": {
                "enabled": True,
                "transport": {
                    "type": "composite",
                    "transports": [
                        {
                            "type": "http",
                            "url": f"https://bob:{CANARY}5@marquez:5000",
                            "api_key_env": "OL_API_KEY",
                            "custom_headers": {"X-Tenant": f"{CANARY}6"},
                        },
                        {
                            "type": "kafka",
                            "topic": "ol",
                            "config": {
                                "bootstrap.servers": "b:9092",
                                "sasl.password": f"{CANARY}7",
                                "sasl.jaas.config": f"... password='{CANARY}8';",
                            },
                        },
                    ],
                },
            },
        }
    )


def test_stored_config_holds_no_credential_but_keeps_the_rest() -> None:
    stored = settings_json(_settings_with_secrets())
    assert CANARY not in stored
    config = json.loads(stored)
    http, kafka = config["openlineage"]["transport"]["transports"]
    assert http["url"] == "https://***@marquez:5000"
    assert http["api_key_env"] == "OL_API_KEY"  # the variable's name, not a secret
    assert kafka["config"]["bootstrap.servers"] == "b:9092"
    assert config["spark"]["confs"]["spark.sql.session.timeZone"] == "UTC"


@pytest.mark.parametrize(
    "line",
    [
        f"POST https://u:{CANARY}@host/api failed",
        f"jdbc:sqlserver://h:1433;user=a;password={CANARY};db=x",
        f"Authorization: Bearer {CANARY}",
        f"calling https://h/x?api_key={CANARY}&page=2",
        f"aws_secret_access_key={CANARY}",
    ],
)
def test_log_lines_are_redacted(line: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert CANARY not in redact_text(line)
    configure_logging()
    try:
        logging.getLogger("lineage_udfs.test").warning("%s", line)
        try:
            raise RuntimeError(line)
        except RuntimeError:
            logging.getLogger("lineage_udfs.test").exception("failed")
    finally:
        logging.getLogger().handlers.clear()
    err = capsys.readouterr().err
    assert "failed" in err
    assert CANARY not in err
