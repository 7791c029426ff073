/**
 * The recorder's cost and bounds: no storage write on a bearer request (every storage call
 * counted), one batch per flush, an early flush at `maxPending`, a failed write kept for the next
 * one (and bounded), the timer, and the last counts written by `closeGracefully`.
 */
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { closeGracefully, memoryStorage, type Storage } from '../../src/index.js';
import type { UsageBatch } from '../../src/storage/types.js';
import { instrumentStorage } from '../../src/testing/index.js';
import { usageDay } from '../../src/storage/usage-types.js';
import { createTestApp, recordingLogger, type TestApp } from '../support/app.js';
import { callRealms, obtainTokens } from '../support/endpoints.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A memory storage whose every call is counted by method, `usage.add` included; `failAdds` rejects that many adds. */
function countedStorage(failAdds = 0) {
  const inner = memoryStorage();
  const calls: string[] = [];
  const batches: UsageBatch[] = [];
  const storage: Storage = instrumentStorage(inner, (call, run) => {
    calls.push(call.method);
    return run();
  });
  let failures = failAdds;
  storage.usage = {
    async add(batch) {
      calls.push('usage.add');
      if (failures-- > 0) throw new Error('the database is down');
      batches.push(batch);
      return inner.usage.add(batch);
    },
    counts: (filter) => inner.usage.counts(filter),
    lastUse: (filter) => inner.usage.lastUse(filter),
  };
  return { storage, inner, calls, batches };
}

describe('the usage recorder', () => {
  it('makes no storage write on a bearer request: one read each, and one add per flush', async () => {
    const counted = countedStorage();
    t = await createTestApp({ storage: counted.storage });
    const tokens = await obtainTokens(t);
    counted.calls.length = 0;
    for (let i = 0; i < 50; i++) expect((await callRealms(t, tokens.access_token)).status).toBe(200);
    expect(counted.calls).toEqual(Array(50).fill('tokens.find'));

    await t.server.usage!.flush();
    expect(counted.calls.filter((method) => method === 'usage.add')).toHaveLength(1);
    const today = usageDay(t.server.clock());
    expect(counted.batches.at(-1)!.counts).toEqual([
      { clientId: 'code-client', day: today, kind: 'token', count: 1 },
      { clientId: 'code-client', day: today, kind: 'bearer', count: 50 },
    ]);
    // Nothing new: a flush writes nothing.
    await t.server.usage!.flush();
    expect(counted.calls.filter((method) => method === 'usage.add')).toHaveLength(1);
  });

  it('writes early once maxPending clients and accounts are held', async () => {
    const counted = countedStorage();
    t = await createTestApp({ storage: counted.storage, usage: { maxPending: 10 } });
    const now = t.server.clock();
    for (let i = 0; i < 9; i++) t.server.usage!.record('bearer', `client-${i}`, null, now);
    expect(counted.batches).toHaveLength(0);
    t.server.usage!.record('bearer', 'client-9', null, now);
    await t.server.usage!.flush();
    expect(counted.batches[0]!.lastUse.map((use) => use.clientId)).toHaveLength(10);
  });

  it('keeps the counts of a failed write for the next one, and says so in the log', async () => {
    const counted = countedStorage(1);
    const logger = recordingLogger();
    t = await createTestApp({ storage: counted.storage, logger });
    const now = t.server.clock();
    t.server.usage!.record('bearer', 'client-a', 'user-1', now);
    await t.server.usage!.flush();
    expect(logger.lines.map((line) => line.message)).toEqual([
      'usage: writing the counts of 1 clients failed; they are kept for the next write in 60 s',
    ]);
    t.server.usage!.record('bearer', 'client-a', 'user-1', now + 1);
    await t.server.usage!.flush();
    expect(await counted.inner.usage.counts({ since: usageDay(now) })).toEqual([
      { clientId: 'client-a', day: usageDay(now), kind: 'bearer', count: 2 },
    ]);
    expect(await counted.inner.usage.lastUse({ clientId: 'client-a' })).toEqual([
      { clientId: 'client-a', userId: null, at: now + 1 },
      { clientId: 'client-a', userId: 'user-1', at: now + 1 },
    ]);
  });

  it('takes an add that throws at once, or answers without a promise, as a failed write, and a throwing logger too', async () => {
    const inner = memoryStorage();
    const storage: Storage = { ...inner };
    let mode: 'throw' | 'undefined' | 'ok' = 'throw';
    storage.usage = {
      // A JavaScript adapter's add: synchronous, throwing or forgetting its promise.
      add: ((batch: UsageBatch) => {
        if (mode === 'throw') throw new Error('pool not connected');
        if (mode === 'undefined') {
          // A synchronous adapter: writes, and returns nothing.
          void inner.usage.add(batch);
          return undefined;
        }
        return inner.usage.add(batch);
      }) as NonNullable<Storage['usage']>['add'],
      counts: (filter) => inner.usage.counts(filter),
      lastUse: (filter) => inner.usage.lastUse(filter),
    };
    const logger = {
      warn: () => {
        throw new Error('the logger is broken too');
      },
      error: () => undefined,
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      t = await createTestApp({ storage, logger, usage: { maxPending: 10 } });
      const now = t.server.clock();
      // The tenth client held starts a write nobody waits for, which fails at once.
      for (let i = 0; i < 9; i++) t.server.usage!.record('bearer', `client-${i}`, null, now);
      t.server.usage!.record('bearer', 'client-a', null, now);
      await t.server.usage!.flush();
      mode = 'undefined';
      t.server.usage!.record('bearer', 'client-a', null, now);
      await t.server.usage!.flush();
      mode = 'ok';
      await t.server.usage!.flush();
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      // The batch that threw was kept and written with the next, by the add that answered
      // without a promise: nothing lost, nothing twice.
      expect(await inner.usage.counts({ clientId: 'client-a', since: usageDay(now) })).toEqual([
        { clientId: 'client-a', day: usageDay(now), kind: 'bearer', count: 2 },
      ]);
      expect(await inner.usage.counts({ clientId: 'client-0', since: usageDay(now) })).toEqual([
        { clientId: 'client-0', day: usageDay(now), kind: 'bearer', count: 1 },
      ]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('holds at most four times maxPending while writes fail, and logs what it dropped', async () => {
    const counted = countedStorage(3);
    const logger = recordingLogger();
    t = await createTestApp({ storage: counted.storage, logger, usage: { maxPending: 10 } });
    const now = t.server.clock();
    // The 10th count starts an early write, which fails; then no early write until the timer.
    for (let i = 0; i < 100; i++) t.server.usage!.record('token', `client-${i}`, null, now);
    await t.server.usage!.flush();
    await t.server.usage!.flush();
    await t.server.usage!.flush();
    expect(counted.calls.filter((method) => method === 'usage.add')).toHaveLength(4);
    const written = await counted.inner.usage.counts({ since: usageDay(now) });
    expect(written).toHaveLength(40);
    expect(logger.lines.at(-1)!.message).toBe(
      'usage: 60 uses were not counted: the counts held while writes failed were at their limit (usage.maxPending × 4)',
    );
  });

  it('writes on its own after flushSeconds', async () => {
    const counted = countedStorage();
    t = await createTestApp({ storage: counted.storage, usage: { flushSeconds: 1 } });
    t.server.usage!.record('refresh', 'client-timer', 'user-1', t.server.clock());
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(counted.batches).toHaveLength(1);
  });

  it('writes the last counts when closeGracefully is given the server', async () => {
    const counted = countedStorage();
    t = await createTestApp({ storage: counted.storage });
    const tokens = await obtainTokens(t);
    await callRealms(t, tokens.access_token);
    expect(counted.batches).toHaveLength(0);
    const http = createServer();
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    await closeGracefully(http, { server: t.server, storage: { close: () => undefined } });
    expect(counted.batches).toHaveLength(1);
    expect(counted.batches[0]!.counts.map((c) => `${c.kind} ${c.count}`)).toEqual(['token 1', 'bearer 1']);
    // Closed: a later token is no longer heard.
    await obtainTokens(t, {}, 'bob');
    await t.server.usage!.flush();
    expect(counted.batches).toHaveLength(1);
  });

  it('counts nothing with usage: false', async () => {
    const counted = countedStorage();
    t = await createTestApp({ storage: counted.storage, usage: false });
    expect(t.server.usage).toBeUndefined();
    const tokens = await obtainTokens(t);
    await callRealms(t, tokens.access_token);
    expect(counted.calls).not.toContain('usage.add');
  });
});
