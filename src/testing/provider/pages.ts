import { SERVER_TYPE, SIGNON_TYPE } from '../../login/openid/constants.js';

/** Escapes text for HTML and XML content and double-quoted attributes. */
export function escapeMarkup(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** An XRDS document with one OpenID 2.0 service (OpenID 2.0 section 7.3.2). */
export function xrdsDocument(service: {
  type: 'server' | 'signon';
  endpoint: string;
  localId?: string;
}): string {
  const type = service.type === 'server' ? SERVER_TYPE : SIGNON_TYPE;
  const localId =
    service.localId === undefined ? '' : `\n      <LocalID>${escapeMarkup(service.localId)}</LocalID>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<xrds:XRDS xmlns:xrds="xri://$xrds" xmlns="xri://$xrd*($v*2.0)">
  <XRD>
    <Service priority="0">
      <Type>${type}</Type>
      <URI>${escapeMarkup(service.endpoint)}</URI>${localId}
    </Service>
  </XRD>
</xrds:XRDS>
`;
}

/** The HTML face of an identifier: discovery links in the head (section 7.3.3). */
export function identifierPage(input: {
  title: string;
  endpoint: string;
  localId?: string;
  xrds: string;
}): string {
  const localId =
    input.localId === undefined
      ? ''
      : `\n<link rel="openid2.local_id" href="${escapeMarkup(input.localId)}">`;
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeMarkup(input.title)}</title>
<meta http-equiv="X-XRDS-Location" content="${escapeMarkup(input.xrds)}">
<link rel="openid2.provider" href="${escapeMarkup(input.endpoint)}">${localId}
</head><body><h1>${escapeMarkup(input.title)}</h1>
<p>A development OpenID 2.0 provider. Do not use it in production.</p></body></html>
`;
}

/** The login form: every request field rides along as a hidden input. */
export function loginForm(input: {
  endpoint: string;
  realm: string;
  fields: ReadonlyMap<string, string>;
  users: readonly string[];
  /** A user name the request already fixes (a claimed identifier was requested). */
  fixedUser?: string;
  error?: string;
}): string {
  const hidden = [...input.fields]
    .map(
      ([name, value]) => `<input type="hidden" name="${escapeMarkup(name)}" value="${escapeMarkup(value)}">`,
    )
    .join('\n');
  const options = input.users.map((u) => `<option value="${escapeMarkup(u)}"></option>`).join('');
  const error = input.error === undefined ? '' : `<p role="alert">${escapeMarkup(input.error)}</p>`;
  const user = input.fixedUser ?? input.users[0] ?? '';
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in - development OpenID provider</title></head>
<body><h1>Development OpenID provider</h1>
<p>Sign in to <strong>${escapeMarkup(input.realm)}</strong>. No password: this provider is for development only.</p>
${error}<form method="post" action="${escapeMarkup(input.endpoint)}">
${hidden}
<label>User name <input name="dev_user" list="dev-users" value="${escapeMarkup(user)}" pattern="[A-Za-z0-9._\\-]{1,64}"${input.fixedUser === undefined ? '' : ' readonly'} required></label>
<datalist id="dev-users">${options}</datalist>
<button type="submit" name="dev_action" value="signin">Sign in</button>
<button type="submit" name="dev_action" value="cancel" formnovalidate>Cancel</button>
</form></body></html>
`;
}
