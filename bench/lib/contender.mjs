/**
 * The side of the bench protocol a contender runs. A contender is a script that the runner starts
 * as its own process (pinned to one core) with
 *
 *   BENCH_WORKLOAD  realms | refresh | code | authorize
 *   BENCH_CODES     how many codes (codeFor(0 … n-1)) to store for the `code` workload
 *   BENCH_TOKENS    how many extra access tokens (fillerTokenFor) to store besides ACCESS_TOKEN
 *
 * It stores the fixtures, listens on 127.0.0.1, then calls {@link ready} with the headers a
 * request of its workload needs besides the workload's own (a session cookie for `authorize`).
 * The runner talks to it over the IPC channel: `memory` asks for `process.memoryUsage()` (after a
 * garbage collection when node runs with --expose-gc); `exit` ends it.
 *
 * With BENCH_PROFILE=DIR, a CPU profile of what the contender does once it is ready (the load, not
 * the seeding) is written to DIR when it exits.
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { statementCounts } from './statement-counter.mjs';

export const workload = process.env.BENCH_WORKLOAD ?? 'realms';
export const codeCount = Number(process.env.BENCH_CODES ?? 0);
export const tokenCount = Number(process.env.BENCH_TOKENS ?? 1000);

/** Listens with `app` on 127.0.0.1 and a free port; resolves the server and its base URL. */
export async function listen(app) {
  const server = createServer(app);
  // Requests answered, for statements per request (the runner's count leaves out those still in
  // flight when a window ends, whose statements the counter sees).
  server.answered = 0;
  server.on('request', (_req, res) => res.on('finish', () => server.answered++));
  // As many keep-alive requests per connection as the load sends.
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

const exitTasks = [];

/** What the runner may ask of this contender between turns (`toggle` contenders), by message. */
const commands = new Map();

/** Runs `run` when the runner sends `message`, and tells it once done. */
export function onCommand(message, run) {
  commands.set(message, run);
}

/**
 * Work to finish before the contender exits when the runner says `exit` (dropping its PostgreSQL
 * schema): a task started from its own 'message' listener raced `process.exit` and left schemas
 * behind.
 */
export function beforeExit(task) {
  exitTasks.push(task);
}

/**
 * Tells the runner the contender is ready: its port, the extra headers of its requests, and the
 * bearer tokens W1 presents when the contender issued them itself (`bearerTokens`; default: the
 * fixtures' tokens).
 */
export function ready(server, headers = {}, bearerTokens = undefined) {
  const profile = startProfile(process.env.BENCH_PROFILE);
  process.on('message', (message) => {
    if (commands.has(message)) {
      commands.get(message)();
      process.send({ done: message });
    } else if (message === 'memory') {
      globalThis.gc?.();
      process.send({ memory: process.memoryUsage() });
    } else if (message === 'statements') {
      process.send({ statements: statementCounts(), requests: server.answered ?? 0 });
    } else if (message === 'exit') {
      server.closeAllConnections();
      server.close(() =>
        profile.stop(async () => {
          for (const task of exitTasks) await task().catch((err) => console.error(err));
          process.exit(0);
        }),
      );
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send({
    ready: true,
    port: server.address().port,
    headers,
    ...(bearerTokens ? { bearerTokens } : {}),
  });
}

/**
 * A profile from now until `stop(done)`, written to `dir`; nothing when `dir` is not set. A CPU
 * profile (.cpuprofile), or with BENCH_PROFILE_KIND=allocations where the load allocates (sampled
 * every 4 KiB, the garbage included; a .heapprofile). Chrome's DevTools open both.
 */
function startProfile(dir) {
  if (!dir) return { stop: (done) => done() };
  const session = new Session();
  session.connect();
  const kind =
    process.env.BENCH_PROFILE_KIND === 'allocations'
      ? {
          domain: 'HeapProfiler',
          start: 'startSampling',
          stop: 'stopSampling',
          extension: 'heapprofile',
          parameters: {
            samplingInterval: 4096,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          },
        }
      : { domain: 'Profiler', start: 'start', stop: 'stop', extension: 'cpuprofile' };
  session.post(`${kind.domain}.enable`);
  session.post(`${kind.domain}.${kind.start}`, kind.parameters);
  return {
    stop(done) {
      session.post(`${kind.domain}.${kind.stop}`, (err, result) => {
        if (!err) {
          const name = `${process.env.BENCH_WORKLOAD}-${process.env.BENCH_STORAGE ?? 'x'}-${process.pid}.${kind.extension}`;
          writeFileSync(join(dir, name), JSON.stringify(result.profile));
        }
        done();
      });
    },
  };
}

/** Runs `fn(i)` for i in [0, n) with at most `concurrency` at once; for seeding stores. */
export async function forEachLimited(n, concurrency, fn) {
  let next = 0;
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
}
