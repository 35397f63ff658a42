"""A plain HTTP proxy on 127.0.0.1 for the proxy tests: it forwards and logs each URL."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, urlsplit


class ForwardingProxy:
    """A plain HTTP proxy on 127.0.0.1 that forwards requests and logs their URLs."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                target = urlsplit(self.path)  # absolute-form: http://host:port/path
                with proxy._lock:
                    proxy.log.append(f"{self.command} {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("proxy-connection", "connection", "host")
                }
                conn = http.client.HTTPConnection(
                    target.hostname or "", target.port or 80, timeout=30
                )
                path = target.path + (f"?{target.query}" if target.query else "")
                conn.request(self.command, quote(path, safe="/?=&%:@"), body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("connection", "transfer-encoding", "keep-alive"):
                        self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_HEAD = do_POST = _forward

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        """The proxy's address, for ``HTTP_PROXY``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def requests(self) -> list[str]:
        """``METHOD url`` of every request forwarded so far."""
        with self._lock:
            return list(self.log)

    def stop(self) -> None:
        """Stop listening."""
        self._httpd.shutdown()
        self._httpd.server_close()
