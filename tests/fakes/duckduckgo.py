"""A DuckDuckGo HTML search page for tests, over real HTTP.

``POST /html/`` records the form and answers with a result page shaped like
html.duckduckgo.com's (result bodies, ``/l/?uddg=`` redirect links, an ad), or with
an injected status. ``GET /page`` serves an article for summarize_url.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

from aiohttp import web

from tests.fakes.background import BackgroundApp

ARTICLE = (
    "<html><head><title>On-call handbook</title></head><body><article><h1>On-call</h1>"
    "<p>New on-call engineers shadow a full rotation before carrying the pager alone. "
    "Handover happens every Monday at 10:00 in the #oncall-handover channel.</p>"
    "<p>Escalate to the incident commander after fifteen minutes without progress.</p>"
    "</article></body></html>"
)


def result_page(query: str) -> str:
    def body(title: str, url: str, snippet: str) -> str:
        return (
            '<div class="result results_links web-result"><div class="links_main result__body">'
            f'<h2 class="result__title"><a class="result__a" href="//duckduckgo.com/l/?uddg='
            f'{quote(url, safe="")}&amp;rut=x">{title}</a></h2>'
            f'<a class="result__snippet" href="x">{snippet}</a></div></div>'
        )

    ad = body("Sponsored", "https://duckduckgo.com/y.js?ad_domain=x", "an ad")
    return (
        f"<html><body>{ad}"
        + body(
            f"{query} - Example News", "https://news.example.com/a", f"Latest on <b>{query}</b>."
        )
        + body("Background", "https://wiki.example.org/b", "Some background reading.")
        + "</body></html>"
    )


@dataclass
class FakeDuckDuckGo:
    fail_with: int | None = None
    forms: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""
    _server: BackgroundApp | None = None

    async def _search(self, request: web.Request) -> web.Response:
        form = dict(await request.post())
        self.forms.append({k: str(v) for k, v in form.items()})
        if self.fail_with is not None:
            return web.Response(text="slow down", status=self.fail_with)
        return web.Response(text=result_page(str(form.get("q", ""))), content_type="text/html")

    async def _page(self, request: web.Request) -> web.Response:
        return web.Response(text=ARTICLE, content_type="text/html")

    async def _redirect(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/page")

    def start(self) -> FakeDuckDuckGo:
        app = web.Application()
        app.router.add_post("/html/", self._search)
        app.router.add_get("/page", self._page)
        app.router.add_get("/moved", self._redirect)
        self._server = BackgroundApp(app)
        self.base_url = self._server.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
