/**
 * Issue 18, finding 9: a response nonce at the edge of the acceptance window. The relying party
 * accepts a nonce while |now - timestamp| <= nonceMaxAgeMs, so the last instant it accepts is
 * timestamp + nonceMaxAgeMs; the nonce must still be remembered then, also after a prune at that
 * instant, or a replay in that last millisecond is taken for a fresh response.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ephemeralNonces } from '../../src/login/nonces.js';
import { parseResponseNonce } from '../../src/login/openid/response-nonce.js';
import type { Storage } from '../../src/storage/types.js';
import {
  startDevelopmentProvider,
  type RunningDevelopmentProvider,
} from '../../src/testing/provider/index.js';
import { storageEngines } from '../support/endpoints.js';
import { createRelyingParty, expectLoginError, genuineCallback } from '../support/openid-harness.js';

/** The relying party's default nonceMaxAgeMs. */
const MAX_AGE = 5 * 60 * 1000;

let op: RunningDevelopmentProvider;
beforeAll(async () => {
  op = await startDevelopmentProvider();
});
afterAll(() => op.close());

const engines = await storageEngines();

describe.each(engines)('response nonces at the prune boundary on $name storage', ({ skip, open }) => {
  const test = it.skipIf(skip !== null);
  let storage: Storage;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    if (skip !== null) return;
    ({ storage, dispose } = await open());
  });
  afterAll(() => dispose?.());

  /** A response verified once at its own time stamp; the clock is the test's. */
  async function usedResponse() {
    let now = Date.now();
    const rp = createRelyingParty(op, {
      clock: () => now,
      nonces: ephemeralNonces(storage.ephemeral, () => now),
    });
    const { callback, state } = await genuineCallback(rp);
    const stamp = parseResponseNonce(callback.searchParams.get('openid.response_nonce')!);
    expect(stamp).not.toBeNull();
    now = stamp!;
    await rp.verify(callback, state);
    return {
      /** Replays the response at `at`, with no outbound request allowed before the verdict. */
      async replayAt(at: number) {
        now = at;
        const outbound = vi.spyOn(globalThis, 'fetch');
        try {
          const error = await expectLoginError(
            rp.verify(callback, state),
            at > stamp! + MAX_AGE ? 'expired' : 'replayed',
          );
          expect(
            outbound,
            'a replay must be refused before any request to the provider',
          ).not.toHaveBeenCalled();
          return error;
        } finally {
          outbound.mockRestore();
        }
      },
      stamp: stamp!,
    };
  }

  test('a replay in the last millisecond of the window is refused as replayed, without a prune', async () => {
    const response = await usedResponse();
    await response.replayAt(response.stamp + MAX_AGE - 1);
    await response.replayAt(response.stamp + MAX_AGE);
    await response.replayAt(response.stamp + MAX_AGE + 1);
  });

  test('a prune whose cutoff is the last accepted instant keeps the nonce: a replay then is refused', async () => {
    const response = await usedResponse();
    const cutoff = response.stamp + MAX_AGE;
    await storage.prune!(cutoff);
    await response.replayAt(cutoff);
    // One millisecond later the window itself refuses it, so a prune may then forget it.
    await storage.prune!(cutoff + 1);
    await response.replayAt(cutoff + 1);
  });
});
