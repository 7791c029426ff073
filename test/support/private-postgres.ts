/**
 * A PostgreSQL cluster of the test's own, for fault tests that stop, crash and overload the
 * database: nothing they do can disturb the machine's PostgreSQL or another test file.
 *
 * Debian's server binaries (`/usr/lib/postgresql/<version>/bin`, or PG_BIN) initialise a cluster in
 * a temporary directory and run it on a free port of 127.0.0.1, with its unix socket in that
 * directory. PostgreSQL refuses to run as root, so under root every command runs as the
 * `postgres` OS user through `runuser`.
 *
 * The app connects as `oauth`, an ordinary role owning database `oauth`, so the connection limit
 * applies to it while the test's superuser connections keep their reserved slots.
 */
import { execFile, spawnSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export type PrivatePostgresAvailability =
  { ok: true; bin: string; asUser: string | null } | { ok: false; reason: string };

/**
 * Whether a private cluster can be started here. Missing binaries are reported (the suite name
 * says NOT TESTED, and stderr too); under CI they fail the file instead.
 */
export function privatePostgresAvailability(): PrivatePostgresAvailability {
  const availability = findBinaries();
  if (!availability.ok) {
    if (process.env.CI) throw new Error(`${availability.reason} (CI is set: the fault tests must run)`);
    console.warn(`NOT TESTED: ${availability.reason}. Install postgresql (Debian) or set PG_BIN.`);
  }
  return availability;
}

function findBinaries(): PrivatePostgresAvailability {
  let bin = process.env.PG_BIN;
  if (bin === undefined) {
    const root = '/usr/lib/postgresql';
    const versions = existsSync(root)
      ? readdirSync(root)
          .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
          .sort((a, b) => Number(b) - Number(a))
      : [];
    if (versions.length === 0) return { ok: false, reason: `no PostgreSQL server binaries in ${root}` };
    bin = join(root, versions[0]!, 'bin');
  }
  for (const tool of ['initdb', 'pg_ctl']) {
    if (!existsSync(join(bin, tool))) return { ok: false, reason: `${join(bin, tool)} is missing` };
  }
  if (process.getuid?.() !== 0) return { ok: true, bin, asUser: null };
  const user = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  if (user.status !== 0) return { ok: false, reason: 'running as root without a postgres OS user' };
  if (!existsSync('/usr/sbin/runuser') && !existsSync('/sbin/runuser')) {
    return { ok: false, reason: 'running as root without runuser' };
  }
  return { ok: true, bin, asUser: 'postgres' };
}

export interface PrivatePostgres {
  port: number;
  /** The app's URL: role `oauth`, database `oauth`. */
  url: string;
  /** A superuser URL, for the test's own sessions (locks, pg_terminate_backend). */
  adminUrl: string;
  /** `pg_ctl stop -m <mode>`: `immediate` is a crash (no checkpoint; recovery at the next start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Runs one statement as the superuser on database `oauth`. */
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
  /** Connections of the app's pools (by `application_name`) the server sees now. */
  connectionsOf(applicationName: string): Promise<number>;
  /** Stops the cluster and deletes its directory. */
  destroy(): Promise<void>;
}

export interface PrivatePostgresOptions {
  /** `max_connections`; 3 of them are reserved for superusers. Default 20. */
  maxConnections?: number;
}

/** Initialises and starts a private cluster; `destroy()` it in `afterAll`. */
export async function startPrivatePostgres(
  availability: Extract<PrivatePostgresAvailability, { ok: true }>,
  options: PrivatePostgresOptions = {},
): Promise<PrivatePostgres> {
  const { bin, asUser } = availability;
  const dir = mkdtempSync(join(tmpdir(), 'oob-pg-'));
  const data = join(dir, 'data');
  if (asUser !== null) {
    const uid = Number(spawnSync('id', ['-u', asUser], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', asUser], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, uid, gid);
  }
  const command = (tool: string, args: string[]) =>
    asUser === null
      ? run(join(bin, tool), args, { cwd: dir })
      : run('runuser', ['-u', asUser, '--', join(bin, tool), ...args], { cwd: dir });

  const port = await freePort();
  await command('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  appendFileSync(
    join(data, 'postgresql.conf'),
    [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${dir}'`,
      `max_connections = ${options.maxConnections ?? 20}`,
      'shared_buffers = 16MB',
      // Kept on: acknowledged commits must be durable for the crash test to mean anything.
      'synchronous_commit = on',
      'log_min_messages = warning',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'README'), 'A PostgreSQL cluster of openid-oauth-bridge fault tests.\n');
  const logFile = join(dir, 'server.log');
  const pgCtl = (args: string[]) => command('pg_ctl', ['-D', data, ...args]);
  const start = async () => {
    await pgCtl(['-l', logFile, '-w', '-t', '30', 'start']);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await pgCtl(['-w', '-t', '30', '-m', mode, 'stop']);
  };
  // Should the test process die, do not leave a server running on the machine.
  const emergencyStop = () => {
    const args = ['-D', data, '-m', 'immediate', 'stop'];
    if (asUser === null) spawnSync(join(bin, 'pg_ctl'), args);
    else spawnSync('runuser', ['-u', asUser, '--', join(bin, 'pg_ctl'), ...args]);
  };
  process.once('exit', emergencyStop);
  await start();

  const adminUrl = `postgres://postgres@127.0.0.1:${port}/oauth`;
  const bootstrap = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await bootstrap.connect();
  try {
    await bootstrap.query('create role oauth login');
    await bootstrap.query('create database oauth owner oauth');
  } finally {
    await bootstrap.end();
  }

  const query = async <T extends pg.QueryResultRow>(text: string, values?: unknown[]) => {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end();
    }
  };

  return {
    port,
    url: `postgres://oauth@127.0.0.1:${port}/oauth`,
    adminUrl,
    start,
    stop,
    query,
    async connectionsOf(applicationName) {
      const rows = await query<{ n: string }>(
        'select count(*) as n from pg_stat_activity where application_name = $1',
        [applicationName],
      );
      return Number(rows[0]!.n);
    },
    async destroy() {
      process.off('exit', emergencyStop);
      await stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
