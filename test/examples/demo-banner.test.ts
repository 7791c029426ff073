import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { startDemo } from '../support/demo-process.js';
import { POSTGRES_URL, dropSchema, postgresAvailability, uniqueSchema } from '../support/databases.js';

/**
 * The demo's startup banner never prints a database password (issue 29): a PostgreSQL URL, which
 * may carry one in its userinfo or as `?password=`, is named by its kind only. On the machine's
 * PostgreSQL (required under CI).
 */
const postgres = await postgresAvailability();
const schema = uniqueSchema('demo_banner');
afterAll(() => (postgres.ok ? dropSchema(schema) : undefined));

it.skipIf(!postgres.ok)(
  `the demo's banner does not show a PostgreSQL URL's password${postgres.ok ? '' : ' (PostgreSQL not running)'}`,
  async () => {
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('schema', schema);
    // Trust auth ignores the password; the banner must not show it.
    url.searchParams.set('password', 'Banner-s3cret');
    const demo = await startDemo({ DATABASE_URL: url.href });
    try {
      expect(demo.output()).toContain('Database');
      expect(demo.output()).toContain('from DATABASE_URL (not shown');
      expect(demo.output()).not.toContain('Banner-s3cret');
    } finally {
      await demo.stop();
    }
  },
  60_000,
);

const dir = mkdtempSync(join(tmpdir(), 'oob-demo-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The demo's signing keys can be rotated with the CLI, as docs/openid-connect.md says (issue 38):
 * its banner prints the command, with the secret the demo sealed them with, and that command,
 * run as printed (from the repository's root, where the demo keeps .data), rotates them.
 */
it("the demo's banner says how to rotate its signing keys, and that command works", async () => {
  const databaseUrl = `sqlite:${join(dir, 'demo.db')}`;
  // The secret comes from the file the banner names, not from this environment.
  const env = { ...process.env };
  delete env.OIDC_KEY_SECRET;
  const demo = await startDemo({ DATABASE_URL: databaseUrl });
  let command: string | undefined;
  try {
    // The server makes its first keys when it first needs them.
    expect((await fetch(`${demo.serverUrl}/oauth/jwks`)).status).toBe(200);
    command = /^ {2}(OIDC_KEY_SECRET=.* npm run cli -- .* keys rotate)$/m.exec(demo.output())?.[1];
    expect(command, demo.output()).toBe(
      `OIDC_KEY_SECRET=$(cat .data/demo-oidc-key-secret) npm run cli -- --database-url ${databaseUrl} --audit-file .data/audit.jsonl keys rotate`,
    );
  } finally {
    await demo.stop();
  }
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const { stdout } = await promisify(execFile)('sh', ['-c', command!], { cwd: root, env });
  expect(stdout).toMatch(/\bactive\b.*\byes\b/);
  // The rotation is the last line of the demo's audit trail (issue 41), the key that signs now.
  const signing = /^(\S+)\s.*\bactive\b.*\byes\b/m.exec(stdout)![1];
  const lines = readFileSync(join(root, '.data', 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n');
  expect(JSON.parse(lines.at(-1)!)).toMatchObject({
    type: 'signing_key.rotated',
    kid: signing,
    by: 'operator',
  });
}, 90_000);

/**
 * The demo mounts the developer page (issue 40), and its banner says where: the URL it prints
 * answers, to a visitor not signed in, the provider selection for the developer page, with the
 * demo's development provider among the choices.
 */
it("the demo's banner names the developer page, which asks a visitor to choose a provider", async () => {
  const demo = await startDemo();
  try {
    const url =
      /^ {2}Developer page {8}(\S+) {2}\(members sign in and register their own applications\)$/m.exec(
        demo.output(),
      )?.[1];
    expect(url, demo.output()).toBe(`${demo.serverUrl}/developers`);
    const page = await fetch(url!, { redirect: 'manual' });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Sign in to continue to the developer page');
    expect(html).toMatch(/<a href="[^"]*\/oauth\/login\?[^"]*for=developers">Development provider<\/a>/);
  } finally {
    await demo.stop();
  }
}, 60_000);

/**
 * The demo writes its audit trail under its data folder (issue 41), and its banner says where: a
 * token issued to the demo's bot is in the file the banner names, with the id of the response
 * that carried it, and neither the bot's secret nor its token is.
 */
it("the demo's banner names its audit trail, which holds a token issued, without the token", async () => {
  const demo = await startDemo();
  let token: { access_token: string } | undefined;
  let requestId: string | null = null;
  let file: string | undefined;
  let secret: string | undefined;
  try {
    file =
      /^ {2}Audit trail {11}(\S+) {2}\(a JSON line per login, consent, grant and revocation; no secret\)$/m.exec(
        demo.output(),
      )?.[1];
    expect(file, demo.output()).toBe('.data/audit.jsonl');
    const bot =
      /client credentials: acts as itself.*\n {4}client_id {6}(\S+)\n {4}client_secret {2}(\S+)/.exec(
        demo.output(),
      );
    expect(bot, demo.output()).not.toBeNull();
    secret = bot![2]!;
    const res = await fetch(`${demo.serverUrl}/oauth/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from(`${bot![1]}:${secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    expect(res.status).toBe(200);
    token = (await res.json()) as { access_token: string };
    requestId = res.headers.get('x-request-id');
  } finally {
    // Stopping the demo closes the trail: every line handed over is in the file.
    await demo.stop();
  }
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const text = readFileSync(join(root, file!), 'utf8');
  const lines = text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines.filter((line) => line.request_id === requestId)).toEqual([
    expect.objectContaining({ type: 'token.issued', grant_type: 'client_credentials' }),
  ]);
  expect(text).not.toContain(token!.access_token);
  expect(text).not.toContain(secret);
}, 60_000);

/**
 * The demo mounts the Prometheus router (issue 41), and its banner says where: the URL it prints
 * answers this machine with the figures, and refuses a request a proxy forwarded.
 */
it("the demo's banner names its metrics, answered to this machine only", async () => {
  const demo = await startDemo();
  try {
    const url = /^ {2}Metrics {15}(\S+) {2}\(Prometheus text format, answered to this machine only\)$/m.exec(
      demo.output(),
    )?.[1];
    expect(url, demo.output()).toBe(`http://127.0.0.1:${new URL(demo.serverUrl).port}/metrics`);
    const answer = await fetch(url!);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await answer.text()).toContain('# TYPE oauth_token_requests_total counter');
    expect((await fetch(url!, { headers: { 'X-Forwarded-For': '203.0.113.9' } })).status).toBe(403);
  } finally {
    await demo.stop();
  }
}, 60_000);
