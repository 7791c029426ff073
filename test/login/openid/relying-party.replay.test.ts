import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  startDevelopmentProvider,
  type RunningDevelopmentProvider,
} from '../../../src/testing/provider/index.js';
import {
  createRelyingParty,
  expectLoginError,
  genuineCallback,
  memoryNonces,
  withParam,
} from '../../support/openid-harness.js';

let op: RunningDevelopmentProvider;
beforeAll(async () => {
  op = await startDevelopmentProvider();
});
afterAll(() => op.close());

const SIX_MINUTES = 6 * 60 * 1000;

describe('RelyingParty.verify response nonces', () => {
  it('refuses a replayed response as replayed, without asking the provider again', async () => {
    const rp = createRelyingParty(op);
    const { callback, state } = await genuineCallback(rp);
    await rp.verify(callback, state);
    const outbound = vi.spyOn(globalThis, 'fetch');
    await expectLoginError(rp.verify(callback, state), 'replayed');
    expect(outbound).not.toHaveBeenCalled();
    outbound.mockRestore();
  });

  it('refuses a replay at another instance sharing the nonce store', async () => {
    const nonces = memoryNonces();
    const first = createRelyingParty(op, { nonces });
    const second = createRelyingParty(op, { nonces });
    const { callback, state } = await genuineCallback(first);
    await first.verify(callback, state);
    await expectLoginError(second.verify(callback, state), 'replayed');
  });

  it('lets exactly one of two racing verifications through', async () => {
    const rp = createRelyingParty(op);
    const { callback, state } = await genuineCallback(rp);
    const results = await Promise.allSettled([rp.verify(callback, state), rp.verify(callback, state)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toMatchObject({ kind: 'replayed' });
  });

  it('is protected by the provider too: a second check_authentication is answered is_valid:false', async () => {
    // Two RPs with separate nonce stores: only the OP's single-use rule (section 11.4.2.1) stops the second.
    const a = createRelyingParty(op);
    const b = createRelyingParty(op);
    const { callback, state } = await genuineCallback(a);
    await a.verify(callback, state);
    await expectLoginError(b.verify(callback, state), 'invalid_response');
  });

  it('refuses a stale response as expired (clock ahead of the nonce by more than nonceMaxAgeMs)', async () => {
    const rp = createRelyingParty(op, {
      clock: () => Date.now() + SIX_MINUTES,
      loginMaxAgeMs: 60 * 60 * 1000,
    });
    const { callback, state } = await genuineCallback(rp);
    const outbound = vi.spyOn(globalThis, 'fetch');
    await expectLoginError(rp.verify(callback, { ...state, startedAt: Date.now() }), 'expired');
    expect(outbound).not.toHaveBeenCalled();
    outbound.mockRestore();
  });

  it('refuses a response from the future as expired (clock behind by more than nonceMaxAgeMs)', async () => {
    let now = Date.now();
    const rp = createRelyingParty(op, { clock: () => now });
    const { callback, state } = await genuineCallback(rp);
    now -= SIX_MINUTES;
    await expectLoginError(rp.verify(callback, { ...state, startedAt: now }), 'expired');
  });

  it('honours a custom nonceMaxAgeMs', async () => {
    const rp = createRelyingParty(op, { clock: () => Date.now() + 20_000, nonceMaxAgeMs: 10_000 });
    const { callback, state } = await genuineCallback(rp);
    await expectLoginError(rp.verify(callback, state), 'expired');
  });

  it('refuses a malformed nonce as invalid_response', async () => {
    const rp = createRelyingParty(op);
    const { callback, state } = await genuineCallback(rp);
    for (const nonce of ['', 'abc', '2024-02-30T10:00:00Zx', `${new Date().toISOString()}x`]) {
      await expectLoginError(
        rp.verify(withParam(callback, 'openid.response_nonce', nonce), state),
        'invalid_response',
      );
    }
  });
});
