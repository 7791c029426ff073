/**
 * The storage work of one request of each workload, written the fastest way each engine allows,
 * on the library's own schema: what `probes/bounds.mjs` times in a loop, and what the `bound-*`
 * contenders run inside the stubs' server (how much the same work costs in a busy server).
 *
 * | workload    | reads                                                                 | writes                                         |
 * | ----------- | --------------------------------------------------------------------- | ---------------------------------------------- |
 * | `realms`    | the token with its grant and client                                   |                                                |
 * | `refresh`   | the client, two rate counters, the refresh token with grant and client | one access token                               |
 * | `code`      | the client, two rate counters, the code, its grant                    | two tokens, the code replaced by its used mark |
 * | `authorize` | the session, the client, the grant                                    | one code                                       |
 *
 * The code is replaced by its used marker under the same key (`ephemeral.replace`: an update that
 * matches the value read), as the library's exchange commits it. `codeTwoTrips` (PostgreSQL) is
 * `code` in two round trips: the client, the counters, the code and its grant; then the writes.
 * The library makes three (the load step, `tokens.saveAll`, then the `replace` that commits).
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { connectStorage } from 'openid-oauth-bridge';
import { sha256 } from './fixtures.mjs';

const secret = () => randomBytes(32).toString('base64url');
const now = Date.now();
const later = now + 6 * 3_600_000;
const CLIENT = 'probe-client';
const USER_ID = 'probe-user';
const GRANT = 'probe-grant';
const SCOPES = 'realms:read';
/** What `ephemeral.replace` leaves under a used code's key. */
const usedValue = JSON.stringify({ used: true, grantId: GRANT, clientId: CLIENT, userId: USER_ID });
const codeValue = JSON.stringify({
  clientId: CLIENT,
  userId: USER_ID,
  redirectUri: 'https://client.example/cb',
  scopes: [SCOPES],
  grantId: GRANT,
  codeChallenge: null,
  codeChallengeMethod: null,
  createdAt: now,
  expiresAt: later,
});
/** The hash of the one refresh token every refresh presents. */
const REFRESH_HASH = sha256('probe-refresh');
const sessionValue = JSON.stringify({
  cookie: { originalMaxAge: 1_800_000, expires: new Date(later).toISOString(), httpOnly: true, path: '/' },
  oauth: { userId: USER_ID, loggedInAt: now },
});

/**
 * Inputs for `count` requests without `count` sets of strings on the heap (a server that kept
 * them would spend its garbage collections marking them): random bytes in one buffer, each
 * request's keys made from its own 160 of them (as long as a SHA-256, and as random) when asked.
 */
export function inputSource(count) {
  const bytes = randomBytes(count * 160);
  const key = (n, field) => bytes.toString('base64url', n * 160 + field * 32, n * 160 + field * 32 + 32);
  return {
    count,
    at: (n) => ({
      code: `code:${key(n, 0)}`,
      access: key(n, 2),
      refresh: key(n, 3),
      newCode: `code:${key(n, 4)}`,
    }),
  };
}

/** The inputs of `count` requests, made before the timing starts (the probe's loop). */
export function inputs(count) {
  const source = inputSource(count);
  return Array.from({ length: count }, (_, n) => source.at(n));
}

const FOUND = `t.token_hash, t.type, t.grant_id, t.client_id, t.user_id, t.scopes, t.created_at, t.expires_at,
  t.origin, t.rotated_at, g.grant_id, g.user_id, g.client_id, g.scopes, g.created_at, g.updated_at,
  g.revoked_at, c.client_id, c.application_name, c.redirect_uri, c.grant_type, c.secret_hash, c.scopes,
  c.default_scopes, c.contacts, c.disabled, c.require_pkce, c.created_at`;
const FIND_TOKEN = (array, p) => `select cast(${array}(${FOUND}) as text) as found from oauth_tokens t
  left join oauth_grants g on g.grant_id = t.grant_id left join oauth_clients c on c.client_id = t.client_id
  where t.token_hash = ${p}`;
const CLIENT_COLUMNS =
  'client_id, application_name, redirect_uri, grant_type, secret_hash, scopes, default_scopes, contacts, disabled, require_pkce, created_at';
const GRANT_COLUMNS = 'grant_id, user_id, client_id, scopes, created_at, updated_at, revoked_at';

/** Seeds the rows every workload reads, through the library's adapter (so hashed as it stores). */
async function seed(storage, tokens) {
  await storage.clients.create({
    clientId: CLIENT,
    applicationName: 'Probe',
    redirectUri: 'https://client.example/cb',
    grantType: 'authorization_code',
    secretHash: sha256('probe-secret'),
    scopes: [SCOPES],
    defaultScopes: null,
    contacts: [],
    disabled: false,
    createdAt: now,
  });
  await storage.grants.save({
    grantId: GRANT,
    userId: USER_ID,
    clientId: CLIENT,
    scopes: [SCOPES],
    createdAt: now,
    updatedAt: now,
    revokedAt: null,
  });
  const token = (tokenHash, type) => ({
    tokenHash,
    type,
    grantId: GRANT,
    clientId: CLIENT,
    userId: USER_ID,
    scopes: [SCOPES],
    createdAt: now,
    expiresAt: type === 'access_token' ? later : null,
    origin: 'authorization_code',
    rotatedAt: null,
  });
  for (const hash of tokens) await storage.tokens.save(token(hash, 'access_token'));
  await storage.tokens.save(token(REFRESH_HASH, 'refresh_token'));
  await storage.ephemeral.set('session:probe', sessionValue, later, now);
}

/** `connectStorage`'s default `mmap_size` for SQLite. */
const SQLITE_MMAP_BYTES = 1024 * 1024 * 1024;

/** `count` more access tokens of the probe's grant, random hashes, in one transaction; then a checkpoint. */
function fillTokens(db, count) {
  const insert = db.prepare(`insert into oauth_tokens (token_hash, type, grant_id, client_id, user_id,
    scopes, created_at, expires_at, origin, rotated_at) values (?, 'access_token', ?, ?, ?, ?, ?, ?, 'authorization_code', null)`);
  db.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(sha256(secret()), GRANT, CLIENT, USER_ID, SCOPES, now, later);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
}

export async function sqliteWork(stored = 1000) {
  const file = join(tmpdir(), `openid-oauth-bridge-bounds-${process.pid}.db`);
  const remove = () => ['', '-wal', '-shm'].forEach((suffix) => rmSync(file + suffix, { force: true }));
  const tokens = Array.from({ length: 1000 }, () => sha256(secret()));
  const storage = await connectStorage(`sqlite:${file}`, { migrate: true });
  await seed(storage, tokens);
  await storage.close();
  const db = new Database(file);
  // As connectStorage opens it.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('cache_size = -65536');
  db.pragma(`mmap_size = ${SQLITE_MMAP_BYTES}`);
  if (stored > tokens.length) fillTokens(db, stored - tokens.length);
  const findToken = db.prepare(FIND_TOKEN('json_array', '?')).pluck();
  const findClient = db.prepare(`select ${CLIENT_COLUMNS} from oauth_clients where client_id = ?`);
  const getLive = db.prepare('select value from oauth_ephemeral where key = ? and expires_at > ?').pluck();
  const findGrant = db.prepare(
    `select ${GRANT_COLUMNS} from oauth_grants where user_id = ? and client_id = ?`,
  );
  const findGrantById = db.prepare(`select ${GRANT_COLUMNS} from oauth_grants where grant_id = ?`);
  const insertToken = db.prepare(`insert into oauth_tokens (token_hash, type, grant_id, client_id, user_id,
    scopes, created_at, expires_at, origin, rotated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, null)`);
  const put = db.prepare(`insert into oauth_ephemeral (key, value, expires_at) values (?, ?, ?)
    on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at`);
  const replace = db
    .prepare(
      'update oauth_ephemeral set value = ?, expires_at = ? where key = ? and value = ? and expires_at > ? returning key',
    )
    .pluck();
  const putCode = db.prepare('insert into oauth_ephemeral (key, value, expires_at) values (?, ?, ?)');
  const seedCodes = db.transaction((batch) => batch.forEach((i) => putCode.run(i.code, codeValue, later)));

  const clientAndRates = () => {
    findClient.get(CLIENT);
    getLive.get(`rate:client:${CLIENT}`, now);
    getLive.get('rate:address:127.0.0.1', now);
  };
  const work = {
    realms: (_, n) => findToken.get(tokens[n % tokens.length]),
    refresh: db.transaction((i) => {
      clientAndRates();
      findToken.get(REFRESH_HASH);
      insertToken.run(i.access, 'access_token', GRANT, CLIENT, USER_ID, SCOPES, now, later, 'refresh_token');
    }),
    code: db.transaction((i) => {
      clientAndRates();
      getLive.get(i.code, now);
      findGrantById.get(GRANT);
      insertToken.run(
        i.access,
        'access_token',
        GRANT,
        CLIENT,
        USER_ID,
        SCOPES,
        now,
        later,
        'authorization_code',
      );
      insertToken.run(
        i.refresh,
        'refresh_token',
        GRANT,
        CLIENT,
        USER_ID,
        SCOPES,
        now,
        null,
        'authorization_code',
      );
      return replace.get(usedValue, later, i.code, codeValue, now) !== undefined;
    }),
    authorize: db.transaction((i) => {
      getLive.get('session:probe', now);
      findClient.get(CLIENT);
      findGrant.get(USER_ID, CLIENT);
      put.run(i.newCode, codeValue, later);
    }),
  };
  return {
    work,
    seedCodes,
    close() {
      db.close();
      remove();
    },
  };
}

export async function postgresWork({ url: base, connections = 10, pooled = false }) {
  const schema = `bounds_${process.pid}`;
  const url = new URL(base);
  url.searchParams.set('schema', schema);
  const tokens = Array.from({ length: 1000 }, () => sha256(secret()));
  const storage = await connectStorage(url.toString(), { migrate: true });
  await seed(storage, tokens);
  await storage.close();
  const config = { connectionString: base, options: `-c search_path=${schema}` };
  const pool = pooled ? new pg.Pool({ ...config, max: connections }) : undefined;
  const clients = pooled
    ? []
    : await Promise.all(
        Array.from({ length: connections }, async () => {
          const client = new pg.Client(config);
          await client.connect();
          return client;
        }),
      );
  const admin = pool ?? clients[0];
  // $1 to $4 of every token request's statement: the client, its two rate counters, the time.
  const CLIENT_AND_RATES = [CLIENT, `rate:client:${CLIENT}`, 'rate:address:127.0.0.1', now];
  const CLIENT_ROW = `(select json_build_array(${CLIENT_COLUMNS}) from oauth_clients where client_id = $1)`;
  const RATE = (p) => `(select value from oauth_ephemeral where key = ${p} and expires_at > $4)`;
  const TOKEN_INSERT = `insert into oauth_tokens (token_hash, type, grant_id, client_id, user_id, scopes,
    created_at, expires_at, origin, rotated_at)`;
  const statements = {
    realms: { text: FIND_TOKEN('json_build_array', '$1'), values: (_, n) => [tokens[n % tokens.length]] },
    refresh: {
      text: `with a as (${TOKEN_INSERT} values ($5, 'access_token', $6, $1, $7, $8, $4, $9, 'refresh_token', null))
        select ${CLIENT_ROW} as client, ${RATE('$2')} as rate_client, ${RATE('$3')} as rate_address,
        (${FIND_TOKEN('json_build_array', '$10')}) as found`,
      values: (i) => [...CLIENT_AND_RATES, i.access, GRANT, USER_ID, SCOPES, later, REFRESH_HASH],
    },
    code: {
      text: `with code as (update oauth_ephemeral set value = $12, expires_at = $11
          where key = $5 and value = $13 and expires_at > $4 returning key),
        t as (${TOKEN_INSERT} values ($6, 'access_token', $8, $1, $9, $10, $4, $11, 'authorization_code', null),
          ($7, 'refresh_token', $8, $1, $9, $10, $4, null, 'authorization_code', null))
        select ${CLIENT_ROW} as client, ${RATE('$2')} as rate_client, ${RATE('$3')} as rate_address,
        (select key from code) as code,
        (select json_build_array(${GRANT_COLUMNS}) from oauth_grants where grant_id = $8) as grant`,
      values: (i) => [
        ...CLIENT_AND_RATES,
        i.code,
        i.access,
        i.refresh,
        GRANT,
        USER_ID,
        SCOPES,
        later,
        usedValue,
        codeValue,
      ],
    },
    codeTwoTrips: [
      {
        text: `select ${CLIENT_ROW} as client, ${RATE('$2')} as rate_client, ${RATE('$3')} as rate_address,
          (select value from oauth_ephemeral where key = $5 and expires_at > $4) as code,
          (select json_build_array(${GRANT_COLUMNS}) from oauth_grants where grant_id = $6) as grant`,
        values: (i) => [...CLIENT_AND_RATES, i.code, GRANT],
      },
      {
        text: `with code as (update oauth_ephemeral set value = $9, expires_at = $8
            where key = $2 and value = $10 and expires_at > $1 returning key),
          t as (${TOKEN_INSERT} values ($3, 'access_token', $5, $6, $7, $11, $1, $8, 'authorization_code', null),
            ($4, 'refresh_token', $5, $6, $7, $11, $1, null, 'authorization_code', null))
          select (select key from code) as code`,
        values: (i) => [
          now,
          i.code,
          i.access,
          i.refresh,
          GRANT,
          CLIENT,
          USER_ID,
          later,
          usedValue,
          codeValue,
          SCOPES,
        ],
      },
    ],
    authorize: {
      text: `with c as (insert into oauth_ephemeral (key, value, expires_at) values ($4, $5, $6))
        select (select value from oauth_ephemeral where key = 'session:probe' and expires_at > $3) as session,
        ${CLIENT_ROW} as client,
        (select json_build_array(${GRANT_COLUMNS}) from oauth_grants where user_id = $2 and client_id = $1) as grant`,
      values: (i) => [CLIENT, USER_ID, now, i.newCode, codeValue, later],
    },
  };
  return {
    statements,
    clients,
    /** One request's work on the pool (`pooled`), as a server would run it. */
    async run(workload, input, n) {
      const steps = [statements[workload]].flat();
      let rows;
      for (let s = 0; s < steps.length; s++) {
        const { text, values } = steps[s];
        ({ rows } = await pool.query({ name: `bounds-${workload}-${s}`, text, values: values(input, n) }));
      }
      // The code exchange's last statement returns the code it replaced: it must have found one.
      if (workload.startsWith('code') && rows[0]?.code == null)
        throw new Error(`bound: no code ${input.code}`);
    },
    /** Stores the codes of `batch` (the `code` workload takes one per request). */
    async seedCodes(batch) {
      for (let n = 0; n < batch.length; n += 500) {
        const keys = batch.slice(n, n + 500).map((i) => i.code);
        await admin.query(
          'insert into oauth_ephemeral (key, value, expires_at) select unnest($1::text[]), $2, $3',
          [keys, codeValue, later],
        );
      }
    },
    async close() {
      await admin.query(`drop schema if exists ${schema} cascade`).catch(() => {});
      await (pool ? pool.end() : Promise.all(clients.map((client) => client.end())));
    },
  };
}
