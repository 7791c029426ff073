import assert from 'node:assert/strict';
import type { AsyncCommand, Scheduler } from 'fast-check';
import { StorageUnavailableError } from '../../errors/storage-unavailable.js';
import type { ServerEvent } from '../../events/types.js';
import { standingGrant, type TokenResponse } from '../../grants/index.js';
import { ephemeralKeys } from '../../storage/keys.js';
import { hashSecret } from '../../crypto/secrets.js';
import type { Storage } from '../../storage/types.js';
import type { ConformanceSuite } from './api.js';
import { withFaults, type FaultyStorage } from './faults.js';
import {
  describeError,
  enrol,
  exchange,
  grantDeps,
  isInvalidGrant,
  issue,
  refresh,
  replays,
  revoke,
  settle,
  tokenLedger,
  tokensOf,
  type Enrolment,
  type Outcome,
  type TokenLedger,
} from './flow.js';
import { instrumentStorage } from './instrument.js';

type FastCheck = typeof import('fast-check');

/** The largest fault index drawn: past a request's last call, the fault never strikes. */
const MAX_FAULT_AT = 7;

/** One request of a run: its attempts (a failed one and its retry), events and outcome. */
interface Request {
  id: number;
  kind: 'exchange' | 'refresh' | 'revoke' | 'disable' | 'remove';
  /** What it presents: `code 0`, `refresh token R1`, ... */
  subject: string;
  /** The ephemeral key whose `take`/`add` commits it (exchange, refresh with rotation). */
  commitKey: string | null;
  attempts: FaultyStorage[];
  events: ServerEvent[];
  faultAt: number;
  outcome?: Outcome<unknown>;
}

/** The system under test in one run, and what the model tracks of it. */
interface World {
  s: Scheduler;
  rotate: boolean;
  ledger: TokenLedger;
  target: Enrolment;
  bystander: Enrolment;
  codes: string[];
  initial: { target: TokenResponse; bystander: TokenResponse };
  /** Refresh tokens of the target handed out so far, in order (the first from the code exchange). */
  refreshTokens: string[];
  requests: Request[];
  pending: Array<Promise<void>>;
}

type Model = { revokes: number; clientChanges: number };
type Cmd = AsyncCommand<Model, World>;

/**
 * Model-based race tests: concurrent code exchanges, refreshes, revocations and client disables
 * or removals, each storage call scheduled by fast-check's scheduler, some failing and retried.
 * After every command and once everything settles, the invariants of the grant rules must hold.
 */
export function raceTests(suite: ConformanceSuite): void {
  const { describe, it, storage, has } = suite;
  let fcModule: FastCheck | undefined;
  const loadFastCheck = async (): Promise<FastCheck> => {
    try {
      fcModule ??= await import('fast-check');
      return fcModule;
    } catch (error) {
      throw new Error(`The race tests of the conformance kit need fast-check (npm install --save-dev fast-check): ${String(error)}`);
    }
  };

  /** Starts a request in the background, on its own view: faults over scheduling over the ledger. */
  function start(world: World, request: Request, run: (storage: Storage, events: ServerEvent[]) => Promise<unknown>, retry: boolean): void {
    const attempt = (faultAt: number) => {
      const scheduled = instrumentStorage(world.ledger.storage, async (call, go) => {
        await world.s.schedule(Promise.resolve(), `#${request.id} ${request.kind} ${call.method}`);
        return go();
      });
      const faulty = withFaults(scheduled);
      if (faultAt > 0) faulty.failCall(faultAt);
      request.attempts.push(faulty);
      return run(faulty.storage, request.events);
    };
    world.requests.push(request);
    world.pending.push(
      settle(attempt(request.faultAt))
        .then(async (first) => {
          // A fault injected before the adapter ran the call: the client retries the same request.
          if (!first.ok && retry && StorageUnavailableError.is(first.error)) return settle(attempt(0));
          return first;
        })
        .then((outcome) => void (request.outcome = outcome)),
    );
  }

  const nextId = (world: World) => world.requests.length + 1;

  function exchangeCmd(code: number, faultAt: number): Cmd {
    return {
      check: () => true,
      async run(_m, w) {
        const key = ephemeralKeys.code(hashSecret(w.codes[code]!));
        const request: Request = { id: nextId(w), kind: 'exchange', subject: `code ${code}`, commitKey: key, attempts: [], events: [], faultAt };
        start(w, request, (s, events) => exchange(grantDeps(s, w.rotate, events), w.target, w.codes[code]!), true);
        await checkNow(w);
      },
      toString: () => `exchange(code ${code}${faultAt ? `, call ${faultAt} fails` : ''})`,
    };
  }

  function refreshCmd(latest: boolean, faultAt: number): Cmd {
    return {
      check: () => true,
      async run(_m, w) {
        const index = latest ? w.refreshTokens.length - 1 : 0;
        const token = w.refreshTokens[index]!;
        const request: Request = {
          id: nextId(w),
          kind: 'refresh',
          subject: `refresh token R${index}`,
          commitKey: w.rotate ? ephemeralKeys.rotated(hashSecret(token)) : null,
          attempts: [],
          events: [],
          faultAt,
        };
        start(
          w,
          request,
          async (s, events) => {
            const response = await refresh(grantDeps(s, w.rotate, events), w.target, token);
            if (response.refresh_token && !w.refreshTokens.includes(response.refresh_token)) w.refreshTokens.push(response.refresh_token);
            return response;
          },
          true,
        );
        await checkNow(w);
      },
      toString: () => `refresh(${latest ? 'latest' : 'first'} token${faultAt ? `, call ${faultAt} fails` : ''})`,
    };
  }

  function revokeCmd(faultAt: number): Cmd {
    return {
      check: (m) => m.revokes < 2,
      async run(m, w) {
        m.revokes++;
        const request: Request = { id: nextId(w), kind: 'revoke', subject: 'the target grant', commitKey: null, attempts: [], events: [], faultAt };
        start(w, request, (s, events) => revoke(grantDeps(s, w.rotate, events), w.target), true);
        await checkNow(w);
      },
      toString: () => `revoke(${faultAt ? `call ${faultAt} fails` : ''})`,
    };
  }

  function clientCmd(kind: 'disable' | 'remove'): Cmd {
    return {
      check: (m) => m.clientChanges < 1 && (kind === 'disable' || has('clientAdmin')),
      async run(m, w) {
        m.clientChanges++;
        const request: Request = { id: nextId(w), kind, subject: 'the client', commitKey: null, attempts: [], events: [], faultAt: 0 };
        start(
          w,
          request,
          async (s) => {
            if (kind === 'remove') return s.clients.remove!(w.target.client.clientId);
            if (has('clientAdmin')) return s.clients.update!(w.target.client.clientId, { disabled: true });
            await w.s.schedule(Promise.resolve(), `#${request.id} disable (putClient)`);
            return suite.putClient({ ...w.target.client, disabled: true }, true);
          },
          false,
        );
        await checkNow(w);
      },
      toString: () => `${kind}Client()`,
    };
  }

  function stepCmd(tasks: number): Cmd {
    return {
      check: () => true,
      async run(_m, w) {
        const ready = w.s.count();
        if (ready > 0) await w.s.waitNext(Math.min(tasks, ready));
        await checkNow(w);
      },
      toString: () => `step(${tasks})`,
    };
  }

  /** What happened in a run, for a failure message. */
  function story(w: World): string {
    return w.requests
      .map((r) => {
        const outcome = r.outcome === undefined ? 'pending' : r.outcome.ok ? 'succeeded' : `failed: ${describeError(r.outcome.error)}`;
        const calls = r.attempts.map((a) => a.calls.map((c) => `${c.method}${c.outcome === 'injected' ? ' (fault)' : ''}`).join(', '));
        const events = replays(r.events).map((e) => e.type);
        return `  #${r.id} ${r.kind} ${r.subject}: ${outcome}${events.length ? ` [${events.join(', ')}]` : ''}\n      calls: ${calls.join(' | retry: ')}`;
      })
      .join('\n');
  }

  const resolved = (w: World, kind: Request['kind']) => w.requests.some((r) => r.kind === kind && r.outcome?.ok);
  const committed = (r: Request, key: string) =>
    r.attempts.some((a) =>
      a.calls.some(
        (c) => c.outcome === 'ok' && c.args[0] === key && ((c.method === 'ephemeral.take' && c.result !== null) || (c.method === 'ephemeral.add' && c.result === true)),
      ),
    );

  /** The invariants that hold at every step. */
  async function checkNow(w: World): Promise<void> {
    const fail = (what: string) => assert.fail(`${what}\n${story(w)}`);
    for (const code of w.codes.keys()) {
      const wins = w.requests.filter((r) => r.kind === 'exchange' && r.subject === `code ${code}` && r.outcome?.ok);
      if (wins.length > 1) fail(`code ${code} was exchanged ${wins.length} times: at most one exchange of a code may succeed`);
    }
    for (const r of w.requests) {
      if (replays(r.events).length === 0 || r.commitKey === null) continue;
      const others = w.requests.filter((o) => o !== r && o.commitKey === r.commitKey && committed(o, r.commitKey!));
      if (others.length === 0) fail(`#${r.id} (${r.kind} ${r.subject}) was taken for a replay, but no other request used ${r.subject}`);
    }
    if (!w.rotate && w.requests.some((r) => r.events.some((e) => e.type === 'refresh_token.reused'))) {
      fail('refresh_token.reused without rotation');
    }
    if (resolved(w, 'revoke')) {
      const working = await w.ledger.working({ grantId: w.target.grant.grantId });
      if (working.length > 0) fail(`after the revocation resolved, ${working.length} token(s) of the revoked grant still work`);
    }
    if (resolved(w, 'disable') || resolved(w, 'remove')) {
      const working = await w.ledger.working({ clientId: w.target.client.clientId });
      if (working.length > 0) fail(`after the client was disabled or removed, ${working.length} token(s) of it still work`);
    }
  }

  /** The invariants once every request has settled. */
  async function checkSettled(w: World): Promise<void> {
    const fail = (what: string) => assert.fail(`${what}\n${story(w)}`);
    await checkNow(w);
    for (const r of w.requests) {
      if (!r.outcome) fail(`#${r.id} never settled`);
      if (r.outcome!.ok) continue;
      const error = r.outcome!.error;
      if ((r.kind === 'exchange' || r.kind === 'refresh') && isInvalidGrant(error)) continue;
      fail(`#${r.id} ${r.kind} failed with ${describeError(error)}: after its retry, only invalid_grant is a clean refusal`);
    }
    const deps = grantDeps(storage(), w.rotate);
    const standing = await standingGrant(deps, w.target.userId, w.target.client.clientId);
    const clientGone = resolved(w, 'disable') || resolved(w, 'remove');
    if (!standing) {
      const working = await w.ledger.working({ grantId: w.target.grant.grantId });
      if (working.length > 0) fail(`the grant was revoked, but ${working.length} of its token(s) still work`);
    } else {
      if (resolved(w, 'revoke')) fail('a revocation resolved, yet the grant stands');
      for (const code of w.codes.keys()) {
        const tried = w.requests.filter((r) => r.kind === 'exchange' && r.subject === `code ${code}`);
        const wins = tried.filter((r) => r.outcome?.ok);
        if (tried.length > 0 && wins.length !== 1) fail(`code ${code}: ${wins.length} of ${tried.length} exchanges succeeded, and the grant stands: exactly one must`);
      }
      if (!clientGone) {
        const failed = w.requests.filter((r) => r.kind === 'refresh' && !r.outcome?.ok);
        if (failed.length) fail(`the grant stands and the client is enabled, yet refresh #${failed[0]!.id} failed`);
        const lost = [];
        for (const r of w.requests) {
          if (r.outcome?.ok && (r.kind === 'exchange' || r.kind === 'refresh')) {
            for (const token of tokensOf(r.outcome.value as TokenResponse)) {
              const found = await storage().tokens.find(hashSecret(token));
              if (!found) lost.push(`#${r.id}`);
            }
          }
        }
        if (lost.length) fail(`tokens returned by ${lost.join(', ')} are gone, though their grant stands`);
      }
    }
    if (!clientGone) {
      const bystander = await w.ledger.working({ grantId: w.bystander.grant.grantId });
      if (bystander.length < 2) fail('the tokens of another user at the same client stopped working: nothing happened to them');
    }
  }

  async function runProperty(rotate: boolean): Promise<void> {
    const fc = await loadFastCheck();
    const fault = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 1, max: MAX_FAULT_AT }));
    const commands = fc.commands<Model, World, false>(
      [
        fc.tuple(fc.integer({ min: 0, max: 1 }), fault).map(([code, at]) => exchangeCmd(code, at)),
        fc.tuple(fc.integer({ min: 0, max: 1 }), fault).map(([code, at]) => exchangeCmd(code, at)),
        fc.tuple(fc.boolean(), fault).map(([latest, at]) => refreshCmd(latest, at)),
        fault.map((at) => revokeCmd(at)),
        fc.constantFrom<'disable' | 'remove'>('disable', 'remove').map((kind) => clientCmd(kind)),
        fc.integer({ min: 1, max: 4 }).map((n) => stepCmd(n)),
        fc.integer({ min: 1, max: 4 }).map((n) => stepCmd(n)),
      ],
      { maxCommands: 8 },
    );
    const seen = new Set<string>();
    let runs = 0;
    const property = fc.asyncProperty(fc.scheduler(), commands, async (s, cmds) => {
      runs++;
      const world = await setUp(s, rotate);
      await fc.asyncModelRun(() => ({ model: { revokes: 0, clientChanges: 0 }, real: world }), cmds);
      await s.waitFor(Promise.all(world.pending));
      await checkSettled(world);
      seen.add(`${[...cmds].map(String).join(';')}|${s.report().map((task) => task.label).join(';')}`);
    });
    const details = await fc.check(property, {
      numRuns: suite.races.runs,
      ...(suite.races.seed === undefined ? {} : { seed: suite.races.seed }),
      ...(suite.races.path === undefined ? {} : { path: suite.races.path }),
      plugins: [fc.interruptAfterTimeLimit(suite.races.timeLimitMs)],
    });
    suite.explored(runs, seen.size);
    if (details.failed) {
      const report = fc.defaultReportMessage(details) ?? 'the property failed';
      const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(
        `Race property failed (rotation ${rotate ? 'on' : 'off'}): ${cause}\n` +
          `Replay it with the option races: { seed: ${details.seed}, path: ${JSON.stringify(details.counterexamplePath)} }.\n${report}`,
      );
    }
  }

  async function setUp(s: Scheduler, rotate: boolean): Promise<World> {
    const ledger = tokenLedger(storage());
    const target = await enrol(ledger.storage, (client) => suite.putClient(client));
    const bystander = await enrol(ledger.storage, async () => undefined, target.client);
    const deps = grantDeps(ledger.storage, rotate);
    const initialTarget = await exchange(deps, target, await issue(deps, target));
    const initialBystander = await exchange(deps, bystander, await issue(deps, bystander));
    const codes = [await issue(deps, target), await issue(deps, target)];
    return {
      s,
      rotate,
      ledger,
      target,
      bystander,
      codes,
      initial: { target: initialTarget, bystander: initialBystander },
      refreshTokens: [initialTarget.refresh_token!],
      requests: [],
      pending: [],
    };
  }

  describe('races: concurrent exchanges, refreshes, revocations and client changes, explored by fast-check', () => {
    for (const rotate of [false, true]) {
      it(`every interleaving keeps the grant rules (rotation ${rotate ? 'on' : 'off'})`, () => runProperty(rotate));
    }
  });
}
