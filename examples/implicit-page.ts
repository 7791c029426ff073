/**
 * The implicit-flow page of the client application (RFC 6749 4.2): the browser gets the access
 * token in the URL fragment and calls the API itself, cross-origin.
 */
import { html, type Markup } from './html.js';

/** The page body; the values the script needs travel in data attributes, escaped. */
export function implicitPage(config: {
  authorization: string;
  clientId: string;
  redirectUri: string;
  realmsUrl: string;
}): Markup {
  return html`<h1>Implicit flow</h1>
    <p>
      This page gets an access token straight from the authorization server, in the URL fragment, and calls
      the API from the browser. There is no client secret and no refresh token: when the token expires, the
      user logs in again.
    </p>
    <div
      id="config"
      data-authorization="${config.authorization}"
      data-client-id="${config.clientId}"
      data-redirect-uri="${config.redirectUri}"
      data-realms-url="${config.realmsUrl}"
    ></div>
    <button id="login" type="button">Log in (implicit)</button>
    <h2>Result</h2>
    <ul id="realms"></ul>
    <pre id="out">Not logged in yet.</pre>`;
}

/**
 * The page's only script, allowed by a CSP nonce. It writes with textContent only, so nothing the
 * fragment or the API returns can become markup.
 */
export function implicitScript(nonce: string): Markup {
  // A module script runs once the document is parsed: it sits in the head, before #config exists.
  return html`<script type="module" nonce="${nonce}">
    const config = document.getElementById('config').dataset;
    const out = document.getElementById('out');
    const show = (text) => {
      out.textContent = text;
    };

    document.getElementById('login').addEventListener('click', () => {
      // state ties the answer to this browser (RFC 6749 10.12); the server requires it for implicit.
      const state = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
        b.toString(16).padStart(2, '0'),
      ).join('');
      sessionStorage.setItem('implicitState', state);
      const url = new URL(config.authorization);
      url.search = new URLSearchParams({
        response_type: 'token',
        client_id: config.clientId,
        redirect_uri: config.redirectUri,
        state,
      });
      location.assign(url.href);
    });

    const answer = new URLSearchParams(location.hash.slice(1));
    // Take the token out of the address bar and the history at once.
    if (location.hash) history.replaceState(null, '', location.pathname);
    const expected = sessionStorage.getItem('implicitState');
    sessionStorage.removeItem('implicitState');
    if (answer.has('error')) {
      show(
        'The authorization server answered ' +
          answer.get('error') +
          ': ' +
          (answer.get('error_description') || ''),
      );
    } else if (answer.has('access_token')) {
      if (!expected || answer.get('state') !== expected) {
        show('The state does not match a login started here; the token is ignored.');
      } else {
        show(
          'Access token received; it expires in ' +
            answer.get('expires_in') +
            ' s. Calling GET /v1/realms...',
        );
        fetch(config.realmsUrl, { headers: { Authorization: 'Bearer ' + answer.get('access_token') } })
          .then(async (res) => {
            if (!res.ok)
              return show(
                'GET /v1/realms answered ' + res.status + ': ' + res.headers.get('WWW-Authenticate'),
              );
            const body = await res.json();
            show('Signed in as ' + body.owner + '. Realms:');
            for (const realm of body.realms) {
              const item = document.createElement('li');
              item.textContent = realm.name + ' (' + realm.id + ')';
              document.getElementById('realms').append(item);
            }
          })
          .catch((err) => show('The API could not be reached: ' + err));
      }
    }
  </script>`;
}
