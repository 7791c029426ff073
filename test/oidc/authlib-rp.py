"""A relying party written with Authlib (Debian's python3-authlib), used unmodified.

    authlib-rp.py start ISSUER CLIENT_ID REDIRECT_URI
        prints {"url", "state", "nonce", "verifier"}: the authorization request, PKCE S256.
    authlib-rp.py finish ISSUER CLIENT_ID CLIENT_SECRET REDIRECT_URI CALLBACK STATE NONCE VERIFIER
        exchanges the code, validates the ID token against the JWKS (signature, iss, aud,
        exp, nonce) and reads UserInfo; prints {"claims", "userinfo"}.

Everything comes from the provider's discovery document.
"""
import json
import sys

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.common.security import generate_token
from authlib.oauth2.rfc7636 import create_s256_code_challenge


def metadata(issuer):
    response = requests.get(issuer.rstrip('/') + '/.well-known/openid-configuration', timeout=10)
    response.raise_for_status()
    document = response.json()
    assert document['issuer'] == issuer, document['issuer']
    return document


def start(issuer, client_id, redirect_uri):
    meta = metadata(issuer)
    verifier = generate_token(64)
    nonce = generate_token(20)
    session = OAuth2Session(client_id, redirect_uri=redirect_uri, scope='openid profile')
    url, state = session.create_authorization_url(
        meta['authorization_endpoint'],
        nonce=nonce,
        code_challenge=create_s256_code_challenge(verifier),
        code_challenge_method='S256',
    )
    print(json.dumps({'url': url, 'state': state, 'nonce': nonce, 'verifier': verifier}))


def finish(issuer, client_id, client_secret, redirect_uri, callback, state, nonce, verifier):
    meta = metadata(issuer)
    session = OAuth2Session(
        client_id,
        client_secret,
        redirect_uri=redirect_uri,
        state=state,
        token_endpoint_auth_method='client_secret_basic',
    )
    token = session.fetch_token(meta['token_endpoint'], authorization_response=callback, code_verifier=verifier)
    keys = JsonWebKey.import_key_set(requests.get(meta['jwks_uri'], timeout=10).json())
    claims = jwt.decode(
        token['id_token'],
        keys,
        claims_options={
            'iss': {'essential': True, 'value': issuer},
            'aud': {'essential': True, 'value': client_id},
            'nonce': {'essential': True, 'value': nonce},
            'exp': {'essential': True},
            'sub': {'essential': True},
        },
    )
    claims.validate()
    userinfo = session.get(meta['userinfo_endpoint'])
    userinfo.raise_for_status()
    print(json.dumps({'claims': dict(claims), 'userinfo': userinfo.json()}))


if __name__ == '__main__':
    command, *args = sys.argv[1:]
    {'start': start, 'finish': finish}[command](*args)
