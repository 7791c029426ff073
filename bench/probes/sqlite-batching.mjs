/**
 * In-process probe, not a contender: what the SQLite writes of a code exchange cost in CPU (the
 * code marked used, an access token and a refresh token inserted), one transaction per statement
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
const insertCode = db.prepare(
  `insert into oauth_codes (code_hash, grant_id, client_id, user_id, scopes, redirect_uri, code_challenge,
     code_challenge_method, created_at, expires_at, used_at) values (?, ?, ?, ?, ?, ?, null, null, ?, ?, null)`,
);
db.transaction(() => {
  for (let i = 0; i < CODES; i++) {
    insertCode.run(
      sha256(`code-${i}`),
      randomBytes(16).toString('hex'),
      'client',
      'user',
      'realms:read',
      'https://client.example/cb',
      now,
      now + 3_600_000,
    );
  }
})();
const consume = db.prepare(
  'update oauth_codes set used_at = ? where code_hash = ? and used_at is null returning *',
);
const insertAccess = db.prepare(
  `insert into oauth_access_tokens (token_hash, grant_id, client_id, user_id, scopes, origin, created_at, expires_at)
     values (?, ?, ?, ?, ?, 'authorization_code', ?, ?)`,
);
const insertRefresh = db.prepare(
  `insert into oauth_refresh_tokens (token_hash, grant_id, client_id, user_id, scopes, created_at, expires_at, rotated_at)
     values (?, ?, ?, ?, ?, ?, null, null)`,
);
const begin = db.prepare('begin immediate');
const commit = db.prepare('commit');

let next = 0;
function exchange() {
  const code = consume.get(now, sha256(`code-${next++}`));
  if (!code) throw new Error('ran out of codes');
  const { grant_id: grant, client_id: client, user_id: user, scopes } = code;
  insertAccess.run(sha256(secret()), grant, client, user, scopes, now, now + 3_600_000);
  insertRefresh.run(sha256(secret()), grant, client, user, scopes, now);
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
