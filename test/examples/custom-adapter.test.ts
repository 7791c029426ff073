import { describe, expect, it } from 'vitest';
import { runExample } from './run-example.js';

/*
 * examples/custom-adapter.ts run as its README line says: the conformance kit, on node:test,
 * against the example's adapter. It must pass every test it runs, and run the kit's groups.
 */
describe('examples/custom-adapter.ts', () => {
  it('passes the storage conformance kit when run', async () => {
    const run = runExample('custom-adapter.ts', { NODE_TEST_CONTEXT: '' });
    const code = await run.exited;
    const output = run.output();
    expect(code, output.slice(-4000)).toBe(0);
    expect(output).toMatch(/# fail 0/);
    const passed = Number(/# pass (\d+)/.exec(output)?.[1]);
    expect(passed).toBeGreaterThan(50);
    // The kit's groups ran: single use raced, the library's rules, faults, races.
    expect(output).toMatch(/storage conformance: map storage/);
  }, 60_000);
});
