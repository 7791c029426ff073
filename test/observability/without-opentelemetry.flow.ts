/**
 * Run by test/observability/without-opentelemetry.test.ts in a process of its own, under tsx,
 * where `@opentelemetry/*` cannot be resolved (an ESM resolve hook and the CommonJS resolver both
 * refuse it, and note each request). With every tracing channel subscribed, so that the traced
 * paths run, it makes a login's discovery call and a token request, then calls `openTelemetry()`.
 * Prints what was asked for and what the server answered, as JSON.
 */
import { tracingChannel } from 'node:diagnostics_channel';
import Module, { register } from 'node:module';
import type { AddressInfo } from 'node:net';
import { MessageChannel } from 'node:worker_threads';

const requested: string[] = [];
const { port1, port2 } = new MessageChannel();
port1.on('message', (specifier: string) => void requested.push(`import ${specifier}`));
port1.unref();
const hooks = `
  let port;
  export function initialize(data) { port = data.port; }
  export async function resolve(specifier, context, next) {
    if (specifier.startsWith('@opentelemetry/')) {
      port.postMessage(specifier);
      throw Object.assign(new Error("Cannot find package '" + specifier + "'"), { code: 'ERR_MODULE_NOT_FOUND' });
    }
    return next(specifier, context);
  }`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`, {
  data: { port: port2 },
  transferList: [port2],
});
const cjs = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
const resolveFilename = cjs._resolveFilename;
cjs._resolveFilename = function (request: string, ...rest: unknown[]) {
  if (request.startsWith('@opentelemetry/')) {
    requested.push(`require ${request}`);
    throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' });
  }
  return resolveFilename.call(this, request, ...rest);
};
/** Requests arrive from the hooks' thread by message: let them. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 200));

const { default: express } = await import('express');
const { authorizeRouter, createAuthorizationServer, memoryStorage, registerClient, tokenRouter } =
  await import('../../src/index.js');
const { startDevelopmentProvider } = await import('../../src/testing/index.js');
const { openTelemetry, TRACE_NAMES } = await import('../../src/observability/index.js');

let traced = 0;
for (const name of TRACE_NAMES) {
  tracingChannel(`openid-oauth-bridge:${name}`).subscribe({
    start: () => void traced++,
    end: () => {},
    asyncStart: () => {},
    asyncEnd: () => {},
    error: () => {},
  });
}

const provider = await startDevelopmentProvider();
const app = express();
const http = app.listen(0, '127.0.0.1');
await new Promise((resolve) => http.once('listening', resolve));
const baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
const storage = memoryStorage();
const client = await registerClient(storage, {
  clientId: 'app',
  applicationName: 'App',
  redirectUri: 'https://client.example/cb',
  scopes: ['profile'],
});
const server = createAuthorizationServer({
  baseUrl,
  storage,
  providers: [{ name: 'Dev', identifier: provider.identifier }],
  session: { secret: 'a session secret that is long enough here' },
  logger: { warn: () => {}, error: () => {} },
});
app.use(authorizeRouter(server), tokenRouter(server));

const statuses: number[] = [];
const selection = await fetch(
  `${baseUrl}/oauth/authorize?response_type=code&client_id=app&redirect_uri=${encodeURIComponent('https://client.example/cb')}`,
);
statuses.push(selection.status);
const cookie = selection.headers
  .getSetCookie()
  .map((c) => c.split(';')[0])
  .join('; ');
const link = /<a href="([^"]+)">/.exec(await selection.text())![1]!.replaceAll('&amp;', '&');
const login = await fetch(new URL(link, baseUrl), { headers: { cookie }, redirect: 'manual' });
statuses.push(login.status);
const token = await fetch(`${baseUrl}/oauth/token`, {
  method: 'POST',
  body: new URLSearchParams({
    grant_type: 'authorization_code',
    code: 'not-a-code',
    redirect_uri: 'https://client.example/cb',
    client_id: client.clientId,
    client_secret: client.clientSecret!,
  }),
});
statuses.push(token.status);
await settled();
const beforeOpenTelemetry = [...requested];
const openTelemetryError = await openTelemetry().then(
  () => null,
  (err: Error) => err.message,
);
await settled();
http.close();
await provider.close();
console.log(
  JSON.stringify({
    statuses,
    traced,
    beforeOpenTelemetry,
    openTelemetryError,
    afterOpenTelemetry: requested.slice(beforeOpenTelemetry.length),
  }),
);
