/**
 * The bound, served: the stubs of `express.mjs`, each request doing first exactly the storage
 * work the probe (`probes/bounds.mjs`) times in a loop for its workload, the same statements on
 * the same schema (`lib/probe-work.mjs`), hashes drawn before the load starts. Its CPU per request
 * less the stub's is what that work costs inside a busy server, against the probe's figure for it
 * alone in a loop.
 *
 *   BENCH_STORAGE        sqlite (better-sqlite3, a file, WAL) | postgres (a pg.Pool of 10)
 *   BENCH_BOUND_TRIPS=2  PostgreSQL's code exchange in two round trips (reads, then writes);
 *                        the code workload only (run.mjs runs it on no other)
 */
import { beforeExit, codeCount, listen, ready, tokenCount, workload } from '../lib/contender.mjs';
import { inputSource, postgresWork, sqliteWork } from '../lib/probe-work.mjs';
import { stubApp } from '../lib/stub-app.mjs';

const engine = process.env.BENCH_STORAGE;
const twoTrips = process.env.BENCH_BOUND_TRIPS === '2';
if (twoTrips && (workload !== 'code' || engine !== 'postgres')) {
  throw new Error('BENCH_BOUND_TRIPS=2 is for the code workload on PostgreSQL only');
}
const name = twoTrips ? 'codeTwoTrips' : workload;
// One input per request, never reused: the code exchange takes a stored code, and every write
// stores a new key. W1 writes nothing and takes none.
let source = inputSource(workload === 'code' ? codeCount : 150_000);
let next = 0;
const take = () => {
  if (next === source.count) {
    if (workload === 'code') throw new Error(`bound: all ${source.count} codes used; raise --codes`);
    // New random keys for the workloads that store nothing in advance (about 20 ms of CPU, once
    // per 150,000 requests).
    source = inputSource(source.count);
    next = 0;
  }
  return source.at(next++);
};
/** The codes, stored before the load: the strings live only while they are stored. */
const allCodes = function* (size) {
  for (let n = 0; n < source.count; n += size)
    yield Array.from({ length: Math.min(size, source.count - n) }, (_, i) => source.at(n + i));
};

let work;
let n = 0;
if (engine === 'sqlite') {
  const probe = await sqliteWork(tokenCount);
  beforeExit(async () => probe.close());
  if (workload === 'code') for (const batch of allCodes(10_000)) probe.seedCodes(batch);
  work = () => {
    const input = workload === 'realms' ? undefined : take();
    const done = probe.work[workload](input, n++);
    if (workload === 'code' && !done) throw new Error(`bound: no code ${input.code}`);
  };
} else if (engine === 'postgres') {
  if (tokenCount !== 1000) throw new Error('bound-postgres stores 1,000 tokens: run it without --tokens');
  const url = process.env.BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
  const probe = await postgresWork({ url, pooled: true });
  beforeExit(() => probe.close());
  if (workload === 'code') for (const batch of allCodes(10_000)) await probe.seedCodes(batch);
  work = () => probe.run(name, workload === 'realms' ? undefined : take(), n++);
} else {
  throw new Error(`BENCH_STORAGE must be sqlite or postgres, not ${engine}`);
}

const { server } = await listen(stubApp(work));
ready(server, { cookie: 'session=stub' });
