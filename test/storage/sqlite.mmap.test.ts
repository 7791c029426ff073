import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectStorage } from '../../src/index.js';

/**
 * `connectStorage` reads SQLite's file through a memory map by default (`mmapSizeMiB`, 1024), so
 * pages come without a system call each; `0` turns it off. Seen where Linux shows it: the file
 * among the process's mappings (`/proc/self/maps`).
 */
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'oob-mmap-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const procMaps = '/proc/self/maps';
/** Whether the file itself (not its `-shm`, which WAL always maps) is mapped into this process. */
const mapped = (file: string) =>
  readFileSync(procMaps, 'utf8')
    .split('\n')
    .some((line) => line.endsWith(` ${file}`));

/**
 * A migrated database, closed and opened again: closing moves the migration's pages from the WAL
 * into the file, where a read then finds them (a fresh WAL database reads them from the WAL).
 */
async function reopened(file: string, mmapSizeMiB?: number) {
  await (await connectStorage(`sqlite:${file}`, { migrate: true })).close();
  return connectStorage(`sqlite:${file}`, mmapSizeMiB === undefined ? {} : { mmapSizeMiB });
}

describe('SQLite through a memory map', () => {
  it.skipIf(!existsSync(procMaps))(
    'maps the database file by default, and not with mmapSizeMiB: 0',
    async () => {
      const withMap = join(dir, 'mapped.db');
      const storage = await reopened(withMap);
      await storage.clients.find('anyone');
      expect(mapped(withMap)).toBe(true);
      await storage.close();

      const withoutMap = join(dir, 'unmapped.db');
      const plain = await reopened(withoutMap, 0);
      await plain.clients.find('anyone');
      expect(mapped(withoutMap)).toBe(false);
      await plain.close();
    },
  );

  it("refuses a size that is not a whole number of MiB up to SQLite's ceiling", async () => {
    for (const mmapSizeMiB of [-1, 1.5, Number.NaN, 2048]) {
      await expect(connectStorage(`sqlite:${join(dir, 'bad.db')}`, { mmapSizeMiB })).rejects.toThrow(
        /mmapSizeMiB/,
      );
    }
  });
});
