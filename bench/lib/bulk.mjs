/**
 * For `--scale`: grows the library's token table fast, and reads the plans of the statements the
 * load ran.
 *
 * `bulkCopyTokens` copies one stored token's row (saved through the adapter, so in the library's
 * own format) `to - from` times, each copy with the hash of `fillerTokenFor(i)` as its key (SHA-256,
 * base64url: how the library stores tokens), in one statement on PostgreSQL (INSERT … SELECT over
 * generate_series, hashing in SQL) and one transaction of prepared inserts on SQLite. The columns
 * are read from the table, so the copy follows the schema. Afterwards PostgreSQL's table is
 * vacuumed and analysed (what autovacuum would do after such growth) and SQLite's WAL is
 * checkpointed into the database file.
 */
import { createRequire } from 'node:module';
import { fillerTokenFor, sha256 } from './fixtures.mjs';
import { recordedStatements } from './statement-counter.mjs';

const require = createRequire(import.meta.resolve('openid-oauth-bridge'));

export async function bulkCopyTokens(where, { template, from, to }) {
  const started = Date.now();
  if (where.engine === 'postgres') await bulkPostgres(where, { template, from, to });
  else if (where.engine === 'sqlite') bulkSqlite(where, { template, from, to });
  else throw new Error('bulk copy needs SQLite or PostgreSQL');
  console.error(
    `  bulk copy: ${(to - from).toLocaleString('en')} tokens in ${((Date.now() - started) / 1000).toFixed(1)} s (${where.engine})`,
  );
}

async function withPostgres({ url, schema }, fn) {
  const pg = require('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`set search_path to "${schema}"`);
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function bulkPostgres(where, { template, from, to }) {
  await withPostgres(where, async (client) => {
    const { rows } = await client.query(
      `select column_name from information_schema.columns
        where table_schema = $1 and table_name = 'oauth_tokens' order by ordinal_position`,
      [where.schema],
    );
    const columns = rows.map((r) => r.column_name);
    // fillerTokenFor(i), hashed as the library hashes: SHA-256, base64url without padding.
    const plaintext = `'bench-filler-' || lpad(i::text, 30, '0')`;
    const hash = `rtrim(translate(encode(sha256(convert_to(${plaintext}, 'UTF8')), 'base64'), '+/', '-_'), '=')`;
    const select = columns.map((c) => (c === 'token_hash' ? hash : `t."${c}"`)).join(', ');
    const check = await client.query(`select ${hash} as h from (select $1::int as i) s`, [from]);
    if (check.rows[0].h !== sha256(fillerTokenFor(from))) throw new Error('bulk copy: SQL hash differs');
    await client.query(
      `insert into oauth_tokens (${columns.map((c) => `"${c}"`).join(', ')})
       select ${select} from oauth_tokens t, generate_series($2::int, $3::int - 1) i where t.token_hash = $1`,
      [template, from, to],
    );
    await client.query('vacuum analyze oauth_tokens');
  });
}

function bulkSqlite({ file }, { template, from, to }) {
  const Database = require('better-sqlite3');
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 10000');
    const columns = db
      .prepare('pragma table_info(oauth_tokens)')
      .all()
      .map((c) => c.name);
    const select = columns.map((c) => (c === 'token_hash' ? '?' : `"${c}"`)).join(', ');
    const insert = db.prepare(
      `insert into oauth_tokens (${columns.map((c) => `"${c}"`).join(', ')}) select ${select} from oauth_tokens where token_hash = ?`,
    );
    db.transaction(() => {
      for (let i = from; i < to; i++) insert.run(sha256(fillerTokenFor(i)), template);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/**
 * The plan of each distinct statement recorded so far (lib/statement-counter.mjs, with
 * BENCH_RECORD_SQL=1), with the values of its first run: PostgreSQL's EXPLAIN (not ANALYZE:
 * nothing is executed), SQLite's EXPLAIN QUERY PLAN on a read-only connection.
 */
export async function explainRecorded(where) {
  const statements = recordedStatements().filter(
    (s) => s.engine === where.engine && /^\s*(select|insert|update|delete|with)\b/i.test(s.sql),
  );
  if (where.engine === 'postgres') {
    return withPostgres(where, async (client) => {
      const plans = [];
      for (const s of statements) {
        try {
          const { rows } = await client.query(`explain ${s.sql}`, s.values);
          plans.push({ sql: s.sql, plan: rows.map((r) => r['QUERY PLAN']).join('\n') });
        } catch (err) {
          plans.push({ sql: s.sql, plan: `(explain failed: ${err.message})` });
        }
      }
      return plans;
    });
  }
  if (where.engine === 'sqlite') {
    const Database = require('better-sqlite3');
    const db = new Database(where.file, { readonly: true });
    try {
      return statements.map((s) => {
        try {
          const rows = db.prepare(`explain query plan ${s.sql}`).all(...s.values);
          return { sql: s.sql, plan: rows.map((r) => r.detail).join('\n') };
        } catch (err) {
          return { sql: s.sql, plan: `(explain failed: ${err.message})` };
        }
      });
    } finally {
      db.close();
    }
  }
  return [];
}
