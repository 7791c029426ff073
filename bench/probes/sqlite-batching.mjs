/**
 * In-process probe, not a contender: what the SQLite writes of a code exchange cost in CPU (an
 * access and a refresh token inserted, the used-code marker written, the code taken from the
 * ephemeral table: the commit point), one transaction per statement
 * as the library writes them, against k exchanges in one transaction (group commit), on the
 * library's own schema (migrations run by `connectStorage`), WAL and `synchronous = NORMAL` as
 * `connectStorage` sets them.
 *
 *   node bench/probes/sqlite-batching.mjs
 *
 * Prints CPU microseconds per exchange for each k, 4 rounds each, taken in turn.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { connectStorage } from 'openid-oauth-bridge';
import { sha256 } from '../lib/fixtures.mjs';

const file = join(tmpdir(), `openid-oauth-bridge-batching-${process.pid}.db`);
process.on('exit', () => ['', '-wal', '-shm'].forEach((suffix) => rmSync(file + suffix, { force: true })));
const secret = () => randomBytes(32).toString('base64url');

const storage = await connectStorage(`sqlite:${file}`, { migrate: true });
await storage.close();
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('cache_size = -65536');

const now = Date.now();
const CODES = 60_000;
const insertCode = db.prepare('insert into oauth_ephemeral (key, value, expires_at) values (?, ?, ?)');
db.transaction(() => {
  for (let i = 0; i < CODES; i++) {
    const code = {
      clientId: 'client',
      userId: 'user',
      redirectUri: 'https://client.example/cb',
      scopes: ['realms:read'],
      grantId: 'grant',
      codeChallenge: null,
      codeChallengeMethod: null,
      createdAt: now,
      expiresAt: now + 3_600_000,
    };
    insertCode.run(`code:${sha256(`code-${i}`)}`, JSON.stringify(code), now + 3_600_000);
  }
})();
const readCode = db.prepare('select value from oauth_ephemeral where key = ? and expires_at > ?');
const setUsed = db.prepare(
  `insert into oauth_ephemeral (key, value, expires_at) values (?, ?, ?)
     on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at`,
);
const take = db.prepare('delete from oauth_ephemeral where key = ? and expires_at > ? returning value');
const insertToken = db.prepare(
  `insert into oauth_tokens (token_hash, type, grant_id, client_id, user_id, scopes, created_at, expires_at, origin, rotated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, 'authorization_code', null)`,
);
const begin = db.prepare('begin immediate');
const commit = db.prepare('commit');

let next = 0;
function exchange() {
  const hash = sha256(`code-${next++}`);
  const row = readCode.get(`code:${hash}`, now);
  if (!row) throw new Error('ran out of codes');
  const { grantId: grant, clientId: client, userId: user, scopes } = JSON.parse(row.value);
  const scope = scopes.join(' ');
  insertToken.run(sha256(secret()), 'access_token', grant, client, user, scope, now, now + 3_600_000);
  insertToken.run(sha256(secret()), 'refresh_token', grant, client, user, scope, now, null);
  setUsed.run(
    `code-used:${hash}`,
    JSON.stringify({ grantId: grant, clientId: client, userId: user }),
    now + 3_600_000,
  );
  take.get(`code:${hash}`, now);
}

/** CPU microseconds per exchange over `count` exchanges, `perTransaction` to a transaction. */
function measure(perTransaction, count) {
  const start = process.cpuUsage();
  for (let done = 0; done < count; done += perTransaction) {
    if (perTransaction === 1) exchange();
    else {
      begin.run();
      for (let i = 0; i < perTransaction; i++) exchange();
      commit.run();
    }
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
}

const sizes = [1, 5, 10, 25];
measure(1, 1000);
measure(10, 1000);
const results = new Map(sizes.map((k) => [k, []]));
for (let round = 0; round < 4; round++) for (const k of sizes) results.get(k).push(measure(k, 3000));
for (const [k, values] of results) {
  console.log(
    `${String(k).padStart(2)} per transaction: ${values.map((v) => v.toFixed(1)).join(', ')} µs CPU per exchange`,
  );
}
db.close();
