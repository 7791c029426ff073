"""A Steam-like OpenID 2.0 provider built on Debian's python3-openid, for the tests.

Run with /usr/bin/python3 (the interpreter that sees Debian's packages):

    /usr/bin/python3 test/support/steam-like-provider.py

It listens on 127.0.0.1 on a free port and prints one JSON line on stdout:
{"url": "http://127.0.0.1:PORT"}. It stops on SIGTERM or when stdin closes.

It answers as Steam's "Sign in through Steam" documentation and the relying parties' issue
threads describe https://steamcommunity.com/openid, under the same paths:

    GET  /openid              OP Identifier: an XRDS document whose only service is the
                              server type (identifier select) at /openid/login
    GET  /openid/id/STEAMID   a claimed identifier, STEAMID 17 digits: an XRDS document with a
                              signon service at /openid/login and no LocalID (identity equals
                              the claimed id)
    GET|POST /openid/login    the OP endpoint: checkid_setup, check_authentication
    POST /_control            the tests' knob (JSON), see DEFAULTS
    GET  /_stats              requests received, by kind (JSON)

Like Steam it is stateless only: `associate` is answered with an error, so every assertion is
signed with the library's private association and confirmed by check_authentication. It adds no
attribute exchange and no sreg. The protocol work (parsing, realm check of return_to, signing,
check_authentication with single-use nonces) is python3-openid's own.

The browser is auto-approving: the user signed in at the provider is `steamId` (/_control). A
checkid_setup with identifier select is answered with that user's claimed id. A request for a
specific identity is answered only for that user's own id (what python3-openid's CheckIDRequest
supports: the claimed id the relying party asked for is kept). A request without identifiers
(an extension-only request, section 9.1) is answered as python3-openid answers it: a positive
assertion that names no identifier.
"""

import json
import re
import threading
import time
from urllib.parse import parse_qsl, urlsplit
from xml.sax.saxutils import escape as xml_escape

from openid.server.server import CheckIDRequest, ProtocolError, Server
from openid.store.memstore import MemoryStore

from openid_fixture_server import FixtureHandler, serve

DEFAULTS = {
    # The Steam user signed in at the provider (a 64-bit SteamID, 17 digits).
    "steamId": "76561197960435530",
    # 'approve' (positive assertion) or 'cancel' (the user declined).
    "answer": "approve",
    # How long check_authentication takes to answer, as a provider across the Internet does.
    "checkAuthenticationDelayMs": 0,
    # Hostile: `steamId` may be any 1 to 40 letters or digits (a 16-digit or non-numeric id), and
    # discovery on its claimed id answers as for a real one; still signed by python3-openid.
    "offPatternIds": False,
}

STEAM_ID = re.compile(r"^[0-9]{17}$")
OFF_PATTERN_ID = re.compile(r"^[A-Za-z0-9]{1,40}$")

XRDS = """<?xml version="1.0" encoding="UTF-8"?>
<xrds:XRDS xmlns:xrds="xri://$xrds" xmlns="xri://$xrd*($v*2.0)">
\t<XRD>
\t\t<Service priority="0">
\t\t\t<Type>{type}</Type>
\t\t\t<URI>{endpoint}</URI>
\t\t</Service>
\t</XRD>
</xrds:XRDS>
"""
SERVER_TYPE = "http://specs.openid.net/auth/2.0/server"
SIGNON_TYPE = "http://specs.openid.net/auth/2.0/signon"


class Provider:
    def __init__(self, base):
        self.base = base
        self.endpoint = base + "/openid/login"
        self.server = Server(MemoryStore(), self.endpoint)
        self.lock = threading.Lock()
        self.config = dict(DEFAULTS)
        self.stats = {}

    def count(self, kind):
        with self.lock:
            self.stats[kind] = self.stats.get(kind, 0) + 1

    def claimed_id(self, steam_id):
        return "%s/openid/id/%s" % (self.base, steam_id)


def make_handler(provider):
    class Handler(FixtureHandler):
        server_version = "steam-like-test-provider"

        def do_GET(self):
            path, query = self.split()
            if path == "/openid":
                provider.count("discovery")
                return self.xrds(SERVER_TYPE)
            if path.startswith("/openid/id/"):
                provider.count("discovery")
                steam_id = path[len("/openid/id/"):]
                with provider.lock:
                    own = provider.config["offPatternIds"] and steam_id == provider.config["steamId"]
                if not (STEAM_ID.match(steam_id) or own):
                    return self.send(404, "text/plain", "no such user")
                return self.xrds(SIGNON_TYPE)
            if path == "/openid/login":
                return self.endpoint(query)
            if path == "/_stats":
                with provider.lock:
                    return self.send(200, "application/json", json.dumps(provider.stats))
            self.send(404, "text/plain", "not found")

        def do_POST(self):
            path, _ = self.split()
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length).decode("utf-8") if length else ""
            if path == "/openid/login":
                return self.endpoint(dict(parse_qsl(body, keep_blank_values=True)))
            if path == "/_control":
                settings = json.loads(body or "{}")
                unknown = set(settings) - set(DEFAULTS)
                if unknown:
                    return self.send(400, "text/plain", "unknown settings: %s" % sorted(unknown))
                merged = dict(DEFAULTS, **settings)
                pattern = OFF_PATTERN_ID if merged["offPatternIds"] else STEAM_ID
                if not pattern.match(merged["steamId"]):
                    return self.send(400, "text/plain", "steamId must be 17 digits")
                with provider.lock:
                    provider.config = merged
                return self.send(204, "text/plain", "")
            self.send(404, "text/plain", "not found")

        def split(self):
            url = urlsplit(self.path)
            return url.path, dict(parse_qsl(url.query, keep_blank_values=True))

        def xrds(self, service_type):
            doc = XRDS.format(type=service_type, endpoint=xml_escape(provider.endpoint))
            self.send(200, "application/xrds+xml", doc)

        def endpoint(self, query):
            try:
                request = provider.server.decodeRequest(query)
            except ProtocolError as err:
                provider.count("protocol_error")
                return self.web(provider.server.encodeResponse(err) if err.hasReturnTo()
                                else None, str(err))
            if request is None:
                return self.send(200, "text/plain", "This is an OpenID 2.0 provider endpoint.")
            provider.count(request.mode)
            if request.mode == "associate":
                # Stateless only, as the tests' picture of Steam: no shared secret is negotiated.
                response = request.answerUnsupported("Associations are not supported here.")
            elif isinstance(request, CheckIDRequest):
                response = self.decide(request)
            else:  # check_authentication
                with provider.lock:
                    delay = provider.config["checkAuthenticationDelayMs"]
                time.sleep(delay / 1000.0)
                response = provider.server.handleRequest(request)
            self.web(provider.server.encodeResponse(response))

        def decide(self, request):
            with provider.lock:
                config = dict(provider.config)
            if config["answer"] == "cancel" or request.immediate:
                return request.answer(False)
            own = provider.claimed_id(config["steamId"])
            if request.identity is None:
                return request.answer(True)
            if request.idSelect():
                return request.answer(True, identity=own, claimed_id=own)
            if request.identity != own:
                return request.answer(False)
            return request.answer(True)

    return Handler


def main():
    serve(make_handler, Provider)


if __name__ == "__main__":
    main()
