"""An OpenID 2.0 provider built on Debian's python3-openid, for the interoperability tests.

Run with /usr/bin/python3 (the interpreter that sees Debian's packages):

    /usr/bin/python3 test/support/python-openid-provider.py

It listens on 127.0.0.1 on a free port and prints one JSON line on stdout:
{"url": "http://127.0.0.1:PORT"}. It stops on SIGTERM or when stdin closes.

The library does all the protocol work (openid.server.server.Server: checkid_setup with
identifier_select, signing, associations, check_authentication); this script only adds the HTTP
server, discovery documents and an auto-approving user, so no person has to click anything.

    GET  /              OP Identifier: an XRDS document (section 7.3.2.1.1) naming /openid
    GET  /user/NAME     a user's claimed identifier: an HTML page with openid2.provider (7.3.3)
    GET|POST /openid    the OP endpoint
    POST /_control      the tests' knob (JSON): how the next answers look, see DEFAULTS
    GET  /_stats        requests received, by kind (JSON)

A test drives the answers through /_control. With the defaults the provider is honest: it
approves every checkid_setup as `user`. The other settings make it hostile, still signing with the
same library: answering for any identity, naming another endpoint, or serving discovery documents
that point elsewhere.
"""

import json
import threading
from html import escape
from urllib.parse import parse_qsl, urlsplit
from xml.sax.saxutils import escape as xml_escape

from openid.server.server import CheckIDRequest, ProtocolError, Server
from openid.store.memstore import MemoryStore

from openid_fixture_server import FixtureHandler, serve

DEFAULTS = {
    # 'approve' (positive assertion) or 'cancel' (the user declined).
    "answer": "approve",
    # The user approved as; its claimed identifier is /user/NAME on this server.
    "user": "alice",
    # Hostile: assert these instead of the user's own identifiers.
    "claimedId": None,
    "identity": None,
    # Hostile: sign this op_endpoint instead of the real one.
    "opEndpoint": None,
    # Hostile OP Identifier document: the endpoint it names, or an X-XRDS-Location / redirect
    # pointing elsewhere.
    "identifierEndpoint": None,
    "identifierXrdsLocation": None,
    "identifierRedirect": None,
    # Hostile user documents: the endpoint and local identifier they name, or an X-XRDS-Location.
    "userEndpoint": None,
    "userLocalId": None,
    "userXrdsLocation": None,
}

XRDS = """<?xml version="1.0" encoding="UTF-8"?>
<xrds:XRDS xmlns:xrds="xri://$xrds" xmlns="xri://$xrd*($v*2.0)">
  <XRD>
    <Service priority="0">
      <Type>http://specs.openid.net/auth/2.0/server</Type>
      <URI>{endpoint}</URI>
    </Service>
  </XRD>
</xrds:XRDS>
"""


class Provider:
    def __init__(self, base):
        self.base = base
        self.endpoint = base + "/openid"
        self.server = Server(MemoryStore(), self.endpoint)
        self.lock = threading.Lock()
        self.config = dict(DEFAULTS)
        self.stats = {}

    def count(self, kind):
        with self.lock:
            self.stats[kind] = self.stats.get(kind, 0) + 1

    def user_url(self, name):
        return "%s/user/%s" % (self.base, name)


def make_handler(provider):
    class Handler(FixtureHandler):
        server_version = "python-openid-test-provider"

        def do_GET(self):
            path, query = self.split()
            if path == "/":
                return self.identifier_document()
            if path.startswith("/user/") and len(path) > len("/user/"):
                return self.user_document(path[len("/user/"):])
            if path == "/openid":
                return self.endpoint(query)
            if path == "/_stats":
                with provider.lock:
                    return self.send(200, "application/json", json.dumps(provider.stats))
            self.send(404, "text/plain", "not found")

        def do_POST(self):
            path, _ = self.split()
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length).decode("utf-8") if length else ""
            if path == "/openid":
                return self.endpoint(dict(parse_qsl(body, keep_blank_values=True)))
            if path == "/_control":
                settings = json.loads(body or "{}")
                unknown = set(settings) - set(DEFAULTS)
                if unknown:
                    return self.send(400, "text/plain", "unknown settings: %s" % sorted(unknown))
                with provider.lock:
                    provider.config = dict(DEFAULTS, **settings)
                return self.send(204, "text/plain", "")
            self.send(404, "text/plain", "not found")

        def split(self):
            url = urlsplit(self.path)
            return url.path, dict(parse_qsl(url.query, keep_blank_values=True))

        def settings(self):
            with provider.lock:
                return dict(provider.config)

        def identifier_document(self):
            provider.count("discovery")
            config = self.settings()
            if config["identifierRedirect"]:
                return self.send(302, "text/plain", "", {"Location": config["identifierRedirect"]})
            if config["identifierXrdsLocation"]:
                page = "<html><head><title>OP</title></head><body>OP</body></html>"
                headers = {"X-XRDS-Location": config["identifierXrdsLocation"]}
                return self.send(200, "text/html", page, headers)
            endpoint = config["identifierEndpoint"] or provider.endpoint
            self.send(200, "application/xrds+xml", XRDS.format(endpoint=xml_escape(endpoint)))

        def user_document(self, name):
            provider.count("discovery")
            config = self.settings()
            headers = {}
            if config["userXrdsLocation"]:
                headers["X-XRDS-Location"] = config["userXrdsLocation"]
            links = '<link rel="openid2.provider" href="%s">' % escape(
                config["userEndpoint"] or provider.endpoint)
            if config["userLocalId"]:
                links += '<link rel="openid2.local_id" href="%s">' % escape(config["userLocalId"])
            page = "<!DOCTYPE html><html><head><title>%s</title>%s</head><body>%s</body></html>" % (
                escape(name), links, escape(name))
            self.send(200, "text/html", page, headers)

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
                response = self.decide(request)
            else:  # associate, check_authentication
                response = provider.server.handleRequest(request)
            self.web(provider.server.encodeResponse(response))

        def decide(self, request):
            """The auto-approving user, or the hostile answers the test configured."""
            config = self.settings()
            if config["answer"] == "cancel" or request.immediate:
                return request.answer(False)
            own = provider.user_url(config["user"])
            if request.idSelect():
                identity = config["identity"] or own
                claimed_id = config["claimedId"] or identity
                return request.answer(True, server_url=config["opEndpoint"], identity=identity,
                                      claimed_id=claimed_id)
            # A request for a specific identifier: only the user's own (the library refuses others).
            if request.identity != own:
                return request.answer(False)
            return request.answer(True, server_url=config["opEndpoint"])

    return Handler


def main():
    serve(make_handler, Provider)


if __name__ == "__main__":
    main()
