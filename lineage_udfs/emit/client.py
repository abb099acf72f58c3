"""Build an ``OpenLineageClient`` with an explicit transport from our settings.

Nothing here reads the environment or ``openlineage.yml``: the transport comes from
:class:`~lineage_udfs.emit.config.OpenLineageSettings` and secrets (API keys) are passed in by
the caller, keyed by the environment-variable NAME the settings give.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openlineage.client import OpenLineageClient
from openlineage.client.transport.composite import CompositeConfig, CompositeTransport
from openlineage.client.transport.console import ConsoleConfig, ConsoleTransport
from openlineage.client.transport.file import FileConfig, FileTransport
from openlineage.client.transport.http import HttpConfig, HttpTransport
from openlineage.client.transport.noop import NoopConfig, NoopTransport
from openlineage.client.transport.transport import Transport

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.emit.config import (
    CompositeTransportSettings,
    ConsoleTransportSettings,
    FileTransportSettings,
    HttpTransportSettings,
    KafkaTransportSettings,
    NoopTransportSettings,
    OpenLineageSettings,
)
from lineage_udfs.emit.kafka import make_kafka_transport


def http_config_dict(
    settings: HttpTransportSettings, secrets: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The openlineage-python ``HttpConfig`` dict for our http settings (bearer auth included)."""
    config: dict[str, Any] = {
        "type": "http",
        "url": settings.url,
        "endpoint": settings.endpoint,
        "timeout": settings.timeout,
        "custom_headers": dict(settings.custom_headers),
        "retry": {
            "total": settings.retries,
            "read": settings.retries,
            "connect": settings.retries,
            "backoff_factor": settings.backoff_factor,
            "status_forcelist": [500, 502, 503, 504],
            "allowed_methods": ["HEAD", "POST"],
            # Return the last 5xx response instead of raising urllib3's MaxRetryError, so
            # the caller sees the status code and can decide to spool.
            "raise_on_status": False,
        },
    }
    if settings.compression:
        config["compression"] = settings.compression
    if settings.api_key_env:
        key = (secrets or {}).get(settings.api_key_env)
        if not key:
            raise ConfigError(
                f"http transport needs the API key from ${settings.api_key_env}, "
                "which was not passed in (read it in jobs/ with openlineage_secrets())"
            )
        config["auth"] = {"type": "api_key", "apiKey": key}
    return config


def _leaf_config(settings: object, secrets: Mapping[str, str] | None) -> dict[str, Any]:
    if isinstance(settings, HttpTransportSettings):
        return http_config_dict(settings, secrets)
    if isinstance(settings, FileTransportSettings):
        return {"type": "file", "log_file_path": settings.log_file_path, "append": settings.append}
    if isinstance(settings, KafkaTransportSettings):
        config: dict[str, Any] = {
            "type": "kafka",
            "topic": settings.topic,
            "config": dict(settings.config),
            "flush": settings.flush,
        }
        if settings.message_key:
            config["messageKey"] = settings.message_key
        return config
    if isinstance(settings, ConsoleTransportSettings):
        return {"type": "console"}
    if isinstance(settings, NoopTransportSettings):
        return {"type": "noop"}
    raise ConfigError(f"unknown OpenLineage transport settings: {type(settings).__name__}")


def make_transport(
    settings: OpenLineageSettings, secrets: Mapping[str, str] | None = None
) -> Transport:
    """Build the configured transport explicitly.

    Raises:
        ConfigError: no transport configured, an unknown type, a missing API key, or a transport
            the client cannot build (e.g. kafka without ``confluent-kafka`` installed).
    """
    transport = settings.transport
    if transport is None:
        raise ConfigError(
            "openlineage.transport is not configured (http, file, kafka, console, "
            "composite or noop)"
        )
    try:
        if isinstance(transport, HttpTransportSettings):
            return HttpTransport(HttpConfig.from_dict(http_config_dict(transport, secrets)))
        if isinstance(transport, FileTransportSettings):
            return FileTransport(FileConfig.from_dict(_leaf_config(transport, secrets)))
        if isinstance(transport, ConsoleTransportSettings):
            return ConsoleTransport(ConsoleConfig())
        if isinstance(transport, NoopTransportSettings):
            return NoopTransport(NoopConfig())
        if isinstance(transport, KafkaTransportSettings):
            return make_kafka_transport(_leaf_config(transport, secrets))
        if isinstance(transport, CompositeTransportSettings):
            members = {
                f"{i:02d}_{member.type}": _leaf_config(member, secrets)
                for i, member in enumerate(transport.transports)
            }
            return CompositeTransport(
                CompositeConfig.from_dict(
                    {
                        "transports": members,
                        "continue_on_failure": transport.continue_on_failure,
                        "sort_transports": True,
                    }
                )
            )
    except ConfigError:
        raise
    except (ImportError, RuntimeError, TypeError, ValueError) as exc:
        raise ConfigError(f"cannot build OpenLineage {transport.type} transport: {exc}") from exc
    raise ConfigError(f"unknown OpenLineage transport type: {transport!r}")


def make_client(
    settings: OpenLineageSettings, secrets: Mapping[str, str] | None = None
) -> OpenLineageClient:
    """An ``OpenLineageClient`` using exactly the configured transport (no env/yml lookup)."""
    return OpenLineageClient(transport=make_transport(settings, secrets), config={})


def preparing_client() -> OpenLineageClient:
    """A client that sends nothing (noop transport), for :func:`prepare_event` where the events
    are delivered elsewhere (built on an executor, written by the driver)."""
    return OpenLineageClient(transport=NoopTransport(NoopConfig()), config={})


def prepare_event(client: OpenLineageClient, event: Any) -> Any:
    """The event exactly as ``client.emit`` hands it to its transport (the client's own facets
    added: environment, tags, source code location; datasets reduced when configured), without
    sending it. Spooling this form makes a replayed event identical to one delivered at once."""
    event = client.add_environment_facets(event)
    event = client.update_event_tags_facets(event)
    event = client.add_source_code_location_facet(event)
    if client.config.dataset.reducing_enabled:
        event = client.reduce_datasets(event)
    return event
