/**
 * A traced request (traceRequest) keeps what a traced promise gave its subscribers: every event
 * after `start` runs inside the stores bound to `start` (an APM tool's context), every request
 * ends at `asyncEnd` exactly once, whatever threw on the way (the request's own code, the error
 * presenter, the bare answer after it), so the figures count it and a span ends.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Express, NextFunction, Request, Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { traceChannel, type EndpointTraceName } from '../../src/observability/channels.js';
import { FIGURES } from '../../src/observability/series.js';
import { recordFigures } from '../../src/observability/record.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { refreshWith } from '../support/flow.js';
import { subscribe } from '../support/channels.js';

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

/** A sink that keeps the durations it is given, by endpoint. */
function durations() {
  const observed: string[] = [];
  const sink = {
    count() {},
    observe(figure: object, labels: Readonly<Record<string, string>>) {
      if (figure === FIGURES.requestDuration) observed.push(`${labels.endpoint} ${labels.outcome}`);
    },
  };
  return { observed, sink };
}

/** A request whose connection the server may cut: its answer, or `cut`. */
async function tryRequest(request: PromiseLike<{ status: number }>): Promise<number | 'cut'> {
  try {
    return (await request).status;
  } catch {
    return 'cut';
  }
}

describe('a request whose handler throws synchronously', () => {
  it('still ends its trace with asyncEnd, and is counted', async () => {
    // A host middleware that sends the headers early (and goes on): the page's own headers throw.
    t = await createTestApp({}, (app: Express) =>
      app.use((req: Request, res: Response, next: NextFunction) => {
        if (req.headers['x-early'] !== undefined) res.flushHeaders();
        next();
      }),
    );
    const { observed, sink } = durations();
    undo.push(recordFigures(t.server, sink));
    const authorize = subscribe('authorize');
    undo.push(authorize.stop);
    await tryRequest(t.agent.get('/oauth/authorize').set('X-Early', '1').timeout(2000));
    await settled();
    expect(authorize.seen.map((s) => s.event)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect(authorize.seen.at(-1)!.context).toMatchObject({ outcome: 'error' });
    expect(observed).toEqual(['authorization error']);
  });
});

describe('the error presenter, when answering throws', () => {
  /** A host middleware whose `res.end` (or `writeHead`) throws for requests marked `X-Break`. */
  function breaking(app: Express) {
    app.use((req: Request, res: Response, next: NextFunction) => {
      const what = req.headers['x-break'];
      if (what === 'end') {
        const end = res.end.bind(res) as (...args: unknown[]) => unknown;
        res.end = ((...args: unknown[]) => {
          end(...args);
          throw new Error('a host wrapper of res.end failed');
        }) as unknown as Response['end'];
      } else if (what === 'head') {
        res.writeHead = (() => {
          throw new Error('an on-headers listener failed');
        }) as unknown as Response['writeHead'];
      }
      next();
    });
  }

  it('ends the trace when the answer had begun (headers sent) and the presenter throws', async () => {
    t = await createTestApp({}, breaking);
    const { observed, sink } = durations();
    undo.push(recordFigures(t.server, sink));
    const bearer = subscribe('bearer');
    undo.push(bearer.stop);
    await tryRequest(t.agent.get('/v1/realms').set('X-Break', 'end').timeout(2000));
    await settled();
    expect(bearer.seen.filter((s) => s.event === 'asyncEnd')).toHaveLength(1);
    expect(bearer.seen.at(-1)!.context).toMatchObject({ outcome: 'error', errorCode: 'server_error' });
    expect(observed).toEqual(['bearer error']);
  });

  it('ends the trace and cuts the request when even the bare 500 cannot be sent', async () => {
    t = await createTestApp({}, breaking);
    const { observed, sink } = durations();
    undo.push(recordFigures(t.server, sink));
    const token = subscribe('token');
    undo.push(token.stop);
    // Refused after a wait (the storage), so the presenter runs in the request's continuation.
    const answered = await tryRequest(refreshWith(t, 'nothing').set('X-Break', 'head').timeout(2000));
    await settled();
    expect(answered).toBe('cut');
    expect(token.seen.filter((s) => s.event === 'asyncEnd')).toHaveLength(1);
    expect(token.seen.at(-1)!.context).toMatchObject({ outcome: 'error', errorCode: 'server_error' });
    expect(observed).toEqual(['token error']);
  });
});
