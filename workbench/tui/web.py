"""textual-serve's server, with nothing asked of another machine.

Its page links a web font from Google Fonts; offline that request fails (harmlessly, but
it is a request off the machine, and an air-gapped GPU box has none to make). The page is
served from textual-serve's own template with that link taken out; the font falls back to
the local monospace ones the page already names.
"""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp_jinja2
import jinja2
import textual_serve
from aiohttp import web
from textual_serve.server import Server

#: The template's stylesheet link to a web font.
_WEB_FONT = re.compile(r"<link[^>]*fonts\.googleapis\.com[^>]*/>", re.S)


def offline_template(name: str) -> str | None:
    """textual-serve's template ``name`` without its web-font link."""
    path = Path(textual_serve.__file__).parent / "templates" / name
    if not path.is_file():
        return None
    return _WEB_FONT.sub("", path.read_text(encoding="utf-8"))


class OfflineServer(Server):
    """A textual-serve :class:`Server` whose page makes no request off the machine."""

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        aiohttp_jinja2.setup(app, loader=jinja2.FunctionLoader(offline_template))
        return app
