/**
 * OpenTelemetry is optional (issue 41): where `@opentelemetry/api` cannot be resolved, the library
 * works, its tracing channels run, and nothing asks for any `@opentelemetry/*` package until the
 * host calls `openTelemetry()`, which says what to install. Run in a process of its own
 * (without-opentelemetry.flow.ts), where the packages this repository has as devDependencies are
 * made unresolvable.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

describe('without @opentelemetry/api', () => {
  it('serves and traces on its channels, and loads nothing of OpenTelemetry until openTelemetry() is called', async () => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'without-opentelemetry.flow.ts')],
      { cwd: ROOT, env, timeout: 60_000 },
    );
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      statuses: number[];
      traced: number;
      beforeOpenTelemetry: string[];
      openTelemetryError: string | null;
      afterOpenTelemetry: string[];
    };
    // The selection page, the login's redirect to the provider (after discovery), a refused code.
    expect(out.statuses).toEqual([200, 302, 400]);
    expect(out.traced).toBeGreaterThanOrEqual(4);
    expect(out.beforeOpenTelemetry).toEqual([]);
    expect(out.openTelemetryError).toMatch(/needs @opentelemetry\/api.*npm install @opentelemetry\/api/);
    expect(out.afterOpenTelemetry).toEqual(['import @opentelemetry/api']);
  }, 60_000);
});
