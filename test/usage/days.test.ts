/**
 * The first day kept, for `prune`'s usage retention and the CLI's `--days`: a span longer than
 * the dates a `Date` can hold keeps everything rather than failing half-way through a prune.
 */
import { describe, expect, it } from 'vitest';
import { firstKeptDay } from '../../src/storage/usage-types.js';
import { memoryStorage } from '../../src/index.js';

const DAY = 86_400_000;

describe('firstKeptDay', () => {
  it('is the UTC day of now - span', () => {
    const now = Date.UTC(2026, 10, 29, 12);
    expect(firstKeptDay(now, 0)).toBe('2026-11-29');
    expect(firstKeptDay(now, 30 * DAY)).toBe('2026-10-30');
  });

  it('stops at 1970-01-01 for a span past what a Date holds', () => {
    expect(firstKeptDay(Date.now(), 999_999_999 * DAY)).toBe('1970-01-01');
    expect(firstKeptDay(Date.now(), Number.MAX_SAFE_INTEGER)).toBe('1970-01-01');
  });

  it('lets prune run with a retention of a million years, keeping the usage', async () => {
    const storage = memoryStorage();
    const now = Date.now();
    const day = firstKeptDay(now, 0);
    await storage.usage.add({ counts: [{ clientId: 'c', day, kind: 'token', count: 1 }], lastUse: [] });
    await storage.prune(now, { usageRetentionMs: 1e6 * 365 * DAY });
    expect(await storage.usage.counts({ since: '1970-01-01' })).toEqual([
      { clientId: 'c', day, kind: 'token', count: 1 },
    ]);
  });
});
