import { afterEach, describe, expect, it } from 'vitest';
import { connectStorage, type Storage } from '../../src/index.js';
import { memoryEphemeralStore, type SqlStorage } from '../../src/storage/index.js';
import { composeStorage } from '../../src/storage/redis/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { mountClientEndpoints } from '../support/endpoints.js';
import { exchangeCode, obtainCode, refreshWith } from '../support/flow.js';

/**
 * `Storage.reader` as the token, revocation and introspection endpoints use it: the SQL adapter's
 * reader answers their load step in one statement; a storage composed from parts
 * (`composeStorage(sql, { ephemeral })`, as docs/storage.md composes Redis) never reads through a
 * reader of stores it no longer uses: its codes and counters live in the ephemeral store it names;
 * nor does one spread by hand, which keeps such a reader.
 */
describe('Storage.reader at the endpoints', () => {
  let t: TestApp | undefined;
  let sql: SqlStorage | undefined;
  afterEach(async () => {
    await t?.close();
    await sql?.close();
    t = undefined;
    sql = undefined;
  });

  /** The storage with its reader's `read` counted. */
  function counted(storage: Storage): { storage: Storage; reads: () => number } {
    let reads = 0;
    const { reader } = storage;
    if (reader === undefined) return { storage, reads: () => reads };
    const read: typeof reader.read = (request, now) => {
      reads++;
      return reader.read(request, now);
    };
    return { storage: { ...storage, reader: { stores: reader.stores, read } }, reads: () => reads };
  }

  it('the SQL adapter: the token, introspection and revocation endpoints read through it, once each', async () => {
    sql = await connectStorage('sqlite::memory:', { migrate: true });
    const { storage, reads } = counted(sql);
    t = await createTestApp({ storage });
    mountClientEndpoints(t);
    const { code } = await obtainCode(t);
    const before = reads();
    const exchanged = await exchangeCode(t, code);
    expect(exchanged.status).toBe(200);
    expect(reads() - before).toBe(1);
    const refreshed = await refreshWith(t, exchanged.body.refresh_token);
    expect(refreshed.status).toBe(200);
    expect(reads() - before).toBe(2);
    const { clientId, clientSecret } = t.codeClient;
    const introspected = await t.agent
      .post('/oauth/introspect')
      .auth(clientId, clientSecret)
      .type('form')
      .send({ token: refreshed.body.access_token });
    expect(introspected.body).toMatchObject({ active: true });
    const revoked = await t.agent
      .post('/oauth/revoke')
      .auth(clientId, clientSecret)
      .type('form')
      .send({ token: exchanged.body.refresh_token });
    expect(revoked.status).toBe(200);
    expect(reads() - before).toBe(4);
    const after = await refreshWith(t, exchanged.body.refresh_token);
    expect(after.body.error).toBe('invalid_grant');
  });

  it('composeStorage(sql, { ephemeral }): the codes and counters are read from the ephemeral store it names', async () => {
    sql = await connectStorage('sqlite::memory:', { migrate: true });
    const composed = composeStorage(sql, { ephemeral: memoryEphemeralStore() });
    expect(composed.reader).toBeUndefined();
    expect(composeStorage(sql, { ephemeral: sql.ephemeral }).reader).toBe(sql.reader);
    const { storage, reads } = counted(composed);
    t = await createTestApp({ storage });
    const { code } = await obtainCode(t);
    const exchanged = await exchangeCode(t, code);
    expect(exchanged.status).toBe(200);
    // The code lives in the memory store only: read through the SQL reader it would be unknown.
    const replayed = await exchangeCode(t, code);
    expect(replayed.body.error).toBe('invalid_grant');
    expect((await refreshWith(t, exchanged.body.refresh_token)).body.error).toBe('invalid_grant');
    expect(reads()).toBe(0);
  });

  it('{ ...sql, ephemeral } spread by hand: read one by one, through the stores it has', async () => {
    sql = await connectStorage('sqlite::memory:', { migrate: true });
    const { storage, reads } = counted({ ...sql, ephemeral: memoryEphemeralStore() });
    t = await createTestApp({ storage });
    const { code } = await obtainCode(t);
    const exchanged = await exchangeCode(t, code);
    expect(exchanged.status).toBe(200);
    expect((await exchangeCode(t, code)).body.error).toBe('invalid_grant');
    expect(reads()).toBe(0);
  });
});
