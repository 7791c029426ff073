/**
 * With `--json`, a failure is a JSON document on stdout too (issue 38): a script that reads stdout
 * alone learns what went wrong and the exit code, whether the command refused, the database was
 * not named, or Commander refused an argument. Without `--json`, stdout stays empty.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../support/cli.js';

vi.setConfig({ testTimeout: 60_000 });
const dir = mkdtempSync(join(tmpdir(), 'oob-cli-json-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openid-oauth-bridge --json failures', () => {
  it('print { error: { message, exit_code } } on stdout, and the one line on stderr', async () => {
    const url = `sqlite:${join(dir, 'json.db')}`;
    const unknown = await runCli(['--database-url', url, '--json', 'clients', 'show', 'nobody']);
    expect(unknown.code).toBe(3);
    expect(JSON.parse(unknown.stdout)).toEqual({
      error: { message: expect.stringContaining('the schema is not set up'), exit_code: 3 },
    });
    expect((await runCli(['--database-url', url, 'migrate'])).code).toBe(0);
    const refused = await runCli(['--database-url', url, '--json', 'clients', 'show', 'nobody']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toEqual({
      error: { message: 'no client has client_id nobody (see: clients list)', exit_code: 1 },
    });
    expect(refused.stderr).toContain('error: no client has client_id nobody (see: clients list)\n');

    const noDatabase = await runCli(['--json', 'clients', 'list'], { DATABASE_URL: '' });
    expect(noDatabase.code).toBe(2);
    expect(JSON.parse(noDatabase.stdout).error).toMatchObject({ exit_code: 2 });

    const badArgument = await runCli(['--database-url', url, '--json', 'prune', '--batch-size', 'many']);
    expect(badArgument.code).toBe(1);
    expect(JSON.parse(badArgument.stdout).error.message).toContain(
      "option '--batch-size <n>' argument 'many' is invalid",
    );

    const plain = await runCli(['--database-url', url, 'clients', 'show', 'nobody']);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe('');
  });
});
