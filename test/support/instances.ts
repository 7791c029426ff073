import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./instance-process.ts', import.meta.url));

export interface Instance {
  /** Where this instance listens, e.g. http://127.0.0.1:4711. */
  origin: string;
  process: ChildProcess;
  /** The JSON lines it printed: `{ port }`, then `{ closed }` after a graceful shutdown. */
  messages: Record<string, unknown>[];
  stderr(): string;
  /** Stops it with SIGTERM (or the signal given) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface InstanceConfig {
  databaseUrl: string;
  baseUrl: string;
  providers: { name: string; identifier: string }[];
  sessionSecret: string;
  /** More environment for the process (SLOW_ROUTE_MS, EXPOSE_STATS). */
  env?: Record<string, string>;
  /** Node options before the script, e.g. `--expose-gc`. */
  nodeArgs?: string[];
}

/** Starts `test/support/instance-process.ts` as a child process and waits until it listens. */
export async function startInstance(config: InstanceConfig): Promise<Instance> {
  const child = spawn(process.execPath, [...(config.nodeArgs ?? []), '--import', 'tsx', SCRIPT], {
    env: {
      ...process.env,
      DATABASE_URL: config.databaseUrl,
      BASE_URL: config.baseUrl,
      PROVIDERS: JSON.stringify(config.providers),
      SESSION_SECRET: config.sessionSecret,
      ...config.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const messages: Record<string, unknown>[] = [];
  const listening = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! })
      .on('line', (line) => {
        if (!line.startsWith('{')) return;
        const message = JSON.parse(line) as Record<string, unknown>;
        messages.push(message);
        if (typeof message.port === 'number') resolve(message.port);
      })
      .on('close', () => reject(new Error(`instance closed stdout before listening:\n${stderr}`)));
  });
  const exited = once(child, 'exit').then(() => {
    throw new Error(`instance exited before listening:\n${stderr}`);
  });
  const port = await Promise.race([listening, exited]);
  exited.catch(() => undefined);
  return {
    origin: `http://127.0.0.1:${port}`,
    process: child,
    messages,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = once(child, 'exit');
      child.kill(signal);
      await done;
    },
  };
}
