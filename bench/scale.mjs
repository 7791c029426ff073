/**
 * Issue 21's scale check: W1 (bearer check, `GET /v1/realms`) and W3 (code exchange) with
 * 1,000,000 stored tokens against 1,000, on SQLite and PostgreSQL, interleaved turns; then the
 * plans of the statements the large stores ran. It is `node bench/run.mjs --scale` with these
 * defaults (any of them can be given):
 *
 *   node bench/scale.mjs [--contenders library-sqlite,library-postgres] [--tokens 1000,1000000]
 *                        [--workloads realms,code] [--rounds 6] [--duration 3] [--warmup 3] [--codes 40000]
 *
 * PostgreSQL: a database `bench_scale` created and dropped by the run, through
 * BENCH_SCALE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres). SQLite: a file in
 * the temporary directory, removed at exit. See bench/README.md, "Scale".
 */
const defaults = {
  '--contenders': 'library-sqlite,library-postgres',
  '--rounds': '6',
  '--duration': '3',
  '--warmup': '3',
  '--codes': '40000',
};
const given = new Set(process.argv.slice(2).map((arg) => arg.split('=')[0]));
process.argv.push('--scale');
for (const [flag, value] of Object.entries(defaults)) if (!given.has(flag)) process.argv.push(flag, value);
await import('./run.mjs');
