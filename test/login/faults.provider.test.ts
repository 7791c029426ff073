/**
 * An OpenID provider that is down or does not answer: the login ends within a bound set by
 * `login.timeoutMs` with a page that says so and offers to try again or to choose another
 * provider. Nothing is redirected to the client.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevelopmentProvider, type RunningDevelopmentProvider } from '../../src/testing/index.js';
import { CODE_REDIRECT, createTestApp, type TestApp } from '../support/app.js';
import { pathOf, signInAtProvider } from '../support/flow.js';
import { startSilentServer, type TestServer } from '../support/openid-servers.js';

const TIMEOUT_MS = 300;

let t: TestApp;
let op: RunningDevelopmentProvider;
let silent: TestServer;
let refusedUrl: string;
const warnings: { message: string; details: Record<string, unknown> | undefined }[] = [];
const hooked: { status: number; route: string; requestId: string }[] = [];

beforeAll(async () => {
  op = await startDevelopmentProvider();
  silent = await startSilentServer();
  refusedUrl = `http://127.0.0.1:${await closedPort()}/`;
  t = await createTestApp({
    login: { timeoutMs: TIMEOUT_MS },
    logger: { warn: (message, details) => warnings.push({ message, details }), error: () => {} },
    onError: (_error, context) => hooked.push(context),
    providers: [
      { name: 'Development provider', identifier: op.identifier },
      { name: 'Silent ID', identifier: `${silent.url}/` },
      { name: 'Gone ID', identifier: refusedUrl },
    ],
  });
});

afterAll(async () => {
  await t?.close();
  await silent?.close();
  await op?.close().catch(() => undefined);
});

const authorize = (opIdentifier: string) =>
  t.agent.get('/oauth/authorize').query({
    response_type: 'code',
    client_id: t.codeClient.clientId,
    redirect_uri: CODE_REDIRECT,
    state: 's',
    opIdentifier,
  });

const links = (html: string) =>
  Object.fromEntries(
    [...html.matchAll(/<a href="([^"]+)">([^<]+)<\/a>/g)].map(([, href, label]) => [
      label!,
      href!.replaceAll('&amp;', '&'),
    ]),
  );

async function loginPage(identifier: string) {
  const start = await authorize(identifier);
  expect(start.status).toBe(302);
  const started = performance.now();
  const page = await t.agent.get(pathOf(start.headers.location!));
  return { page, ms: performance.now() - started };
}

function expectProviderPage(page: { status: number; text: string; headers: Record<string, string> }) {
  expect(page.status).toBe(502);
  expect(page.headers.location).toBeUndefined();
  expect(page.text).toContain('Your OpenID provider is not answering');
  expect(page.text).toContain('Try again');
  expect(page.text).toContain('Choose another provider');
}

describe('provider down or slow', () => {
  it('a provider that never answers: a page within the deadline, with try again and choose another', async () => {
    const { page, ms } = await loginPage(`${silent.url}/`);
    expectProviderPage(page);
    expect(page.text).toContain('Silent ID could not be reached.');
    // Reported once, as an outage, with the request id the page carries.
    expect(warnings.map((w) => w.message)).toEqual([
      `OpenID provider unreachable: Request to ${silent.url} refused (timeout): no complete answer within ${TIMEOUT_MS} ms`,
    ]);
    expect(hooked).toEqual([
      { status: 502, route: 'GET /oauth/login', requestId: page.headers['x-request-id'] },
    ]);
    // Discovery is at most two requests (the identifier, then its XRDS), each within timeoutMs.
    expect(ms).toBeLessThan(2 * TIMEOUT_MS + 1000);
    const { 'Try again': retry, 'Choose another provider': another } = links(page.text);
    expect(new URL(retry!).searchParams.get('openid_identifier')).toBe(`${silent.url}/`);

    // "Choose another provider" shows the selection page; the next provider works.
    const selection = await t.agent.get(pathOf(another!));
    expect(selection.status).toBe(200);
    const dev = links(selection.text)['Development provider']!;
    const toProvider = await t.agent.get(pathOf(dev));
    expect(toProvider.status).toBe(302);
    expect(toProvider.headers.location).toContain(new URL(op.url).host);
  });

  it('a provider that refuses connections: the same page, at once', async () => {
    const { page, ms } = await loginPage(refusedUrl);
    expectProviderPage(page);
    expect(page.text).toContain('Gone ID could not be reached.');
    expect(ms).toBeLessThan(1000);
    // The log says why: the connection was refused (issue 29), not only that it failed.
    expect(warnings.at(-1)?.message).toBe(
      `OpenID provider unreachable: connect ECONNREFUSED ${new URL(refusedUrl).host}`,
    );
  });

  it('a provider that goes down during the login: the callback shows the page, and retries there', async () => {
    const dying = await startDevelopmentProvider();
    const local = await createTestApp({
      login: { timeoutMs: TIMEOUT_MS },
      providers: [
        { name: 'Dying ID', identifier: dying.identifier },
        { name: 'Development provider', identifier: op.identifier },
      ],
    });
    try {
      const start = await local.agent.get('/oauth/authorize').query({
        response_type: 'code',
        client_id: local.codeClient.clientId,
        redirect_uri: CODE_REDIRECT,
        opIdentifier: dying.identifier,
      });
      const toProvider = await local.agent.get(pathOf(start.headers.location!));
      const callback = await signInAtProvider(toProvider.headers.location!, 'alice');
      await dying.close();
      const started = performance.now();
      const page = await local.agent.get(pathOf(callback));
      expect(performance.now() - started).toBeLessThan(3 * TIMEOUT_MS + 1000);
      expectProviderPage(page);
      expect(new URL(links(page.text)['Try again']!).searchParams.get('openid_identifier')).toBe(
        dying.identifier,
      );
    } finally {
      await local.close();
    }
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
