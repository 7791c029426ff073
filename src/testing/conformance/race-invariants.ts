import assert from 'node:assert/strict';
import { standingGrant } from '../../grants/index.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { describeError, grantDeps, isInvalidGrant, replays, tokensOf, works } from './flow.js';
import { response, story, type Request, type World } from './race-world.js';

const isAccessDenied = (error: unknown) => error instanceof OAuthError && error.code === 'access_denied';

/** Whether a request of this kind has resolved. */
const resolved = (w: World, kind: Request['kind']) =>
  w.requests.some((r) => r.kind === kind && r.outcome?.ok);

/**
 * Whether `r` committed `key`: its `replace` of the code by its used marker won, its `take`
 * received the device request, or its `add` of the rotation marker won.
 */
const committed = (r: Request, key: string) =>
  r.attempts.some((a) =>
    a.calls.some(
      (call) =>
        call.outcome === 'ok' &&
        call.args[0] === key &&
        ((call.method === 'ephemeral.take' && call.result !== null) ||
          (call.method === 'ephemeral.replace' && call.result === true) ||
          (call.method === 'ephemeral.add' && call.result === true)),
    ),
  );

const exchangesOf = (w: World, code: number) =>
  w.requests.filter((r) => r.kind === 'exchange' && r.subject === `code ${code}`);

/** The invariants that hold at every step of a run. */
export async function checkNow(w: World): Promise<void> {
  const fail = (what: string) => assert.fail(`${what}\n${story(w)}`);
  for (const code of w.codes.keys()) {
    const wins = exchangesOf(w, code).filter((r) => r.outcome?.ok);
    if (wins.length > 1)
      fail(`code ${code} was exchanged ${wins.length} times: at most one exchange may succeed`);
  }
  if (w.rotate) {
    for (const token of new Set(w.requests.filter((r) => r.kind === 'refresh').map((r) => r.subject))) {
      const wins = w.requests.filter((r) => r.kind === 'refresh' && r.subject === token && r.outcome?.ok);
      if (wins.length > 1) fail(`${token} was rotated ${wins.length} times: with rotation, at most once`);
    }
  }
  // A replay needs another request that used the same code or refresh token: a retry after a
  // failure before the commit point is never one. A retry after a failure past it may be (a
  // rotation whose mark of the replaced token failed fails closed).
  for (const r of w.requests) {
    if (replays(r.events).length === 0 || r.commitKey === null) continue;
    const earlier = { ...r, attempts: r.attempts.slice(0, -1) };
    if (committed(earlier, r.commitKey)) continue;
    const others = w.requests.filter(
      (o) => o !== r && o.commitKey === r.commitKey && committed(o, r.commitKey!),
    );
    if (others.length === 0) {
      fail(
        `#${r.id} (${r.kind} ${r.subject}) was taken for a replay, but no other request used ${r.subject}`,
      );
    }
  }
  if (!w.rotate && w.requests.some((r) => r.events.some((e) => e.type === 'refresh_token.reused'))) {
    fail('refresh_token.reused without rotation');
  }
  // A consent that read the grant before a revocation or a removal saves it after, and revokes it
  // again once it sees the revocation marker or the client gone: until that consent settles, the
  // grant may stand for the round trip between its save and its check (the storage contract has
  // no conditional save). Once it settles, nothing of the revoked grant or removed client works.
  if (w.requests.some((r) => r.kind === 'consent' && r.outcome === undefined)) return;
  if (resolved(w, 'revoke')) {
    const working = await w.ledger.working({ grantId: w.target.grant.grantId });
    if (working.length > 0) {
      fail(`after the revocation resolved, ${working.length} token(s) of the revoked grant still work`);
    }
  }
  if (resolved(w, 'disable') || resolved(w, 'remove')) {
    const working = await w.ledger.working({ clientId: w.target.client.clientId });
    if (working.length > 0) {
      fail(`after the client was disabled or removed, ${working.length} token(s) of it still work`);
    }
  }
}

/** The invariants once every request of a run has settled. */
export async function checkSettled(w: World): Promise<void> {
  const fail = (what: string) => assert.fail(`${what}\n${story(w)}`);
  await checkNow(w);
  for (const r of w.requests) {
    if (!r.outcome) fail(`#${r.id} never settled`);
    if (r.outcome!.ok) continue;
    const error = r.outcome!.error;
    if ((r.kind === 'exchange' || r.kind === 'refresh') && isInvalidGrant(error)) continue;
    // A consent racing a revocation or a removal is refused.
    if (r.kind === 'consent' && isAccessDenied(error)) continue;
    fail(
      `#${r.id} ${r.kind} failed with ${describeError(error)}: after a retry, only invalid_grant (access_denied for a consent) is clean`,
    );
  }
  // The target's own grant: a consent after a revocation or a removal starts another one.
  const current = await standingGrant(
    grantDeps(w.storage, w.rotate),
    w.target.userId,
    w.target.client.clientId,
  );
  const standing = current?.grantId === w.target.grant.grantId;
  const clientGone = resolved(w, 'disable') || resolved(w, 'remove');
  if (!standing) {
    const working = await w.ledger.working({ grantId: w.target.grant.grantId });
    if (working.length > 0) fail(`the grant was revoked, but ${working.length} of its token(s) still work`);
  } else {
    if (resolved(w, 'revoke')) fail('a revocation resolved, yet the grant stands');
    for (const code of w.codes.keys()) {
      const tried = exchangesOf(w, code);
      const wins = tried.filter((r) => r.outcome?.ok);
      if (tried.length > 0 && wins.length !== 1) {
        fail(
          `code ${code}: ${wins.length} of ${tried.length} exchanges succeeded and the grant stands: one must`,
        );
      }
    }
    if (!clientGone) {
      const failed = w.requests.filter((r) => r.kind === 'refresh' && !r.outcome?.ok);
      if (failed.length)
        fail(`the grant stands and the client is enabled, yet refresh #${failed[0]!.id} failed`);
      for (const r of w.requests) {
        const returned = response(r);
        for (const token of returned ? tokensOf(returned) : []) {
          if (!(await works(w.storage, token))) {
            fail(
              `a token returned by #${r.id} does not work, though its grant stands: what succeeded was lost`,
            );
          }
        }
      }
    }
  }
  if (!clientGone) {
    const bystander = await w.ledger.working({ grantId: w.bystander.grant.grantId });
    if (bystander.length < 2) fail('the tokens of another user at the same client stopped working');
  }
}
