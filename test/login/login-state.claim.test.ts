/**
 * Issue 18, finding 4, at the relying party: each login state is claimed once in the shared nonce
 * store, by the first callback that passes the local checks.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LOGIN_STATE_SCOPE, type NonceStore } from '../../src/login/openid/options.js';
import {
  startDevelopmentProvider,
  type RunningDevelopmentProvider,
} from '../../src/testing/provider/index.js';
import {
  createRelyingParty,
  expectLoginError,
  genuineCallback,
  memoryNonces,
  withParam,
} from '../support/openid-harness.js';

let op: RunningDevelopmentProvider;
beforeAll(async () => {
  op = await startDevelopmentProvider();
});
afterAll(() => op.close());
afterEach(() => vi.restoreAllMocks());

/** The genuine callback with a fresh nonce of its own and a signature the provider refuses. */
function forged(callback: URL, i: number): URL {
  const stamp = new Date().toISOString().slice(0, 19);
  return withParam(
    withParam(callback, 'openid.response_nonce', `${stamp}Zforged-${i}`),
    'openid.sig',
    `AAAA${i}`,
  );
}

describe('RelyingParty.verify claims the login state once', () => {
  it('lets one of 20 racing forged responses reach the provider; the others are replayed', async () => {
    const rp = createRelyingParty(op);
    const { callback, state } = await genuineCallback(rp);
    const outbound = vi.spyOn(globalThis, 'fetch');
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => rp.verify(forged(callback, i), state)),
    );
    expect(outbound).toHaveBeenCalledTimes(1);
    const kinds = results.map((r) => (r.status === 'rejected' ? (r.reason as { kind: string }).kind : 'ok'));
    expect(kinds.filter((k) => k === 'replayed')).toHaveLength(19);
    expect(kinds.filter((k) => k === 'invalid_response')).toHaveLength(1);
  });

  it('refuses the genuine response after a forged one took the login, without asking the provider', async () => {
    const nonces = memoryNonces();
    const [a, b] = [createRelyingParty(op, { nonces }), createRelyingParty(op, { nonces })];
    const { callback, state } = await genuineCallback(a);
    await expectLoginError(a.verify(forged(callback, 0), state), 'invalid_response');
    const outbound = vi.spyOn(globalThis, 'fetch');
    await expectLoginError(b.verify(callback, state), 'replayed');
    expect(outbound).not.toHaveBeenCalled();
  });

  it('claims under its own scope until the login could no longer be accepted', async () => {
    const calls: Parameters<NonceStore['use']>[] = [];
    const inner = memoryNonces();
    const nonces: NonceStore = { use: (...args) => (calls.push(args), inner.use(...args)) };
    const rp = createRelyingParty(op, { nonces, loginMaxAgeMs: 60_000 });
    const { callback, state } = await genuineCallback(rp);
    await rp.verify(callback, state);
    expect(calls[0]).toEqual([LOGIN_STATE_SCOPE, state.id, state.startedAt + 60_000 + 1]);
    expect(calls[1]![0]).toBe(op.endpoint);
    expect(state.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('refuses a login state saved before login states had an id, as expired, without a request', async () => {
    const rp = createRelyingParty(op);
    const { callback, state } = await genuineCallback(rp);
    const older: Partial<typeof state> = { ...state };
    delete older.id;
    const outbound = vi.spyOn(globalThis, 'fetch');
    await expectLoginError(rp.verify(callback, older as typeof state), 'expired');
    expect(outbound).not.toHaveBeenCalled();
  });
});
