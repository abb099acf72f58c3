"""The credentials of ``openlineage`` sources that read a service, from the environment: the
settings name the variables (``kafka.sasl.password_env``, ``marquez.api_key_env``), never hold a
value, so ``lineage_runs.config_json`` and the logs never see one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.settings import SourceSettings


def event_source_secrets(
    sources: Iterable[SourceSettings], environ: Mapping[str, str]
) -> dict[str, str]:
    """The SASL password of every enabled Kafka source with ``kafka.sasl``, and the token of
    every enabled Marquez source with ``marquez.api_key_env``, by source name.

    Raises:
        ConfigError: a named environment variable is not set (the message names the
            variable, never a value).
    """
    secrets: dict[str, str] = {}
    for source in sources:
        if not source.enabled:
            continue
        name, key = None, ""
        if source.kafka is not None and source.kafka.sasl is not None:
            name, key = source.kafka.sasl.password_env, "kafka.sasl.password_env"
        elif source.marquez is not None and source.marquez.api_key_env is not None:
            name, key = source.marquez.api_key_env, "marquez.api_key_env"
        if name is None:
            continue
        value = environ.get(name)
        if value is None:
            raise ConfigError(
                f"source {source.name!r}: environment variable {name} ({key}) is not set"
            )
        secrets[source.name] = value
    return secrets
