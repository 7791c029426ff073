/**
 * In-process probe, not a contender: a code exchange's writes at its commit point (an access and
 * a refresh token saved, the code taken) on the SQL adapter (SQLite, a file, as `connectStorage`
 * opens it), through `storage.batch` (one transaction) and one call at a time (three), in turns.
 *
 *   node bench/probes/commit-batch.mjs [exchanges per turn, default 2000] [in flight, default 1]
 *
 * Prints CPU µs per exchange for each path, 4 turns each.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectStorage } from 'openid-oauth-bridge';

const file = join(tmpdir(), `openid-oauth-bridge-commit-batch-${process.pid}.db`);
process.on('exit', () => ['', '-wal', '-shm'].forEach((suffix) => rmSync(file + suffix, { force: true })));
const storage = await connectStorage(`sqlite:${file}`, { migrate: true });
const now = Date.now();
const hash = () => randomBytes(32).toString('base64url');
const token = (type) => ({
  tokenHash: hash(),
  type,
  grantId: 'grant',
  clientId: 'client',
  userId: 'user',
  scopes: ['realms:read'],
  createdAt: now,
  expiresAt: type === 'access_token' ? now + 3_600_000 : null,
  origin: 'authorization_code',
  rotatedAt: null,
});
const EXCHANGES = Number(process.argv[2] ?? 2000);
const IN_FLIGHT = Number(process.argv[3] ?? 1);

async function turn(batched) {
  const keys = Array.from({ length: EXCHANGES }, () => `code:${hash()}`);
  for (const key of keys) await storage.ephemeral.set(key, '{}', now + 3_600_000, now);
  let next = 0;
  const start = process.cpuUsage();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < EXCHANGES) {
        const key = keys[next++];
        const access = token('access_token');
        const refresh = token('refresh_token');
        if (batched) {
          await storage.batch([
            { op: 'tokens.save', token: access },
            { op: 'tokens.save', token: refresh },
            { op: 'ephemeral.take', key, now },
          ]);
        } else {
          await storage.tokens.save(access);
          await storage.tokens.save(refresh);
          await storage.ephemeral.take(key, now);
        }
      }
    }),
  );
  const { user, system } = process.cpuUsage(start);
  return ((user + system) / EXCHANGES).toFixed(1);
}

const turns = { batch: [], oneByOne: [] };
for (let round = 0; round < 4; round++) {
  turns.oneByOne.push(await turn(false));
  turns.batch.push(await turn(true));
}
console.log(`CPU µs per exchange's commit writes, ${EXCHANGES} per turn, ${IN_FLIGHT} in flight:`);
console.log(`  storage.batch (one transaction): ${turns.batch.join(', ')}`);
console.log(`  one call at a time (three):      ${turns.oneByOne.join(', ')}`);
await storage.close();
