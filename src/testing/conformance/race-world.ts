import type { AsyncCommand, Scheduler } from 'fast-check';
import { StorageUnavailableError } from '../../errors/storage-unavailable.js';
import type { ServerEvent } from '../../events/types.js';
import type { TokenResponse } from '../../grants/index.js';
import type { ClientRecord, Storage } from '../../storage/types.js';
import { withFaults, type FaultyStorage } from './faults.js';
import {
  describeError,
  enrol,
  exchange,
  grantDeps,
  issue,
  replays,
  settle,
  tokenLedger,
  type Enrolment,
  type Outcome,
  type TokenLedger,
} from './flow.js';
import { instrumentStorage } from './instrument.js';

/*
 * The world of one race run: a target user and a bystander at one client, the requests started
 * against them, and what each request's storage calls did.
 */

/** One request of a run: its attempts (a failed one and its retry), events and outcome. */
export interface Request {
  id: number;
  kind: 'exchange' | 'refresh' | 'revoke' | 'disable' | 'remove' | 'consent' | 'register';
  /** What it presents: `code 0`, `refresh token R1`, ... */
  subject: string;
  /** The ephemeral key whose `take`/`add` commits it (exchange, refresh with rotation). */
  commitKey: string | null;
  attempts: FaultyStorage[];
  events: ServerEvent[];
  faultAt: number;
  outcome?: Outcome<unknown>;
  /** Resolves once the request has settled (its retry included). */
  settled?: Promise<void>;
}

/** The system under test in one run, and what the model tracks of it. */
export interface World {
  s: Scheduler;
  rotate: boolean;
  /** The adapter under test, unscheduled: for the invariants' reads. */
  storage: Storage;
  ledger: TokenLedger;
  target: Enrolment;
  /** Another user at the same client: a revocation of the target must not touch them. */
  bystander: Enrolment;
  codes: string[];
  /** Refresh tokens of the target handed out so far, in order (the first from the code exchange). */
  refreshTokens: string[];
  requests: Request[];
  pending: Array<Promise<void>>;
}

/** What the commands' preconditions count. */
export type Model = {
  revokes: number;
  clientChanges: number;
  consents: number;
  /** The client was removed, and whether it was registered again under its id since. */
  removed: boolean;
  registeredAgain: boolean;
};
export type Cmd = AsyncCommand<Model, World>;

/** Enrols the target and the bystander, exchanges a code for each, and issues two more codes. */
export async function setUpWorld(
  storage: Storage,
  putClient: (client: ClientRecord) => Promise<void>,
  s: Scheduler,
  rotate: boolean,
): Promise<World> {
  const ledger = tokenLedger(storage);
  const target = await enrol(ledger.storage, putClient);
  const bystander = await enrol(ledger.storage, async () => undefined, target.client);
  const deps = grantDeps(ledger.storage, rotate);
  const first = await exchange(deps, target, await issue(deps, target));
  await exchange(deps, bystander, await issue(deps, bystander));
  const codes = [await issue(deps, target), await issue(deps, target)];
  const refreshTokens = [first.refresh_token!];
  return { s, rotate, storage, ledger, target, bystander, codes, refreshTokens, requests: [], pending: [] };
}

/**
 * Starts a request in the background on a view of its own: faults over scheduling over the
 * ledger. A first attempt that fails with an injected fault (before the adapter ran the call) is
 * retried once, as a client retries a 503.
 */
export function start(
  world: World,
  request: Request,
  run: (storage: Storage, events: ServerEvent[]) => Promise<unknown>,
  retry: boolean,
): void {
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
  request.settled = settle(attempt(request.faultAt))
    .then(async (first) => {
      if (!first.ok && retry && StorageUnavailableError.is(first.error)) return settle(attempt(0));
      return first;
    })
    .then((outcome) => void (request.outcome = outcome));
  world.pending.push(request.settled);
}

/** A new request of the world, numbered. */
export function newRequest(
  world: World,
  fields: Pick<Request, 'kind' | 'subject' | 'commitKey' | 'faultAt'>,
): Request {
  return { id: world.requests.length + 1, attempts: [], events: [], ...fields };
}

/** What happened in a run, for a failure message. */
export function story(w: World): string {
  return w.requests
    .map((r) => {
      const outcome =
        r.outcome === undefined
          ? 'pending'
          : r.outcome.ok
            ? 'succeeded'
            : `failed: ${describeError(r.outcome.error)}`;
      const calls = r.attempts.map((a) =>
        a.calls.map((c) => `${c.method}${c.outcome === 'injected' ? ' (fault)' : ''}`).join(', '),
      );
      const events = replays(r.events).map((e) => e.type);
      const reported = events.length ? ` [${events.join(', ')}]` : '';
      return `  #${r.id} ${r.kind} ${r.subject}: ${outcome}${reported}\n      calls: ${calls.join(' | retry: ')}`;
    })
    .join('\n');
}

/** The token response of a request that succeeded. */
export function response(request: Request): TokenResponse | undefined {
  return request.outcome?.ok && (request.kind === 'exchange' || request.kind === 'refresh')
    ? (request.outcome.value as TokenResponse)
    : undefined;
}
