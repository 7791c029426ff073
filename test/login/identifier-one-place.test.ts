/**
 * Issue 18, finding 1: the identifier to log in at comes from exactly one place (the query of
 * `GET /oauth/login`), is checked against the allow-list there, and is the only one any strategy
 * sees, whatever body parsers the host installs. passport-openid reads `req.body` first, so
 * before, a host with a global `express.urlencoded()` let a body name any server.
 */
import express, { type Request } from 'express';
import fc from 'fast-check';
import { Strategy as PassportOpenIdStrategy } from 'passport-openid';
import { Strategy } from 'passport-strategy';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { startCanary, type TestServer } from '../support/openid-servers.js';
import {
  pythonOpenIdAvailability,
  startPythonProvider,
  type PythonProvider,
} from '../support/python-openid.js';

const codeQuery = {
  response_type: 'code',
  client_id: 'code-client',
  redirect_uri: 'https://client.example/cb',
};

/** The host's usual global body parsers, in front of the library's routers. */
const hostParsers = (app: express.Express) => {
  app.use(express.urlencoded({ extended: false }), express.json());
};

const python = pythonOpenIdAvailability();
if (!python.ok && process.env.CI) throw new Error(`python3-openid is required under CI: ${python.reason}`);
const suite = python.ok ? describe : describe.skip;

suite(
  `with passport-openid and a host's global body parsers${python.ok ? '' : ` [NOT RUN: ${python.reason}]`}`,
  () => {
    let op: PythonProvider;
    let canary: TestServer;
    let t: TestApp | undefined;
    beforeAll(async () => {
      op = await startPythonProvider();
      canary = await startCanary();
    });
    afterAll(async () => {
      await op?.close();
      await canary?.close();
    });
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    it.each([
      ['a urlencoded body', 'form'],
      ['a JSON body', 'json'],
    ] as const)(
      'a GET whose %s names another server contacts only the allow-listed provider',
      async (_name, type) => {
        t = await createTestApp(
          (baseUrl) => ({
            providers: [{ name: 'Python OP', identifier: op.identifier }],
            login: {
              strategy: new PassportOpenIdStrategy(
                { returnURL: `${baseUrl}/oauth/login/callback`, realm: `${baseUrl}/` },
                (identifier, done) => done(null, { identifier, provider: 'Python OP' }),
              ),
            },
          }),
          hostParsers,
        );
        await t.agent.get('/oauth/authorize').query(codeQuery);
        const before = canary.connections();
        const res = await t.agent
          .get('/oauth/login')
          .query({ openid_identifier: op.identifier })
          .type(type)
          .send({ openid_identifier: `${canary.url}/anyone` });
        expect(res.status).toBe(302);
        expect(new URL(res.headers.location!).origin).toBe(new URL(op.identifier).origin);
        expect(canary.connections()).toBe(before);
      },
    );
  },
);

/** Records what the strategy sees of the identifier, where passport strategies look for it. */
class RecordingStrategy extends Strategy {
  name = 'recording';
  seen: { query: unknown; body: unknown }[] = [];
  override authenticate(this: RecordingStrategy & { redirect(url: string): void }, req: Request): void {
    this.seen.push({
      query: (req.query as Record<string, unknown>).openid_identifier,
      body: (req.body as Record<string, unknown> | undefined)?.openid_identifier,
    });
    this.redirect('https://login.example/');
  }
}

describe('the identifier a strategy sees is the one the allow-list checked (property)', () => {
  it('for any query, body and host body parsers', async () => {
    const strategy = new RecordingStrategy();
    const parsers = { urlencoded: express.urlencoded({ extended: true }), json: express.json() };
    const installed = { urlencoded: false, json: false };
    const app = await createTestApp({ login: { strategy } }, (host) => {
      host.use((req, res, next) => (installed.urlencoded ? parsers.urlencoded(req, res, next) : next()));
      host.use((req, res, next) => (installed.json ? parsers.json(req, res, next) : next()));
    });
    try {
      const allowed = app.provider.identifier;
      await app.agent.get('/oauth/authorize').query(codeQuery);
      const identifier = fc.oneof(
        fc.constant(allowed),
        fc.constant(`${allowed}x`),
        fc.constant('https://evil.example/'),
        fc.webUrl(),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(identifier, { maxLength: 3 }),
          fc.option(fc.oneof(identifier, fc.array(identifier, { maxLength: 2 }))),
          fc.constantFrom('form', 'json', 'none'),
          fc.boolean(),
          fc.boolean(),
          async (inQuery, inBody, bodyType, urlencoded, json) => {
            installed.urlencoded = urlencoded;
            installed.json = json;
            const query = new URLSearchParams(
              inQuery.map((value): [string, string] => ['openid_identifier', value]),
            );
            let request = app.agent.get(`/oauth/login?${query}`);
            if (bodyType !== 'none' && inBody !== null) {
              request = request.type(bodyType).send({ openid_identifier: inBody });
            }
            const ran = strategy.seen.length;
            const res = await request;
            const accepted = inQuery.length === 1 && inQuery[0] === allowed;
            if (!accepted) {
              expect(res.status).toBe(400);
              expect(strategy.seen.length).toBe(ran);
              return;
            }
            expect(res.status).toBe(302);
            expect(strategy.seen.slice(ran)).toEqual([{ query: allowed, body: allowed }]);
          },
        ),
        { numRuns: 150 },
      );
    } finally {
      await app.close();
    }
  });
});
