import { parseDocument } from 'htmlparser2';
import supertest from 'supertest';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { pathOf } from './flow.js';
import { rawRequest } from './raw-http.js';

export type Agent = ReturnType<typeof supertest.agent>;

export const codeQuery = {
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: 'https://client.example/cb',
  state: 'st-code',
};

export const implicitQuery = {
  response_type: 'token',
  client_id: 'implicit-client',
  redirect_uri: 'https://spa.example/app/',
  state: 'st-implicit',
};

/** The links of the provider selection page, by provider name. */
export function selectionLinks(html: string): Map<string, string> {
  const links = new Map<string, string>();
  const walk = (node: { name?: string; attribs?: Record<string, string>; children?: unknown[] }) => {
    if (node.name === 'a' && node.attribs?.href) {
      const text = textOf(node).trim();
      links.set(text, node.attribs.href);
    }
    for (const child of node.children ?? []) walk(child as typeof node);
  };
  walk(parseDocument(html) as unknown as Parameters<typeof walk>[0]);
  return links;
}

function textOf(node: { data?: string; children?: unknown[] }): string {
  return (node.data ?? '') + (node.children ?? []).map((c) => textOf(c as typeof node)).join('');
}

/**
 * A browser starting an authorization: the selection page, a click on `providerName`, and the
 * auth server's redirect to the provider. Resolves the URL the browser is sent to.
 */
export async function startLogin(
  t: TestApp,
  agent: Agent,
  providerName: string,
  query: Record<string, string> = codeQuery,
): Promise<string> {
  const selection = await agent.get('/oauth/authorize').query(query);
  expect(selection.status).toBe(200);
  const href = selectionLinks(selection.text).get(providerName);
  expect(href, `no link to ${providerName} on the selection page`).toBeDefined();
  const login = await agent.get(pathOf(new URL(href!, t.baseUrl).href));
  expect(login.status, login.text).toBe(302);
  return login.headers.location!;
}

/** The browser at the provider: it approves at once and redirects back; resolves that URL. */
export async function atProvider(redirectUrl: string): Promise<URL> {
  const res = await rawRequest(redirectUrl);
  expect(res.status, res.body).toBe(302);
  return new URL(res.location!);
}

/** The whole login up to the provider's answer: resolves the (not yet delivered) callback URL. */
export async function loginCallback(
  t: TestApp,
  agent: Agent,
  providerName: string,
  query: Record<string, string> = codeQuery,
): Promise<URL> {
  const callback = await atProvider(await startLogin(t, agent, providerName, query));
  expect(callback.origin + callback.pathname).toBe(`${t.baseUrl}/oauth/login/callback`);
  return callback;
}

/**
 * Asserts a refusal page: 400, HTML, the message, a way to try again (for a failed login), no
 * redirect and no trace of internals.
 */
export function expectRefusalPage(
  res: { status: number; text: string; headers: Record<string, string> },
  message: string,
  { retry = true, status = 400 }: { retry?: boolean; status?: number } = {},
) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  expect(res.text).toContain(message);
  if (retry) expect(res.text).toContain('/oauth/authorize/resume');
  expect(res.text).not.toMatch(/at \w+ \(|node_modules|Error:/);
  expect(res.headers.location).toBeUndefined();
}
