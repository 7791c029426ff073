/**
 * A traced request (traceRequest) keeps what a traced promise gave its subscribers: every event
 * after `start` runs inside the stores bound to `start` (an APM tool's context).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { traceChannel, type EndpointTraceName } from '../../src/observability/channels.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { refreshWith } from '../support/flow.js';

let t: TestApp | undefined;
const undo: (() => void)[] = [];
afterEach(async () => {
  for (const step of undo.splice(0)) step();
  await t?.close();
  t = undefined;
});

const EVENTS = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const;

/** Binds a store to `name`'s `start`, as an APM tool does, and records whether each event runs in it. */
function watchStore(name: EndpointTraceName) {
  const store = new AsyncLocalStorage<object>();
  const channel = traceChannel(name);
  const seen: { event: string; inStore: boolean }[] = [];
  const handlers = Object.fromEntries(
    EVENTS.map((event) => [
      event,
      (context: object) => void seen.push({ event, inStore: store.getStore() === context }),
    ]),
  );
  channel.start.bindStore(store, (context) => context as object);
  channel.subscribe(handlers as never);
  undo.push(() => {
    channel.start.unbindStore(store);
    channel.unsubscribe(handlers as never);
  });
  return seen;
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('the stores bound to start', () => {
  it('hold for end, error, asyncStart and asyncEnd, as they do for a traced promise', async () => {
    t = await createTestApp();
    const authorize = watchStore('authorize');
    const bearer = watchStore('bearer');
    const token = watchStore('token');
    // Ended within the synchronous part: a HEAD on a page, a guard with no Authorization header.
    expect((await t.agent.head('/oauth/authorize')).status).toBe(405);
    expect((await t.agent.get('/v1/realms')).status).toBe(401);
    // Ended later: a refresh token the server does not know.
    expect((await refreshWith(t, 'nothing')).status).toBe(400);
    await settled();
    expect(authorize.map((s) => s.event)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(bearer.map((s) => s.event)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(token.map((s) => s.event)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    for (const seen of [authorize, bearer, token]) {
      expect(seen.filter((s) => !s.inStore)).toEqual([]);
    }
  });
});
