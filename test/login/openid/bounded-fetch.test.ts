import { afterEach, describe, expect, it } from 'vitest';
import { boundedFetch, FetchRefusedError, type FetchRefusalReason } from '../../../src/net/bounded-fetch.js';
import {
  startEndlessServer,
  startServer,
  startSilentServer,
  type TestServer,
} from '../../support/openid-servers.js';

const servers: TestServer[] = [];
async function serve(server: Promise<TestServer>): Promise<TestServer> {
  servers.push(await server);
  return servers.at(-1)!;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const anyUrl = () => true;

async function expectRefusal(
  promise: Promise<unknown>,
  reason: FetchRefusalReason,
): Promise<FetchRefusedError> {
  const err = await promise.then(
    () => expect.fail(`expected a ${reason} refusal`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FetchRefusedError);
  expect((err as FetchRefusedError).reason).toBe(reason);
  return err as FetchRefusedError;
}

describe('boundedFetch', () => {
  it('returns status, headers and body', async () => {
    const server = await serve(startServer((_req, res) => res.writeHead(201, { 'x-a': 'b' }).end('héllo')));
    const res = await boundedFetch(new URL(`${server.url}/x`), {
      timeoutMs: 1000,
      maxBytes: 100,
      allowUrl: anyUrl,
    });
    expect(res).toMatchObject({ status: 201, body: 'héllo' });
    expect(res.headers.get('x-a')).toBe('b');
  });

  it('ends a request to a server that never answers at the deadline', async () => {
    const server = await serve(startSilentServer());
    const started = Date.now();
    await expectRefusal(
      boundedFetch(new URL(server.url), { timeoutMs: 300, maxBytes: 100, allowUrl: anyUrl }),
      'timeout',
    );
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('ends a trickling body at the deadline, which covers body reading', async () => {
    const server = await serve(startEndlessServer('x', 20));
    const started = Date.now();
    await expectRefusal(
      boundedFetch(new URL(server.url), { timeoutMs: 300, maxBytes: 1e9, allowUrl: anyUrl }),
      'timeout',
    );
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('ends an endless body at the size cap', async () => {
    const server = await serve(startEndlessServer('x'.repeat(16 * 1024), 1));
    const started = Date.now();
    await expectRefusal(
      boundedFetch(new URL(server.url), { timeoutMs: 5000, maxBytes: 64 * 1024, allowUrl: anyUrl }),
      'too_large',
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a declared Content-Length over the cap before reading', async () => {
    const server = await serve(
      startServer((_req, res) => res.writeHead(200, { 'content-length': '1000' }).end('y'.repeat(1000))),
    );
    await expectRefusal(
      boundedFetch(new URL(server.url), { timeoutMs: 1000, maxBytes: 10, allowUrl: anyUrl }),
      'too_large',
    );
  });

  it('follows allowed redirects, up to maxRedirects', async () => {
    const server = await serve(
      startServer((req, res) => {
        const n = Number(req.url!.slice(1));
        if (n > 0) res.writeHead(302, { location: `/${n - 1}` }).end();
        else res.end('arrived');
      }),
    );
    const init = { timeoutMs: 1000, maxBytes: 100, allowUrl: anyUrl, maxRedirects: 2 };
    const res = await boundedFetch(new URL(`${server.url}/2`), init);
    expect(res).toMatchObject({ body: 'arrived', url: new URL(`${server.url}/0`) });
    await expectRefusal(boundedFetch(new URL(`${server.url}/3`), init), 'bad_status');
    await expectRefusal(
      boundedFetch(new URL(`${server.url}/1`), { ...init, maxRedirects: undefined }),
      'bad_status',
    );
  });

  it('refuses a redirect off the allow-list without requesting its target', async () => {
    const target = await serve(startServer());
    const origin = await serve(
      startServer((_req, res) => res.writeHead(302, { location: `${target.url}/secret` }).end()),
    );
    const allowUrl = (u: URL) => u.origin === origin.url;
    await expectRefusal(
      boundedFetch(new URL(origin.url), { timeoutMs: 1000, maxBytes: 100, allowUrl, maxRedirects: 3 }),
      'not_allowed',
    );
    expect(target.hits()).toBe(0);
  });

  it('refuses non-http schemes, credentials and disallowed first URLs', async () => {
    const server = await serve(startServer());
    const init = { timeoutMs: 1000, maxBytes: 100, allowUrl: anyUrl, maxRedirects: 1 };
    for (const url of [
      'file:///etc/passwd',
      'data:text/plain,hi',
      `http://user:pw@${new URL(server.url).host}/`,
    ]) {
      await expectRefusal(boundedFetch(new URL(url), init), 'not_allowed');
    }
    await expectRefusal(boundedFetch(new URL(server.url), { ...init, allowUrl: () => false }), 'not_allowed');
    const redirectToFile = await serve(
      startServer((_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end()),
    );
    await expectRefusal(boundedFetch(new URL(redirectToFile.url), init), 'not_allowed');
    expect(server.hits()).toBe(0);
  });

  it('reports an unreachable server as network, naming only the origin', async () => {
    const server = await serve(startServer());
    const url = new URL(`${server.url}/path?secret=s3cr3t`);
    await server.close();
    const err = await expectRefusal(
      boundedFetch(url, { timeoutMs: 1000, maxBytes: 100, allowUrl: anyUrl }),
      'network',
    );
    expect(err.message).not.toContain('s3cr3t');
    expect(err.message).not.toContain('/path');
  });
});
