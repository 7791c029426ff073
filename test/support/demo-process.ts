import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The demo (`npm run demo`) running as a child process. */
export interface RunningDemo {
  /** The authorization server (PORT): `http://localhost:PORT`, the demo's default PUBLIC_URL. */
  serverUrl: string;
  /** The client application (PORT+1). */
  clientUrl: string;
  /** The development provider (PORT+2). */
  providerUrl: string;
  /** Everything the demo printed so far, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts examples/demo.ts with `node --import tsx` (one process, so stopping it stops everything)
 * on three consecutive free ports bound to 127.0.0.1, with fresh, in-memory storage. Resolves once
 * the server and the client answer. Another process may take a port between the check and the
 * start: the demo then exits at once, and another set of ports is tried.
 */
export async function startDemo(env: Record<string, string> = {}): Promise<RunningDemo> {
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const port = await freePortTriple();
    try {
      return await launch(port, env);
    } catch (err) {
      // Most likely a port taken in the meantime ("cannot listen"); anything else fails again
      // and is reported with the demo's output.
      lastError = err as Error;
    }
  }
  throw lastError!;
}

async function launch(port: number, env: Record<string, string>): Promise<RunningDemo> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      SESSION_SECRET: 'an end-to-end test session secret, 32+ characters',
      // Fresh storage per run, whichever storage the demo uses by default.
      DATABASE_URL: 'sqlite::memory:',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve();
    }),
  );
  const serverUrl = env.PUBLIC_URL ?? `http://localhost:${port}`;
  const clientUrl = `http://127.0.0.1:${port + 1}`;
  // Ready when the server and the client both answer; the provider starts before either.
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exitCode !== undefined) throw new Error(`the demo exited with ${exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      await stop(child, exited);
      throw new Error(`the demo did not answer within 30 s:\n${output}`);
    }
    const answers = await Promise.all(
      [`http://127.0.0.1:${port}/`, `${clientUrl}/`].map((url) =>
        fetch(url, { signal: AbortSignal.timeout(1000), redirect: 'manual' }).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (answers.every(Boolean)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    serverUrl,
    clientUrl,
    providerUrl: `http://127.0.0.1:${port + 2}`,
    output: () => output,
    stop: () => stop(child, exited),
  };
}

async function stop(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** A port P such that P, P+1 and P+2 are free on 127.0.0.1 right now. */
async function freePortTriple(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    const free = await Promise.all([0, 1, 2].map((i) => isFree(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error('no three consecutive free ports found on 127.0.0.1');
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}
