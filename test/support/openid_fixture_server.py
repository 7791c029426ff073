"""What the python3-openid provider fixtures share: their HTTP answers and their process.

Each fixture (python-openid-provider.py, steam-like-provider.py, launchpad-like-provider.py)
builds its own request handler on ``FixtureHandler`` and runs ``serve(make_handler, Provider)``:
a server on 127.0.0.1 and a free port, whose URL is printed as one JSON line on stdout, stopped by
SIGTERM or by the parent closing stdin.
"""

import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FixtureHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def web(self, response, error=None):
        """Sends python3-openid's web response, or a 400 with `error`."""
        if response is None:
            return self.send(400, "text/plain", error or "bad request")
        self.send(response.code, response.headers.get("Content-Type", "text/plain"),
                  response.body, {k: v for k, v in response.headers.items()
                                  if k.lower() != "content-type"})

    def send(self, status, content_type, body, headers=None):
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


def serve(make_handler, provider_class):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), None)
    httpd.daemon_threads = True
    base = "http://127.0.0.1:%d" % httpd.server_address[1]
    httpd.RequestHandlerClass = make_handler(provider_class(base))

    def stop(*_):
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    # The parent going away closes stdin: stop then too, so no orphan keeps the port.
    threading.Thread(target=lambda: (sys.stdin.read(), stop()), daemon=True).start()
    print(json.dumps({"url": base}), flush=True)
    httpd.serve_forever()
    httpd.server_close()
