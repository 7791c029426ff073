/**
 * Crash safety of PostgreSQL itself: the database is stopped with `pg_ctl stop -m immediate` (no
 * checkpoint, no goodbye: a crash, recovered from the WAL at the next start) in the middle of a
 * stream of code exchanges. Every exchange answers 200 or 503, never anything else; after the
 * restart every token a client received works and every code it used stays used. The app is not
 * restarted. Each code is a different user's, so a replay revokes one grant only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { api, eventually, exchange, expectTokenUnavailable, refresh, seedCode } from '../support/faults.js';
import {
  privatePostgresAvailability,
  startPrivatePostgres,
  type PrivatePostgres,
} from '../support/private-postgres.js';

const availability = privatePostgresAvailability();
const CODES = 400;
const PARALLEL = 6;
const CRASH_AFTER = 80;

describe.skipIf(!availability.ok)(
  `PostgreSQL crash (stop -m immediate)${availability.ok ? '' : ` (NOT TESTED: ${availability.reason})`}`,
  () => {
    let cluster: PrivatePostgres;
    let storage: SqlStorage;
    let t: TestApp;

    beforeAll(async () => {
      cluster = await startPrivatePostgres(availability as Extract<typeof availability, { ok: true }>);
      storage = await connectStorage(cluster.url, {
        migrate: true,
        connectionTimeoutMs: 1000,
        statementTimeoutMs: 2000,
      });
      // Codes live 10 minutes here: the 503 ones are retried after the restart, which may take a while.
      t = await createTestApp({ storage, tokens: { codeTtl: 600 } });
    }, 60_000);

    afterAll(async () => {
      await t?.close();
      await storage?.close();
      await cluster?.destroy();
    });

    it('keeps everything acknowledged; answers 503 while down; resumes after the restart', async () => {
      const codes: string[] = [];
      for (let i = 0; i < CODES; i += 1) codes.push(await seedCode(t, `crash-user-${i}`));

      const acknowledged: { code: string; accessToken: string; refreshToken: string }[] = [];
      const unavailable: string[] = [];
      const statuses = new Map<number, number>();
      let next = 0;
      let crashed: Promise<void> | null = null;
      const worker = async () => {
        while (next < codes.length) {
          const code = codes[next++]!;
          const answer = await exchange(t, code);
          statuses.set(answer.res.status, (statuses.get(answer.res.status) ?? 0) + 1);
          if (answer.res.status === 200) {
            const body = JSON.parse(answer.text) as { access_token: string; refresh_token: string };
            acknowledged.push({ code, accessToken: body.access_token, refreshToken: body.refresh_token });
            if (acknowledged.length === CRASH_AFTER) crashed ??= cluster.stop('immediate');
          } else {
            expectTokenUnavailable(answer, 5000);
            unavailable.push(code);
            // Enough seen of the outage: the rest of the stream is not needed.
            if (unavailable.length >= 20) return;
          }
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, worker));
      await crashed;
      expect(crashed).not.toBeNull();
      expect([...statuses.keys()].sort()).toEqual([200, 503]);
      expect(unavailable.length).toBeGreaterThan(0);

      await cluster.start();

      // Without restarting the app: the pool reconnects.
      expect(
        await eventually(async () => (await api(t, acknowledged[0]!.accessToken)).res.status === 200, 10_000),
      ).toBe(true);
      for (const { accessToken } of acknowledged) {
        const answer = await api(t, accessToken);
        expect(answer.res.status, 'an acknowledged access token must survive the crash').toBe(200);
      }
      for (const { refreshToken } of acknowledged.slice(0, 10)) {
        const answer = await refresh(t, refreshToken);
        expect(answer.res.status, 'an acknowledged refresh token must survive the crash').toBe(200);
      }
      // Codes never tried are still good after recovery.
      const untouched = codes.slice(next);
      if (untouched.length > 0) expect((await exchange(t, untouched[0]!)).res.status).toBe(200);
      // A code answered 503 failed before its commit point (taking the code), so its retry works.
      // Only a request cut off after its commit (at most one per worker in flight at the crash)
      // finds the code gone and recorded as used, in the same transaction: no storage can tell
      // that retry from a replay, so it is refused and revokes its grant (RFC 6749 4.1.2).
      const replayed: { grantId: string }[] = [];
      t.server.events.on('code.replayed', (event) => void replayed.push(event));
      const retried = await Promise.all(
        unavailable.map(async (code) => {
          const answer = await exchange(t, code);
          return { status: answer.res.status, text: answer.text };
        }),
      );
      expect(retried.filter(({ status }) => status !== 200 && status !== 400)).toEqual([]);
      const refused = retried.filter(({ status }) => status !== 200);
      expect(refused.length, JSON.stringify(refused)).toBeLessThanOrEqual(PARALLEL);
      expect(replayed.length).toBe(refused.length);
      for (const { grantId } of replayed) {
        const [grant] = await storage.grants
          .list({ clientId: t.codeClient.clientId })
          .then((all) => all.filter((g) => g.grantId === grantId));
        expect(grant?.revokedAt ?? null, 'a replayed code revokes its grant').not.toBeNull();
      }
      // Every acknowledged code stays used.
      for (const { code } of acknowledged) {
        const replay = await exchange(t, code);
        expect(replay.res.status, 'a used code must stay used').toBe(400);
        expect(JSON.parse(replay.text)).toMatchObject({ error: 'invalid_grant' });
      }
    }, 90_000);
  },
);
