"""A Launchpad-like OpenID 2.0 provider built on Debian's python3-openid, for the tests.

Run with /usr/bin/python3 (the interpreter that sees Debian's packages):

    /usr/bin/python3 test/support/launchpad-like-provider.py

It listens on 127.0.0.1 on a free port and prints one JSON line on stdout:
{"url": "http://127.0.0.1:PORT"}. It stops on SIGTERM or when stdin closes.

It answers as https://login.launchpad.net/ and https://login.ubuntu.com/ (one service under two
names; a test runs one process per name) answer, under the same paths:

    GET  /                    OP Identifier: an XRDS document whose only service is the server
                              type (identifier select) at /+openid
    GET  /+id/ID              a claimed identifier, ID 7 letters or digits: an XRDS document with a
                              signon service at /+openid and no LocalID (identity equals the
                              claimed id)
    GET|POST /+openid         the OP endpoint: checkid_setup, check_authentication, associate
    POST /_control            the tests' knob (JSON), see DEFAULTS
    GET  /_stats              requests received, by kind (JSON)

Simple registration (sreg 1.1, and 1.0 if asked so): the fields the relying party asks for among
the signed-in user's nickname and fullname (never email, which Launchpad sends only when asked and
which these tests do not need) are added to the positive assertion before it is signed, so
python3-openid signs them with everything else. A relying party in stateless mode confirms the
assertion with check_authentication; python3-openid keeps associations for those who ask, as
Launchpad does. The protocol work (parsing, realm check of return_to, signing, check_authentication
with single-use nonces, sreg) is python3-openid's own.

The browser is auto-approving: the user signed in at the provider is `userId` (/_control). A
checkid_setup with identifier select is answered with that user's claimed id; a request for a
specific identity only for that user's own id. The hostile settings keep signing with the same
library: a claimed id on another path, an OP Identifier document naming another endpoint at the
same host, sreg values added after the signature.
"""

import json
import re
import threading
from urllib.parse import parse_qsl, urlencode, urlsplit
from xml.sax.saxutils import escape as xml_escape

from openid.extensions import sreg
from openid.server.server import CheckIDRequest, ProtocolError, Server
from openid.store.memstore import MemoryStore

from openid_fixture_server import FixtureHandler, serve

DEFAULTS = {
    # The account signed in at the provider: its id (7 letters or digits) and sreg values; a value
    # set to None is not sent even when asked for.
    "userId": "Ab3dE7q",
    "nickname": "alice",
    "fullname": "Alice Liddell",
    # 'approve' (positive assertion) or 'cancel' (the user declined).
    "answer": "approve",
    # Hostile: the path before the id in the claimed id ("/~" gives /~Ab3dE7q); the provider also
    # serves discovery there.
    "claimedIdPath": "/+id/",
    # Hostile: the endpoint path the OP Identifier document names (same host; nothing answers there).
    "identifierEndpointPath": "/+openid",
    # Hostile: the sreg values are appended to the assertion after it is signed, outside openid.signed.
    "unsignedSreg": False,
}

USER_ID = re.compile(r"^[A-Za-z0-9]{7}$")
CLAIMED_ID_PATH = re.compile(r"^/[A-Za-z0-9+~/_.-]*$")
SREG_FIELDS = ("nickname", "fullname")

XRDS = """<?xml version="1.0" encoding="UTF-8"?>
<xrds:XRDS xmlns:xrds="xri://$xrds" xmlns="xri://$xrd*($v*2.0)">
  <XRD>
    <Service priority="0">
      <Type>{type}</Type>
      <Type>http://openid.net/extensions/sreg/1.1</Type>
      <URI>{endpoint}</URI>
    </Service>
  </XRD>
</xrds:XRDS>
"""
SERVER_TYPE = "http://specs.openid.net/auth/2.0/server"
SIGNON_TYPE = "http://specs.openid.net/auth/2.0/signon"


class Provider:
    def __init__(self, base):
        self.base = base
        self.endpoint = base + "/+openid"
        self.server = Server(MemoryStore(), self.endpoint)
        self.lock = threading.Lock()
        self.config = dict(DEFAULTS)
        self.stats = {}

    def count(self, kind):
        with self.lock:
            self.stats[kind] = self.stats.get(kind, 0) + 1

    def settings(self):
        with self.lock:
            return dict(self.config)

    def claimed_path(self, config):
        return config["claimedIdPath"] + config["userId"]


def validate(settings):
    """The merged settings, or an error message."""
    unknown = set(settings) - set(DEFAULTS)
    if unknown:
        return None, "unknown settings: %s" % sorted(unknown)
    merged = dict(DEFAULTS, **settings)
    if not USER_ID.match(merged["userId"]):
        return None, "userId must be 7 letters or digits"
    for key in ("claimedIdPath", "identifierEndpointPath"):
        if not CLAIMED_ID_PATH.match(merged[key]):
            return None, "%s must be a plain absolute path" % key
    for key in SREG_FIELDS:
        if merged[key] is not None and not isinstance(merged[key], str):
            return None, "%s must be a string or null" % key
    return merged, None


def make_handler(provider):
    class Handler(FixtureHandler):
        server_version = "launchpad-like-test-provider"

        def do_GET(self):
            path, query = self.split()
            config = provider.settings()
            if path == "/":
                provider.count("discovery")
                return self.xrds(SERVER_TYPE, provider.base + config["identifierEndpointPath"])
            if path == provider.claimed_path(config) or (
                path.startswith("/+id/") and USER_ID.match(path[len("/+id/"):])
            ):
                provider.count("discovery")
                return self.xrds(SIGNON_TYPE, provider.endpoint)
            if path == "/+openid":
                return self.endpoint(query)
            if path == "/_stats":
                with provider.lock:
                    return self.send(200, "application/json", json.dumps(provider.stats))
            self.send(404, "text/plain", "not found")

        def do_POST(self):
            path, _ = self.split()
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length).decode("utf-8") if length else ""
            if path == "/+openid":
                return self.endpoint(dict(parse_qsl(body, keep_blank_values=True)))
            if path == "/_control":
                merged, error = validate(json.loads(body or "{}"))
                if error:
                    return self.send(400, "text/plain", error)
                with provider.lock:
                    provider.config = merged
                return self.send(204, "text/plain", "")
            self.send(404, "text/plain", "not found")

        def split(self):
            url = urlsplit(self.path)
            return url.path, dict(parse_qsl(url.query, keep_blank_values=True))

        def xrds(self, service_type, endpoint):
            doc = XRDS.format(type=service_type, endpoint=xml_escape(endpoint))
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
            if isinstance(request, CheckIDRequest):
                return self.checkid(request)
            self.web(provider.server.encodeResponse(provider.server.handleRequest(request)))

        def checkid(self, request):
            config = provider.settings()
            if config["answer"] == "cancel" or request.immediate:
                return self.web(provider.server.encodeResponse(request.answer(False)))
            own = provider.base + provider.claimed_path(config)
            if request.idSelect():
                response = request.answer(True, identity=own, claimed_id=own)
            elif request.identity is not None and request.identity != own:
                return self.web(provider.server.encodeResponse(request.answer(False)))
            else:
                response = request.answer(True)
            sreg_request = sreg.SRegRequest.fromOpenIDRequest(request)
            values = {k: config[k] for k in SREG_FIELDS if config[k] is not None}
            sreg_response = sreg.SRegResponse.extractResponse(sreg_request, values)
            if sreg_request.wereFieldsRequested():
                provider.count("sreg")
            if not config["unsignedSreg"]:
                response.addExtension(sreg_response)
            web = provider.server.encodeResponse(response)
            if config["unsignedSreg"] and sreg_response.data and web.code == 302:
                extra = {"openid.ns.sreg": sreg_response.ns_uri}
                for key, value in sreg_response.data.items():
                    extra["openid.sreg." + key] = value
                location = web.headers["location"]
                web.headers["location"] = location + ("&" if "?" in location else "?") + urlencode(extra)
            self.web(web)

    return Handler


def main():
    serve(make_handler, Provider)


if __name__ == "__main__":
    main()
