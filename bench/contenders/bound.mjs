/**
 * The bound, served: the stubs of `express.mjs`, each request doing first exactly the storage
 * work the probe (`probes/bounds.mjs`) times in a loop for its workload, the same statements on
 * the same schema (`lib/probe-work.mjs`), hashes drawn before the load starts. Its CPU per request
 * less the stub's is what that work costs inside a busy server, against the probe's figure for it
 * alone in a loop.
 *
 *   BENCH_STORAGE        sqlite (better-sqlite3, a file, WAL) | postgres (a pg.Pool of 10)
 *   BENCH_BOUND_TRIPS=2  PostgreSQL's code exchange in two round trips (reads, then writes);
 *                        the code workload only (`--workloads code`)
 */
import { beforeExit, codeCount, listen, ready, workload } from '../lib/contender.mjs';
import { inputSource, postgresWork, sqliteWork } from '../lib/probe-work.mjs';
import { stubApp } from '../lib/stub-app.mjs';

const engine = process.env.BENCH_STORAGE;
const twoTrips = process.env.BENCH_BOUND_TRIPS === '2';
if (twoTrips && (workload !== 'code' || engine !== 'postgres')) {
  throw new Error('BENCH_BOUND_TRIPS=2 is for the code workload on PostgreSQL only');
}
const name = twoTrips ? 'codeTwoTrips' : workload;
// One input per request, never reused: the code exchange takes a stored code and every write
// stores a new key.
const source = inputSource(workload === 'code' ? codeCount : Math.max(codeCount, 150_000));
let next = 0;
const take = () => {
  if (next === source.count) throw new Error(`bound: all ${source.count} inputs used; raise --codes`);
  return next++;
};
/** The codes, stored before the load: the strings live only while they are stored. */
const allCodes = function* (size) {
  for (let n = 0; n < source.count; n += size)
    yield Array.from({ length: Math.min(size, source.count - n) }, (_, i) => source.at(n + i));
};

let work;
if (engine === 'sqlite') {
  const probe = await sqliteWork();
  if (workload === 'code') for (const batch of allCodes(10_000)) probe.seedCodes(batch);
  beforeExit(async () => probe.close());
  work = () => {
    const n = take();
    probe.work[workload](workload === 'realms' ? undefined : source.at(n), n);
  };
} else if (engine === 'postgres') {
  const url = process.env.BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
  const probe = await postgresWork({ url, pooled: true });
  if (workload === 'code') for (const batch of allCodes(10_000)) await probe.seedCodes(batch);
  beforeExit(() => probe.close());
  work = () => {
    const n = take();
    return probe.run(name, workload === 'realms' ? undefined : source.at(n), n);
  };
} else {
  throw new Error(`BENCH_STORAGE must be sqlite or postgres, not ${engine}`);
}

const { server } = await listen(stubApp(work));
ready(server, { cookie: 'session=stub' });
