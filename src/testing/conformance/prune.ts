import assert from 'node:assert/strict';
import type { PruneResult, Storage } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { equal, isNull, race, sameRecord } from './check.js';
import {
  DAY,
  HOUR,
  MINUTE,
  accessToken,
  codeRecord,
  freshHash,
  enrolledOwner,
  refreshToken,
} from './fixtures.js';

const KINDS = ['codes', 'accessTokens', 'refreshTokens', 'nonces', 'sessions', 'revokedGrants'] as const;

/** The adapter's `prune`, or a failure that says how to declare it absent. */
function pruneOf(storage: Storage): NonNullable<Storage['prune']> {
  if (!storage.prune) {
    throw new Error(
      'storage.prune is missing. It is optional: if your adapter does not implement it, pass ' +
        "absent: ['prune'] to describeStorageConformance so that its tests are reported as skipped.",
    );
  }
  return storage.prune.bind(storage);
}

/** One row of each kind expired at `now` and one still needed, and how to check both afterwards. */
async function seedRows(storage: Storage, now: number) {
  const owner = await enrolledOwner(storage, now);
  const scope = `https://op.example/${freshHash()}`;
  const expired = {
    code: codeRecord(now - 2 * MINUTE, { expiresAt: now - MINUTE }),
    access: accessToken(now - 2 * HOUR, owner, { expiresAt: now - 1 }),
    refresh: refreshToken(now - 2 * DAY, owner, { expiresAt: now - 1 }),
    nonce: freshHash(),
    sid: freshHash(),
  };
  const live = {
    code: codeRecord(now),
    usedCode: codeRecord(now),
    access: accessToken(now, owner),
    forever: refreshToken(now, owner),
    refresh: refreshToken(now, owner, { expiresAt: now + DAY }),
    nonce: freshHash(),
    sid: freshHash(),
  };
  for (const code of [expired.code, live.code, live.usedCode]) await storage.codes.create(code);
  await storage.codes.consume(live.usedCode.codeHash, now);
  for (const token of [expired.access, live.access]) await storage.tokens.saveAccessToken(token);
  for (const token of [expired.refresh, live.forever, live.refresh])
    await storage.tokens.saveRefreshToken(token);
  await storage.nonces.use(scope, expired.nonce, now - 1);
  await storage.nonces.use(scope, live.nonce, now + MINUTE);
  await storage.sessions?.set(expired.sid, '{}', now - 1);
  await storage.sessions?.set(live.sid, '{"live":true}', now + HOUR);
  return { expired, live, scope };
}

type Seeded = Awaited<ReturnType<typeof seedRows>>;

async function expectExpiredGone(storage: Storage, { expired }: Seeded, now: number): Promise<void> {
  const what = 'prune must delete rows expired at `now`';
  isNull(
    await storage.codes.consume(expired.code.codeHash, now),
    `${what}: codes.consume still finds an expired code`,
  );
  isNull(
    await storage.tokens.findAccessToken(expired.access.tokenHash),
    `${what}: an expired access token is still found`,
  );
  isNull(
    await storage.tokens.findRefreshToken(expired.refresh.tokenHash),
    `${what}: an expired refresh token is still found`,
  );
}

async function expectLiveKept(storage: Storage, { live, scope }: Seeded, now: number): Promise<void> {
  const what = 'prune must keep rows still needed at `now`';
  const fresh = await storage.codes.consume(live.code.codeHash, now);
  equal(fresh?.status, 'consumed', `${what}: an unexpired code must stay consumable`);
  const used = await storage.codes.consume(live.usedCode.codeHash, now);
  equal(
    used?.status,
    'replayed',
    `${what}: an unexpired used code must stay, so that its replay is still detected`,
  );
  sameRecord(
    await storage.tokens.findAccessToken(live.access.tokenHash),
    live.access,
    `${what}: an unexpired access token`,
  );
  sameRecord(
    await storage.tokens.findRefreshToken(live.forever.tokenHash),
    live.forever,
    `${what}: a refresh token with expiresAt null never expires`,
  );
  sameRecord(
    await storage.tokens.findRefreshToken(live.refresh.tokenHash),
    live.refresh,
    `${what}: an unexpired refresh token`,
  );
  equal(
    await storage.nonces.use(scope, live.nonce, now + MINUTE),
    false,
    `${what}: an unexpired nonce stays used`,
  );
  if (storage.sessions) {
    equal(await storage.sessions.get(live.sid, now), '{"live":true}', `${what}: an unexpired session`);
  }
}

/** Each count is an integer, and together the results count at least the rows seeded expired. */
function expectCounts(results: readonly PruneResult[], storage: Storage): void {
  const least: PruneResult = {
    codes: 1,
    accessTokens: 1,
    refreshTokens: 1,
    nonces: 1,
    sessions: 0,
    revokedGrants: 0,
  };
  if (storage.sessions) least.sessions = 1;
  for (const kind of KINDS) {
    const counts = results.map((result) => result[kind]);
    assert.ok(
      counts.every((count) => Number.isSafeInteger(count) && count >= 0),
      `prune must resolve the number of ${kind} it deleted, as an integer; got ${JSON.stringify(counts)}`,
    );
    const total = counts.reduce((sum, count) => sum + count, 0);
    assert.ok(
      total >= least[kind],
      `prune must count the ${kind} it deleted: at least ${least[kind]} expired here, it reported ${total}`,
    );
  }
}

/** `prune` (optional): removes what expired, keeps what replay detection and clients still need. */
export function pruneTests(suite: ConformanceSuite, register: ConformanceSuite['describe']): void {
  const { it, storage } = suite;
  register('prune (optional)', () => {
    it('removes expired rows, keeps live ones, and counts what it removed', async () => {
      const now = Date.now();
      const seeded = await seedRows(storage(), now);
      const result = await pruneOf(storage())(now);
      expectCounts([result], storage());
      await expectExpiredGone(storage(), seeded, now);
      await expectLiveKept(storage(), seeded, now);
    });

    it('deletes in batches until done (batchSize 2, five expired access tokens)', async () => {
      const now = Date.now();
      const owner = await enrolledOwner(storage(), now);
      const tokens = Array.from({ length: 5 }, () =>
        accessToken(now - 2 * HOUR, owner, { expiresAt: now - 1 }),
      );
      for (const token of tokens) await storage().tokens.saveAccessToken(token);
      await pruneOf(storage())(now, { batchSize: 2 });
      for (const token of tokens) {
        isNull(
          await storage().tokens.findAccessToken(token.tokenHash),
          'prune with a small batchSize must still delete every expired row (repeat batches until none is left)',
        );
      }
    });

    it('keeps revoked-grant markers for the retention, so late tokens stay refused', async () => {
      const now = Date.now();
      const [old, recent] = [await enrolledOwner(storage(), now), await enrolledOwner(storage(), now)];
      await storage().tokens.revokeGrant(old.grantId, now - 2 * DAY);
      await storage().tokens.revokeGrant(recent.grantId, now - HOUR);
      await pruneOf(storage())(now, { revokedGrantRetentionMs: 3 * DAY });
      const late = accessToken(now, old);
      await storage().tokens.saveAccessToken(late);
      isNull(
        await storage().tokens.findAccessToken(late.tokenHash),
        'prune must keep a revoked grant younger than revokedGrantRetentionMs: a token saved under it must not be found',
      );
      const result = await pruneOf(storage())(now);
      assert.ok(
        result.revokedGrants >= 1,
        `prune must delete revoked-grant markers older than the retention (default one day) and count them; ` +
          `it reported ${result.revokedGrants}`,
      );
      const lateRecent = accessToken(now, recent);
      await storage().tokens.saveAccessToken(lateRecent);
      isNull(
        await storage().tokens.findAccessToken(lateRecent.tokenHash),
        'prune must keep a grant revoked an hour ago (default retention one day): a token saved under it must not be found',
      );
    });

    it('two concurrent prunes both resolve and together do the work', async () => {
      const now = Date.now();
      const seeded = await seedRows(storage(), now);
      const results = await race('prune', 2, () => pruneOf(storage())(now));
      expectCounts(results, storage());
      await expectExpiredGone(storage(), seeded, now);
      await expectLiveKept(storage(), seeded, now);
    });
  });
}
