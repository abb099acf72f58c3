"""The explorer's ASGI app (Starlette, served by uvicorn): the page, its static assets and one
read-only JSON API. There is no write path: every route is GET (HEAD), anything else is 405.

Access: on a loopback address the app needs nothing; anywhere else ``lineage serve`` refuses to
start without a token (``--token-env NAME``), and with a token every request must carry it: an
``Authorization: Bearer`` header, the ``lineage_token`` cookie, or ``?token=`` (which sets the
cookie, so a shared link without the token works once the browser has it).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lineage_udfs.cli.explorer.data import ExplorerData
from lineage_udfs.cli.store import CliError
from lineage_udfs.core.errors import one_line

COOKIE = "lineage_token"
ASSETS = {
    "cytoscape.min.js": "text/javascript",
    "cytoscape-dagre.min.js": "text/javascript",
    "explorer.js": "text/javascript",
    "explorer.css": "text/css",
}
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _static(name: str) -> bytes:
    return resources.files("lineage_udfs.cli").joinpath("static", name).read_bytes()


def _int_arg(request: Request, key: str, default: int | None) -> int | None:
    raw = request.query_params.get(key, "")
    if raw in ("", "all"):
        return default if raw == "" else None
    try:
        return int(raw)
    except ValueError:
        raise CliError(f"{key} must be a whole number or 'all', not {raw!r}") from None


def _required(request: Request, key: str) -> str:
    value = request.query_params.get(key, "").strip()
    if not value:
        raise CliError(f"the query parameter {key!r} is required")
    return value


def create_app(data: ExplorerData, token: str | None = None) -> Starlette:
    """The app over ``data``; with ``token``, every request must carry it."""

    def api(fn: Callable[[Request], Any]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            from starlette.concurrency import run_in_threadpool

            try:
                body = await run_in_threadpool(fn, request)
            except CliError as exc:
                status = 404 if str(exc).startswith("unknown") else 400
                return JSONResponse({"error": one_line(exc)}, status, HEADERS)
            except Exception as exc:  # a reader's failure: one line, never a trace
                return JSONResponse({"error": one_line(exc, with_type=True)}, 500, HEADERS)
            return JSONResponse(_plain(body), headers=HEADERS)

        return endpoint

    async def page(request: Request) -> Response:
        return Response(_static("explorer.html"), media_type="text/html", headers=HEADERS)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return Response("not found", 404, media_type="text/plain")
        return Response(_static(name), media_type=ASSETS[name], headers=HEADERS)

    routes = [
        Route("/", page),
        Route("/static/{name}", asset),
        Route("/favicon.ico", lambda r: Response(status_code=204)),
        Route("/api/info", api(lambda r: data.info())),
        Route("/api/search", api(lambda r: data.search(r.query_params.get("q", "")))),
        Route(
            "/api/graph",
            api(
                lambda r: data.graph(
                    _required(r, "name"),
                    r.query_params.get("direction", "upstream"),
                    _int_arg(r, "depth", 2),
                )
            ),
        ),
        Route("/api/node", api(lambda r: data.node(_required(r, "name")))),
        Route("/api/statement", api(lambda r: data.statement(_required(r, "fingerprint")))),
        Route("/api/runs", api(lambda r: data.runs(_int_arg(r, "limit", 20) or 20))),
        Route(
            "/api/quarantine",
            api(
                lambda r: data.quarantine(
                    r.query_params.get("stage") or None, _int_arg(r, "limit", 50) or 50
                )
            ),
        ),
    ]
    app = Starlette(routes=routes)
    if token is None:
        return app
    return TokenGate(app, token)  # type: ignore[return-value]


class TokenGate:
    """ASGI middleware: every HTTP request carries the token, or gets 401."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self._token = token.encode()

    def _ok(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate.encode(), self._token)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        auth = request.headers.get("authorization", "")
        bearer = auth[7:] if auth.lower().startswith("bearer ") else None
        from_query = request.query_params.get("token")
        if self._ok(bearer) or self._ok(request.cookies.get(COOKIE)):
            await self.app(scope, receive, send)
            return
        if self._ok(from_query):

            async def send_with_cookie(message: Any) -> None:
                if message["type"] == "http.response.start":
                    cookie = f"{COOKIE}={from_query}; HttpOnly; SameSite=Strict; Path=/"
                    message["headers"] = [*message["headers"], (b"set-cookie", cookie.encode())]
                await send(message)

            await self.app(scope, receive, send_with_cookie)
            return
        response = JSONResponse(
            {"error": "this explorer needs its token (Authorization: Bearer, or ?token=)"},
            401,
            {**HEADERS, "WWW-Authenticate": "Bearer"},
        )
        await response(scope, receive, send)


def _plain(value: Any) -> Any:
    """JSON-able: timestamps and other scalars as text, map columns as objects."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        items = list(value)
        if items and all(isinstance(v, tuple) and len(v) == 2 for v in items):
            return {str(k): _plain(v) for k, v in items}
        return [_plain(v) for v in items]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def serve(data: ExplorerData, host: str, port: int, token: str | None) -> None:
    """Serve until interrupted (uvicorn, one process)."""
    import uvicorn

    uvicorn.run(
        create_app(data, token), host=host, port=port, log_level="warning", access_log=False
    )
