import { parseDocument } from 'htmlparser2';
import type supertest from 'supertest';
import { expect } from 'vitest';
import type { TestApp } from './app.js';

export interface HtmlForm {
  action: string;
  fields: Record<string, string>;
}

/** The first form of an HTML page: its action and the values of its inputs. */
export function parseForm(html: string): HtmlForm {
  const forms = parseForms(html);
  expect(forms.length).toBeGreaterThan(0);
  return forms[0]!;
}

/** Every form of a page, in order. */
export function parseForms(html: string): HtmlForm[] {
  const doc = parseDocument(html);
  const forms: HtmlForm[] = [];
  const walk = (
    node: { name?: string; attribs?: Record<string, string>; children?: unknown[] },
    form?: HtmlForm,
  ) => {
    let current = form;
    if (node.name === 'form') {
      current = { action: node.attribs?.action ?? '', fields: {} };
      forms.push(current);
    }
    if (current && node.name === 'input' && node.attribs?.name) {
      current.fields[node.attribs.name] = node.attribs.value ?? '';
    }
    for (const child of node.children ?? []) walk(child as typeof node, current);
  };
  walk(doc as unknown as Parameters<typeof walk>[0]);
  return forms;
}

/** Path and query of an absolute URL on the auth server, for the supertest agent. */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/**
 * Signs in at the development provider as a person would: follows the redirect to its login
 * form, submits it, and returns the callback URL it redirects back to.
 */
export async function signInAtProvider(
  providerUrl: string,
  user: string,
  action = 'signin',
): Promise<string> {
  const page = await fetch(providerUrl);
  expect(page.status).toBe(200);
  const form = parseForm(await page.text());
  const body = new URLSearchParams({ ...form.fields, dev_user: user, dev_action: action });
  const answer = await fetch(form.action, { method: 'POST', body, redirect: 'manual' });
  expect(answer.status).toBe(302);
  return answer.headers.get('location')!;
}

/**
 * Runs an authorization request through login at the development provider up to the point the
 * auth server answers the provider's callback: the consent page (200) or a redirect to the client
 * (at once, when this browser is logged in and the application trusted).
 */
export async function authorizeWithLogin(t: TestApp, query: Record<string, string>, user = 'alice') {
  const start = await t.agent.get('/oauth/authorize').query(query);
  let loginLocation: string;
  if (start.status === 200) {
    // The selection page: choose the (only) provider.
    const href = /<a href="([^"]+)">/.exec(start.text)?.[1];
    expect(href).toBeDefined();
    loginLocation = href!.replaceAll('&amp;', '&');
  } else {
    expect(start.status).toBe(302);
    loginLocation = start.headers.location!;
    // Already logged in and trusted: the redirect goes straight back to the client.
    if (!loginLocation.startsWith(t.baseUrl)) return start;
  }
  const toProvider = await t.agent.get(pathOf(loginLocation));
  expect(toProvider.status).toBe(302);
  const callback = await signInAtProvider(toProvider.headers.location!, user);
  return deliverCallback(t.agent, pathOf(callback));
}

/**
 * Delivers the provider's answer to the login callback as a browser would: after a login the
 * server answers 303 to the resumed authorization request (post/redirect/get), which is followed.
 */
export async function deliverCallback(agent: ReturnType<typeof supertest.agent>, path: string) {
  const res = await agent.get(path);
  const location = res.headers.location;
  if (res.status === 303 && location?.endsWith('/oauth/authorize/resume')) return agent.get(pathOf(location));
  return res;
}

/** Answers the consent page shown in `consentPage` with `decision`. */
export async function answerConsent(t: TestApp, consentPage: string, decision: 'allow' | 'deny') {
  const form = parseForm(consentPage);
  return t.agent
    .post(pathOf(form.action))
    .type('form')
    .set('Origin', new URL(t.baseUrl).origin)
    .send({ ...form.fields, decision });
}

/** Code flow up to the redirect with a code, trusting the application if asked. */
export async function obtainCode(t: TestApp, extra: Record<string, string> = {}, user = 'alice') {
  const query = {
    response_type: 'code',
    client_id: t.codeClient.clientId,
    redirect_uri: 'https://client.example/cb',
    state: 'xyz',
    ...extra,
  };
  let res = await authorizeWithLogin(t, query, user);
  if (res.status === 200) res = await answerConsent(t, res.text, 'allow');
  expect([302, 303]).toContain(res.status);
  const location = new URL(res.headers.location!);
  const code = location.searchParams.get('code');
  expect(code).toBeTruthy();
  return { code: code!, location };
}

/** Exchanges a code at the token endpoint with the secret in the body. */
export function exchangeCode(t: TestApp, code: string, extra: Record<string, string> = {}) {
  return t.agent
    .post('/oauth/token')
    .type('form')
    .send({
      grant_type: 'authorization_code',
      code,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
      redirect_uri: 'https://client.example/cb',
      ...extra,
    });
}

/** An HTTP Basic header as RFC 6749 2.3.1 builds it: id and secret form-encoded, then joined. */
export function basicAuth(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** Runs the code flow and exchanges the code: resolves the token response. */
export async function obtainTokens(t: TestApp, extra: Record<string, string> = {}) {
  const { code } = await obtainCode(t, extra);
  const res = await exchangeCode(t, code);
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string; scope?: string };
}

/** A refresh at the token endpoint with the code client's secret in the body. */
export function refreshWith(t: TestApp, refreshToken: string, extra: Record<string, string> = {}) {
  return t.agent
    .post('/oauth/token')
    .type('form')
    .send({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: t.codeClient.clientId,
      client_secret: t.codeClient.clientSecret,
      redirect_uri: 'https://client.example/cb',
      ...extra,
    });
}
