/**
 * Prometheus's own checker of the text exposition format, `promtool check metrics` (Debian's
 * `prometheus` package): it reads the text on stdin and says what a scraper would refuse, and
 * what its linter finds (a counter without `_total`, a name without its unit).
 */
import { spawnSync } from 'node:child_process';

export type Availability = { ok: true } | { ok: false; reason: string };

let checked: Availability | undefined;

/**
 * Whether `promtool` runs. Missing is reported on stderr and in the suite's name; under CI it
 * throws instead, so a CI run cannot pass without having checked the format.
 */
export function promtoolAvailability(): Availability {
  checked ??= probe();
  if (!checked.ok) {
    if (process.env.CI) throw new Error(`${checked.reason} (CI is set: promtool must check the metrics)`);
    console.warn(`NOT TESTED: ${checked.reason}. Install it with: apt-get install -y prometheus`);
  }
  return checked;
}

function probe(): Availability {
  const run = spawnSync('promtool', ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (run.error) return { ok: false, reason: `promtool cannot run (${run.error.message})` };
  if (run.status !== 0) return { ok: false, reason: `promtool --version exited with ${run.status}` };
  return { ok: true };
}

/** `promtool check metrics` on `text`: its exit status and everything it said. */
export function checkMetrics(text: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 10_000 });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}
