/**
 * Runs an example the way its README line does (`npx tsx --tsconfig examples/tsconfig.json …`,
 * here through Node with tsx's loader) and drives the code flow against it as a browser and a
 * client would: the development provider for the login, a cookie jar, the consent form, the token
 * endpoint and the protected API.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import { Browser, firstForm, signInAtDevelopmentProvider } from '../support/browser.js';

export const ROOT = join(import.meta.dirname, '..', '..');
const TSCONFIG = join(ROOT, 'examples', 'tsconfig.json');

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface RunningExample {
  child: ChildProcess;
  /** Everything printed so far, stdout and stderr. */
  output(): string;
  /** Resolves the first match of `pattern` in the output, waiting for it (or the exit). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then the exit code (null when killed). */
  stop(): Promise<number | null>;
  exited: Promise<number | null>;
}

export function runExample(file: string, env: Record<string, string>): RunningExample {
  return runProgram(file, ['--import', 'tsx', join(ROOT, 'examples', file)], ROOT, {
    TSX_TSCONFIG_PATH: TSCONFIG,
    ...env,
  });
}

/**
 * Runs `node <args>` in `cwd` (`file` names it in messages), as `runExample` does; a variable
 * set to `undefined` in `env` is removed from the inherited environment.
 */
export function runProgram(
  file: string,
  args: string[],
  cwd: string,
  env: Record<string, string | undefined>,
): RunningExample {
  const child = spawn(process.execPath, args, {
    cwd,
    env: Object.fromEntries(
      Object.entries({ ...process.env, ...env }).filter(([, value]) => value !== undefined),
    ),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const wake of waiters) wake();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    output: () => output,
    exited,
    async waitFor(pattern, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = output.match(pattern);
        if (match) return match;
        if (child.exitCode !== null) throw new Error(`${file} exited ${child.exitCode}:\n${output}`);
        if (Date.now() > deadline)
          throw new Error(`${file}: no ${pattern} within ${timeoutMs} ms:\n${output}`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
          setTimeout(wake, 200);
        });
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface CodeFlow {
  baseUrl: string;
  /** Where to send the requests (the app's own address; `baseUrl` may say `localhost`). */
  origin: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  scope: string;
  providerIdentifier: string;
  user: string;
  /** The user has consented before: no consent page, straight back to the client. */
  consentRemembered?: boolean;
}

/**
 * The authorization code grant, end to end: authorize, log in at the development provider,
 * consent, exchange the code, call the API. Resolves the API's JSON answer and the instances
 * (`X-Instance`) that answered, when the app says.
 */
export async function runCodeFlow(flow: CodeFlow, apiPath: string) {
  const browser = new Browser(flow.baseUrl);
  const answeredBy = new Set<string>();
  const send = async (url: string, init?: RequestInit) => {
    const res = await browser.request(flow.origin, url, init);
    const instance = res.headers.get('x-instance');
    if (instance) answeredBy.add(instance);
    return res;
  };
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: flow.clientId,
    redirect_uri: flow.redirectUri,
    scope: flow.scope,
    state: 'state-1',
    opIdentifier: flow.providerIdentifier,
  });
  /** Follows the app's own redirects; stops at a page or at a redirect off the app. */
  const follow = async (url: string) => {
    let res = await send(url);
    let location = res.headers.get('location');
    while (location && new URL(location, flow.baseUrl).origin === new URL(flow.baseUrl).origin) {
      res = await send(location);
      location = res.headers.get('location');
    }
    return { res, location };
  };
  const toProvider = await follow(`/oauth/authorize?${query}`);
  expect(toProvider.location, await toProvider.res.text()).toMatch(/^http/);
  const callback = await signInAtDevelopmentProvider(toProvider.location!, flow.user);
  let { res, location } = await follow(callback);
  if (flow.consentRemembered) {
    expect(res.status).toBe(302); // no consent page this time
  } else {
    expect(res.status).toBe(200); // the consent page
    const form = firstForm(await res.text());
    expect(form).not.toBeNull();
    res = await send(form!.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(flow.baseUrl).origin },
      body: new URLSearchParams({ ...form!.fields, decision: 'allow' }),
    });
    expect(res.status).toBe(303); // to the client's redirect URI, as a GET
    location = res.headers.get('location');
  }
  const back = new URL(location!);
  expect(back.origin + back.pathname).toBe(flow.redirectUri);
  expect(back.searchParams.get('state')).toBe('state-1');
  const code = back.searchParams.get('code');
  expect(code).toBeTruthy();

  const token = await send('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: flow.redirectUri,
      client_id: flow.clientId,
      client_secret: flow.clientSecret,
    }),
  });
  const tokens = (await token.json()) as { access_token?: string; refresh_token?: string };
  expect(token.status, JSON.stringify(tokens)).toBe(200);
  expect(tokens.refresh_token).toBeTruthy();
  const api = await send(apiPath, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect(api.status).toBe(200);
  const unauthenticated = await send(apiPath);
  expect(unauthenticated.status).toBe(401);
  return { body: (await api.json()) as Record<string, unknown>, answeredBy };
}
