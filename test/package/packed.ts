/**
 * The package as a stranger gets it: `npm pack` (which builds first, through `prepack`) and an
 * install of the tarball into a fresh directory, no workspace link.
 *
 * The install is `npm ci --offline`, so it works where CI runs the tests (npm offline, only what
 * `npm ci` of this repository put in npm's cache). `npm install <tarball>` offline would need the
 * registry's metadata of every dependency, which `npm ci` never fetches; so the fresh app gets a
 * lock of its own, cut from this repository's: the tarball, plus exactly the entries Node's lookup
 * reaches from the app's dependencies. The versions are the ones this repository tests with.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const ROOT = join(import.meta.dirname, '..', '..');
const exec = promisify(execFile);

export interface PackedFile {
  path: string;
  size: number;
}

export interface Packed {
  /** Absolute path of the .tgz. */
  tarball: string;
  files: PackedFile[];
  /** Size of the .tgz, bytes. */
  size: number;
  unpackedSize: number;
  scratch: string;
  /** A fresh app directory with `packageJson`, the tarball, express and `extra` packages installed. */
  app(name: string, packageJson: Record<string, unknown>, extra?: string[]): Promise<string>;
  /** Runs a command in a directory; resolves stdout, rejects with stderr in the message. */
  run(cwd: string, command: string, args: string[]): Promise<string>;
  dispose(): void;
}

export async function pack(): Promise<Packed> {
  const scratch = mkdtempSync(join(tmpdir(), 'oob-pack-'));
  const run = async (cwd: string, command: string, args: string[]) => {
    try {
      const { stdout } = await exec(command, args, {
        cwd,
        // `npm pack` builds first (tsup, three entries and their types): over 90 s once on this
        // 2-core machine while other work ran. A hung command still ends, within the hook's time.
        timeout: 240_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, npm_config_update_notifier: 'false' },
      });
      return stdout;
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${e.stderr || e.stdout || e.message}`);
    }
  };
  const json = await run(ROOT, 'npm', ['pack', '--json', '--pack-destination', scratch]);
  // The JSON starts on a line of its own: the build's log before it may hold ANSI colour codes
  // (ESC [), which CI environments turn on.
  const [info] = JSON.parse(json.slice(json.search(/^\[/m))) as [
    { filename: string; files: PackedFile[]; size: number; unpackedSize: number },
  ];
  const tarball = join(scratch, info.filename);
  return {
    tarball,
    files: info.files,
    size: info.size,
    unpackedSize: info.unpackedSize,
    scratch,
    run,
    async app(name, packageJson, extra = []) {
      const dir = join(scratch, name);
      mkdirSync(dir);
      writeFileSync(join(dir, info.filename), readFileSync(tarball));
      const lock = appLock(name, `file:${info.filename}`, ['express', ...extra]);
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({
          name,
          private: true,
          ...packageJson,
          dependencies: lock.packages['']!.dependencies,
        }),
      );
      writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2));
      await run(dir, 'npm', [
        'ci',
        '--offline',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ]);
      return dir;
    },
    dispose: () => rmSync(scratch, { recursive: true, force: true }),
  };
}

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optionalDependencies?: Record<string, string>;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  [key: string]: unknown;
}

interface Lock {
  name: string;
  lockfileVersion: 3;
  requires: true;
  packages: Record<string, LockEntry>;
}

/**
 * A lock for a fresh app that depends on the packed library and on `extra` (names of packages
 * this repository's lock has at its top level), holding the entries Node's lookup reaches.
 */
function appLock(name: string, tarballSpec: string, extra: string[]): Lock {
  const repoLock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock;
  const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as LockEntry & { name: string };
  const packages: Record<string, LockEntry> = {};
  const find = (from: string, dep: string): string | undefined => {
    // from: a lock path such as node_modules/a/node_modules/b; look in its node_modules, then up.
    const parts =
      from === '' ? [] : from.split('/node_modules/').map((p) => p.replace(/^node_modules\//, ''));
    for (let depth = parts.length; depth >= 0; depth--) {
      const prefix = parts
        .slice(0, depth)
        .map((p) => `node_modules/${p}/`)
        .join('');
      const path = `${prefix}node_modules/${dep}`;
      if (repoLock.packages[path]) return path;
    }
    return undefined;
  };
  const visit = (from: string, deps: Record<string, string>, optional: Set<string>) => {
    for (const dep of Object.keys(deps)) {
      const path = find(from, dep);
      if (path === undefined) {
        if (optional.has(dep)) continue;
        throw new Error(`the lock has no ${dep} (needed by ${from || 'the app'})`);
      }
      if (packages[path]) continue;
      const entry = repoLock.packages[path]!;
      const kept: LockEntry = { ...entry };
      // Whether a package is dev, optional or a peer is the app's to say, not this repository's.
      for (const flag of ['dev', 'devOptional', 'peer'] as const) delete kept[flag];
      packages[path] = kept;
      const requiredPeers = Object.fromEntries(
        Object.entries(entry.peerDependencies ?? {}).filter(
          ([peer]) => entry.peerDependenciesMeta?.[peer]?.optional !== true,
        ),
      );
      visit(
        path,
        { ...entry.dependencies, ...requiredPeers },
        new Set(Object.keys(entry.optionalDependencies ?? {})),
      );
      // Optional platform packages: the ones the lock holds (npm ci picks the one for this machine).
      for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
        const optionalPath = find(path, dep);
        if (optionalPath && !packages[optionalPath])
          packages[optionalPath] = repoLock.packages[optionalPath]!;
      }
    }
  };
  const library: LockEntry = {
    version: own.version,
    resolved: tarballSpec,
    license: own.license,
    dependencies: own.dependencies,
    peerDependencies: own.peerDependencies,
    peerDependenciesMeta: own.peerDependenciesMeta,
    bin: own.bin,
    engines: own.engines,
  };
  packages[`node_modules/${own.name}`] = library;
  const appDependencies: Record<string, string> = { [own.name]: tarballSpec };
  for (const dep of extra) appDependencies[dep] = repoLock.packages[`node_modules/${dep}`]!.version!;
  visit('', { ...own.dependencies, ...Object.fromEntries(extra.map((d) => [d, '*'])) }, new Set());
  packages[''] = { name, dependencies: appDependencies };
  return { name, lockfileVersion: 3, requires: true, packages: { '': packages['']!, ...packages } };
}
