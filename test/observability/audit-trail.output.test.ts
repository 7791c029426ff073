/**
 * The audit trail's outputs (issue 41): a stream the host owns (never ended by close), a file
 * reopened after logrotate renamed it, an output that cannot keep up (lines dropped, counted in
 * the trail), an output that fails (logged once, the requests unharmed), and the allow-list that
 * keeps a thrown error or a secret-bearing URL out of a line.
 */
import { mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import supertest from 'supertest';
import express from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emit } from '../../src/events/index.js';
import { createAuthorizationServer, memoryStorage, registerClient, tokenRouter } from '../../src/index.js';
import { auditTrail, AUDIT_EVENT_TYPES } from '../../src/observability/index.js';
import { recordingLogger } from '../support/app.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oob-audit-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A server with one confidential client behind its token endpoint, and a logger that keeps lines. */
async function setUp() {
  const storage = memoryStorage();
  const { clientId, clientSecret } = await registerClient(storage, {
    clientId: 'printer',
    applicationName: 'Printer',
    redirectUri: 'https://printer.example/cb',
    scopes: ['realms'],
  });
  const logger = recordingLogger();
  const server = createAuthorizationServer({
    baseUrl: 'https://auth.example',
    storage,
    providers: [{ name: 'Example ID', identifier: 'https://id.example/' }],
    session: { secret: 'a-session-secret-of-at-least-32-chars!!' },
    scopes: { realms: 'Your realms' },
    logger,
  });
  const agent = supertest(express().use(tokenRouter(server)));
  /** A token request with a wrong secret: one `client.authentication_failed`, a 401. */
  const failLogin = (secret = 'a-wrong-secret-0123456789') =>
    agent
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'x', client_id: clientId, client_secret: secret });
  return { server, logger, failLogin, clientSecret: clientSecret! };
}

const parse = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('auditTrail to a stream', () => {
  it('writes a line per audited event, with its request id, and leaves the stream open at close', async () => {
    const { server, failLogin } = await setUp();
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const audit = auditTrail(server, { stream });
    const res = await failLogin('Wrong-s3cret-value-xyz');
    expect(res.status).toBe(401);
    await audit.close();
    await audit.close(); // idempotent
    expect(stream.writableEnded).toBe(false);
    expect(parse(text)).toEqual([
      {
        at: expect.stringMatching(/Z$/),
        type: 'client.authentication_failed',
        request_id: res.headers['x-request-id'],
        ip: expect.any(String),
        client_id: 'printer',
        client_kind: 'confidential',
        endpoint: 'token',
      },
    ]);
    expect(text).not.toContain('Wrong-s3cret-value-xyz');
    // Closed: nothing more is written.
    await failLogin();
    expect(parse(text)).toHaveLength(1);
  });

  it('writes only the allow-listed fields: never a thrown error, never a URL password or token', async () => {
    const { server } = await setUp();
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const audit = auditTrail(server, { stream }, { types: [...AUDIT_EVENT_TYPES, 'server.error'] });
    emit(server, {
      type: 'server.error',
      endpoint: 'token',
      status: 500,
      error: new Error('db said: password=Hunter2-secret'),
    });
    emit(server, {
      type: 'client.authentication_failed',
      clientId: `https://app:Pa55word-x@app.example/client.json?access_token=Tok3n-secret&${'x'.repeat(400)}`,
      clientKind: 'unknown',
      endpoint: 'token',
    });
    emit(server, {
      type: 'profile.unavailable',
      provider: 'Steam',
      source: 'Steam Web API',
      reason: 'timeout',
      cached: false,
    });
    await audit.close();
    const [error, failed, ...rest] = parse(text);
    expect(error).toEqual({ at: expect.any(String), type: 'server.error', endpoint: 'token', status: 500 });
    expect(failed!.client_id).toMatch(
      /^https:\/\/app:\*\*\*@app\.example\/client\.json\?access_token=\*\*\*&x+…$/,
    );
    expect((failed!.client_id as string).length).toBeLessThanOrEqual(257);
    // Not in the list given.
    expect(rest).toEqual([]);
    for (const secret of ['Hunter2-secret', 'Pa55word-x', 'Tok3n-secret']) expect(text).not.toContain(secret);
  });

  it('refuses an event type that does not exist', async () => {
    const { server } = await setUp();
    expect(() =>
      auditTrail(server, { stream: new PassThrough() }, { types: ['token.isued' as never] }),
    ).toThrow(/no event is named "token.isued"/);
  });

  it('drops lines past maxBufferedBytes, counts them, and says how many once the output caught up', async () => {
    const { server, logger } = await setUp();
    const held: (() => void)[] = [];
    const chunks: string[] = [];
    // An output that takes each line only when the test lets it.
    const slow = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        held.push(() => done());
      },
    });
    const release = async () => {
      for (let round = 0; round < 5; round++) {
        while (held.length > 0) held.shift()!();
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const audit = auditTrail(server, { stream: slow }, { maxBufferedBytes: 10 });
    const login = (userId: string) =>
      emit(server, { type: 'login.succeeded', userId, provider: 'Example ID' });
    login('u1'); // handed to the output, which holds it: the output is now behind
    login('u2'); // dropped
    login('u3'); // dropped
    expect(logger.lines.filter((l) => l.message.includes('behind'))).toHaveLength(1);
    await release();
    login('u4'); // caught up: the count first, then the line
    await release();
    await audit.close();
    const lines = parse(chunks.join(''));
    expect(lines.map((l) => l.user_id ?? `${String(l.type)}:${String(l.count)}`)).toEqual([
      'u1',
      'audit.dropped:2',
      'u4',
    ]);
  });

  it('says at close how many lines were dropped since the last one written', async () => {
    const { server } = await setUp();
    const chunks: string[] = [];
    const held: (() => void)[] = [];
    const slow = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        held.push(() => done());
      },
    });
    const audit = auditTrail(server, { stream: slow }, { maxBufferedBytes: 10 });
    for (const userId of ['u1', 'u2', 'u3', 'u4'])
      emit(server, { type: 'login.succeeded', userId, provider: 'Example ID' });
    // No event after the burst: close() is the last chance to say the three were dropped.
    const closing = audit.close();
    for (let round = 0; round < 5; round++) {
      while (held.length > 0) held.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await closing;
    const lines = parse(chunks.join(''));
    expect(lines.map((l) => l.user_id ?? `${String(l.type)}:${String(l.count)}`)).toEqual([
      'u1',
      'audit.dropped:3',
    ]);
  });

  it('close() resolves once the lines handed over are written, however slow the output', async () => {
    const { server } = await setUp();
    const held: (() => void)[] = [];
    const slow = new Writable({ write: (_chunk, _encoding, done) => void held.push(() => done()) });
    const audit = auditTrail(server, { stream: slow });
    emit(server, { type: 'login.succeeded', userId: 'u1', provider: 'Example ID' });
    let closed = false;
    const closing = audit.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    held.shift()!();
    await closing;
    expect(closed).toBe(true);
  });

  it('says once that a stream its owner ended takes no more lines', async () => {
    const { server, logger } = await setUp();
    const stream = new PassThrough();
    stream.resume();
    const audit = auditTrail(server, { stream });
    stream.end();
    for (const userId of ['u1', 'u2'])
      emit(server, { type: 'login.succeeded', userId, provider: 'Example ID' });
    await audit.close();
    expect(logger.lines.map((l) => l.message)).toEqual([
      'audit trail: cannot write; lines are dropped (and counted) until it is reopened',
    ]);
  });

  it('logs a failing output once; the requests go on, and later lines are dropped', async () => {
    const { server, logger, failLogin } = await setUp();
    const broken = new Writable({ write: (_chunk, _encoding, done) => done(new Error('EPIPE')) });
    const audit = auditTrail(server, { stream: broken });
    for (let i = 0; i < 3; i++) expect((await failLogin()).status).toBe(401);
    await audit.close();
    expect(logger.lines.filter((l) => l.message.startsWith('audit trail'))).toEqual([
      {
        level: 'error',
        message: 'audit trail: cannot write; lines are dropped (and counted) until it is reopened',
        details: { error: expect.any(Error) },
      },
    ]);
  });
});

describe('auditTrail to a file', () => {
  it('appends with mode 0600, and after logrotate renamed it, reopen() starts a new file', async () => {
    const { server, failLogin } = await setUp();
    const file = join(dir, 'audit.jsonl');
    const audit = auditTrail(server, { file });
    const first = await failLogin();
    renameSync(file, `${file}.1`); // logrotate, without copytruncate
    const second = await failLogin(); // still to the renamed file: its descriptor is open
    audit.reopen(); // postrotate: kill -HUP
    const third = await failLogin();
    await audit.close();
    const ids = (text: string) => parse(text).map((l) => l.request_id);
    expect(ids(readFileSync(`${file}.1`, 'utf8'))).toEqual(
      [first, second].map((r) => r.headers['x-request-id']),
    );
    expect(ids(readFileSync(file, 'utf8'))).toEqual([third.headers['x-request-id']]);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // Appended to, never truncated: a second trail on the same file adds its lines after these.
    const again = auditTrail(server, { file });
    await failLogin();
    await again.close();
    expect(parse(readFileSync(file, 'utf8'))).toHaveLength(2);
  });

  it('throws at once when the file cannot be opened, rather than at the first login', async () => {
    const { server } = await setUp();
    expect(() => auditTrail(server, { file: join(dir, 'no-such-folder', 'audit.jsonl') })).toThrow(/ENOENT/);
  });

  it('keeps writing to the open file when reopen() cannot open the name again, and says so', async () => {
    const { server, logger, failLogin } = await setUp();
    const folder = join(dir, 'logs');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(folder);
    const file = join(folder, 'audit.jsonl');
    const audit = auditTrail(server, { file });
    renameSync(folder, join(dir, 'moved'));
    audit.reopen();
    await failLogin();
    await audit.close();
    expect(parse(readFileSync(join(dir, 'moved', 'audit.jsonl'), 'utf8'))).toHaveLength(1);
    expect(logger.lines.map((l) => l.message)).toContain('audit trail: cannot reopen; writing on');
  });
});
