import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { memoryStorage, StorageUnavailableError, type Storage } from '../../src/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { freshDatabaseEach, itOn, sqlEngines, type SqlEngine } from '../support/databases.js';
import { exchangeCode, obtainCode } from '../support/flow.js';

/**
 * A code exchange whose commit went through but whose answer was lost (the connection dropped
 * after the database committed): the client's retry finds the code replaced by its used marker,
 * in one atomic step (`ephemeral.replace`). No storage can tell that retry from a replay, so it is
 * one: it is refused, and it revokes the grant with the tokens the first attempt saved (RFC 6749
 * 4.1.2), reported once as `code.replayed`. On every engine the replacement is the last call.
 */
const { engines, cleanup } = await sqlEngines('lost-answer');
afterAll(cleanup);

/** `storage` whose commit of the next code exchange runs, and then fails as if its answer were lost. */
function losingTheCommitAnswer(storage: Storage) {
  const state = { armed: false, lost: 0 };
  const lose = () => {
    state.armed = false;
    state.lost++;
    throw new StorageUnavailableError('the connection dropped after the commit (test)');
  };
  const wrapped: Storage = {
    ...storage,
    ephemeral: {
      ...storage.ephemeral,
      replace: async (key, expected, value, expiresAt, now) => {
        const replaced = await storage.ephemeral.replace(key, expected, value, expiresAt, now);
        if (state.armed) lose();
        return replaced;
      },
    },
  };
  return { storage: wrapped, state };
}

async function checkRetryIsReplay(t: TestApp, state: { armed: boolean; lost: number }) {
  const replayed: string[] = [];
  t.server.events.on('code.replayed', (event) => void replayed.push(event.grantId));
  const { code } = await obtainCode(t);
  const [grant] = await t.server.storage.grants.list({ clientId: t.codeClient.clientId });
  expect(grant?.revokedAt).toBeNull();

  state.armed = true;
  const first = await exchangeCode(t, code);
  expect(first.status).toBe(503);
  expect(state.lost).toBe(1);

  const retry = await exchangeCode(t, code);
  expect(retry.status).toBe(400);
  expect(retry.body.error).toBe('invalid_grant');
  expect(replayed).toEqual([grant!.grantId]);
  const [after] = await t.server.storage.grants.list({ clientId: t.codeClient.clientId });
  expect(after?.revokedAt).not.toBeNull();

  // Presented again: still refused, and reported no more (the grant is revoked already).
  expect((await exchangeCode(t, code)).status).toBe(400);
  expect(replayed).toHaveLength(1);
}

describe('a code exchange whose commit answer was lost', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('memory: the retry is a replay and revokes the grant', async () => {
    const { storage, state } = losingTheCommitAnswer(memoryStorage());
    t = await createTestApp({ storage });
    await checkRetryIsReplay(t, state);
  });

  describe.each(engines)('$name', (engine: SqlEngine) => {
    const database = freshDatabaseEach(engine);
    itOn(engine)('the retry is a replay and revokes the grant', async () => {
      const { storage, state } = losingTheCommitAnswer(await database.open());
      t = await createTestApp({ storage });
      await checkRetryIsReplay(t, state);
    });
  });
});
