"""A device-flow client written with Python's OAuth libraries (Debian's), used unmodified.

    python-device-client.py authlib|oauthlib ISSUER CLIENT_ID SCOPE

Reads the server's metadata (RFC 8414), asks the device authorization endpoint for codes (an
RFC 8628 3.1 form POST with requests: neither library sends that request as the RFC says; oauthlib
3.2's DeviceClient.prepare_request_uri puts the parameters in the URL), prints them as one JSON
line, then polls the token endpoint:

- authlib: OAuth2Session.fetch_token with the device grant, as a public client ("none"), then
  refreshes with OAuth2Session.refresh_token;
- oauthlib: DeviceClient.prepare_request_body and parse_request_body_response;

honouring `interval` and `slow_down` (5 s more). Prints the last token response (and the
refreshed one) as one JSON line: {"token", "refreshed", "polls"}.
"""
import json
import sys
import time

import requests

DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'


def main(kind, issuer, client_id, scope):
    meta = requests.get(issuer.rstrip('/') + '/.well-known/oauth-authorization-server', timeout=10).json()
    assert DEVICE_GRANT in meta['grant_types_supported']
    started = requests.post(
        meta['device_authorization_endpoint'], data={'client_id': client_id, 'scope': scope}, timeout=10
    )
    started.raise_for_status()
    device = started.json()
    print(json.dumps(device), flush=True)
    poll = poll_authlib if kind == 'authlib' else poll_oauthlib
    token, refreshed, polls = poll(meta, client_id, device)
    print(json.dumps({'token': token, 'refreshed': refreshed, 'polls': polls}), flush=True)


def poll_authlib(meta, client_id, device):
    from authlib.integrations.base_client.errors import OAuthError
    from authlib.integrations.requests_client import OAuth2Session

    session = OAuth2Session(client_id, token_endpoint_auth_method='none')
    interval, polls = device['interval'], []
    while True:
        time.sleep(interval)
        try:
            token = session.fetch_token(
                meta['token_endpoint'], grant_type=DEVICE_GRANT, device_code=device['device_code']
            )
            break
        except OAuthError as err:
            polls.append(err.error)
            if err.error == 'slow_down':
                interval += 5
            elif err.error != 'authorization_pending':
                raise
    refreshed = session.refresh_token(meta['token_endpoint'], refresh_token=token['refresh_token'])
    return dict(token), dict(refreshed), polls


def poll_oauthlib(meta, client_id, device):
    from oauthlib.oauth2 import DeviceClient
    from oauthlib.oauth2.rfc6749.errors import OAuth2Error

    client = DeviceClient(client_id)
    interval, polls = device['interval'], []
    while True:
        time.sleep(interval)
        body = client.prepare_request_body(device['device_code'], include_client_id=True)
        response = requests.post(
            meta['token_endpoint'],
            data=body,
            headers={'Content-Type': 'application/x-www-form-urlencoded'},
            timeout=10,
        )
        try:
            token = client.parse_request_body_response(response.text)
            break
        except OAuth2Error as err:
            polls.append(err.error)
            if err.error == 'slow_down':
                interval += 5
            elif err.error != 'authorization_pending':
                raise
    return dict(token), None, polls


if __name__ == '__main__':
    main(*sys.argv[1:])
