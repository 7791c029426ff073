import { createClient } from 'redis';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, it } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { createTestApp, type TestApp, type TestAppOptions } from './app.js';

/**
 * The PostgreSQL the tests use: TEST_POSTGRES_URL (set by .ci/run), else the local default. Each
 * test file works in a schema of its own, dropped afterwards, so runs and files never collide.
 */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

export type Availability = { ok: true } | { ok: false; reason: string };

/**
 * Whether PostgreSQL answers. Missing is reported in the suite name (and on stderr); under CI it
 * fails the test file instead, so a CI run can never pass without having tested PostgreSQL.
 */
export async function postgresAvailability(): Promise<Availability> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  let availability: Availability;
  try {
    await client.connect();
    await client.query('select 1');
    availability = { ok: true };
  } catch (err) {
    availability = {
      ok: false,
      reason: `PostgreSQL at ${POSTGRES_URL} unreachable: ${(err as Error).message}`,
    };
  } finally {
    await client.end().catch(() => undefined);
  }
  if (!availability.ok) {
    if (process.env.CI) throw new Error(`${availability.reason} (CI is set: PostgreSQL must be tested)`);
    console.warn(`NOT TESTED: ${availability.reason}. Set TEST_POSTGRES_URL to test PostgreSQL.`);
  }
  return availability;
}

/** A name safe for a PostgreSQL schema, unique to this run. */
export function uniqueSchema(purpose: string): string {
  return `oob_${purpose}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export function postgresUrlFor(schema: string): string {
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/** A migrated SQL adapter on a fresh PostgreSQL schema; `dispose` closes it and drops the schema. */
export async function freshPostgresStorage(
  purpose: string,
): Promise<{ storage: SqlStorage; dispose(): Promise<void> }> {
  const schema = uniqueSchema(purpose);
  const storage = await connectStorage(postgresUrlFor(schema), { migrate: true });
  return {
    storage,
    async dispose() {
      await storage.close();
      await dropSchema(schema);
    },
  };
}

export interface SqlEngine {
  name: 'SQLite' | 'PostgreSQL';
  /** Why this engine is not tested here (PostgreSQL unreachable), or `null`. */
  skip: string | null;
  /** A fresh database URL: a new SQLite file, or a new PostgreSQL schema. */
  url(): string;
}

/**
 * Both SQL engines for `describe.each`, each handing out fresh databases; `cleanup` (for
 * `afterAll`) deletes the SQLite files and drops the PostgreSQL schemas handed out.
 */
export async function sqlEngines(purpose: string) {
  const postgres = await postgresAvailability();
  const dir = mkdtempSync(join(tmpdir(), `oob-${purpose}-`));
  const schemas: string[] = [];
  let files = 0;
  const engines: SqlEngine[] = [
    { name: 'SQLite', skip: null, url: () => `sqlite:${join(dir, `${purpose}-${++files}.db`)}` },
    {
      name: 'PostgreSQL',
      skip: postgres.ok ? null : `NOT TESTED: ${postgres.reason}`,
      url: () => postgresUrlFor(track(uniqueSchema(purpose))),
    },
  ];
  function track(schema: string): string {
    schemas.push(schema);
    return schema;
  }
  return {
    postgres,
    engines,
    /** A folder of this file's own, deleted by `cleanup`. */
    dir,
    /** Drops `schema` at cleanup too. */
    track,
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
      for (const schema of schemas) await dropSchema(schema);
    },
  };
}

/**
 * `it` for one engine of {@link sqlEngines}: skipped, with the reason in its title, when the
 * engine cannot be reached here (a failure under CI, see postgresAvailability).
 */
export function itOn(engine: SqlEngine) {
  return (title: string, test: () => Promise<void>) =>
    it.skipIf(engine.skip !== null)(engine.skip === null ? title : `${title} (${engine.skip})`, test);
}

/**
 * A fresh database of `engine`, migrated, for one test: `open` connects (once per test), and the
 * `afterEach` this registers closes what the test opened. Call it inside a `describe`.
 */
export function freshDatabaseEach(engine: SqlEngine): { open(): Promise<SqlStorage> } {
  let opened: SqlStorage | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });
  return {
    async open() {
      opened = await connectStorage(engine.url(), { migrate: true });
      return opened;
    },
  };
}

/**
 * The test app on a fresh database of `engine`, one per test, closed after it with its database
 * (see {@link freshDatabaseEach}): `start` opens the database, hands its storage to `options` (to
 * wrap it, or add options) and starts the app; `open` gives the database alone. Call it inside a
 * `describe`.
 */
export function appOnFreshDatabase(engine: SqlEngine) {
  const database = freshDatabaseEach(engine);
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  return {
    /** The fresh database alone, for a test without the app. */
    open: database.open,
    async start(options: (storage: SqlStorage) => TestAppOptions = (storage) => ({ storage })) {
      app = await createTestApp(options(await database.open()));
      return app;
    },
  };
}

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Whether Redis answers at REDIS_URL. Without it a test reports NOT TESTED and skips; with CI set
 * it throws, since CI must test Redis.
 */
export async function redisAvailability(): Promise<Availability> {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 2000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return { ok: true };
  } catch (err) {
    const reason = `Redis at ${REDIS_URL} unreachable: ${(err as Error).message}`;
    if (process.env.CI) throw new Error(`${reason} (CI is set: Redis must be tested)`);
    console.warn(`NOT TESTED: ${reason}. Set REDIS_URL to test with Redis.`);
    return { ok: false, reason };
  } finally {
    await client.close().catch(() => undefined);
  }
}
