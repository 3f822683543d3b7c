"""The FastAPI application: the API routers, the web pages and ``/healthz``."""

from __future__ import annotations

from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from adapters.http import api_admin, api_auth, api_chat, api_records, openai_api
from adapters.http.context import HttpContext
from adapters.http.protections import Protections
from adapters.http.turns import HttpTurns

STATIC = resources.files("adapters.http") / "static"


def _page(name: str) -> FileResponse:
    return FileResponse(str(STATIC / name), headers={"Cache-Control": "no-cache"})


def _describe(errors: Any) -> str:
    """FastAPI's validation errors as one readable line."""
    parts = []
    for error in errors:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        parts.append(f"{where}: {error.get('msg')}" if where else str(error.get("msg")))
    return "; ".join(parts)


def create_app(ctx: HttpContext) -> FastAPI:
    app = FastAPI(
        title="teamrag",
        summary="Answers from the team's documents, with citations, in Korean and English.",
        version="0.1.0",
    )
    app.state.ctx = ctx
    app.add_middleware(Protections, max_body_bytes=ctx.max_body_bytes)
    app.state.turns = HttpTurns(ctx)
    for module in (api_auth, api_chat, api_records, api_admin, openai_api):
        app.include_router(module.router)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        headers = dict(exc.headers or {})
        if request.url.path.startswith("/v1/"):
            return openai_api.openai_error(exc.status_code, str(exc.detail), headers)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        reason = _describe(exc.errors())
        if request.url.path.startswith("/v1/"):
            return openai_api.openai_error(422, reason)
        return JSONResponse({"detail": reason, "errors": jsonable(exc.errors())}, status_code=422)

    # /readyz (which names the data folder and the back-ends) and /metrics are served on
    # TEAMRAG_OPS_PORT only (bots/serve.py), not to whoever reaches the service port.
    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> PlainTextResponse:
        return PlainTextResponse("ok")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return _page("index.html")

    @app.get("/admin", include_in_schema=False)
    async def admin() -> FileResponse:
        return _page("admin.html")

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    return app


def jsonable(errors: Any) -> list[dict[str, Any]]:
    return [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg"))} for e in errors]
