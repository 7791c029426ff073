import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./instance-process.ts', import.meta.url));

export interface Instance {
  /** Where this instance listens, e.g. http://127.0.0.1:4711. */
  origin: string;
  process: ChildProcess;
  /** Stops it with SIGTERM (or the signal given) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface InstanceConfig {
  databaseUrl: string;
  baseUrl: string;
  providers: { name: string; identifier: string }[];
  sessionSecret: string;
}

/** Starts `test/support/instance-process.ts` as a child process and waits until it listens. */
export async function startInstance(config: InstanceConfig): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    env: {
      ...process.env,
      DATABASE_URL: config.databaseUrl,
      BASE_URL: config.baseUrl,
      PROVIDERS: JSON.stringify(config.providers),
      SESSION_SECRET: config.sessionSecret,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit').then(() => {
    throw new Error(`instance exited before listening:\n${stderr}`);
  });
  const listening = (async () => {
    for await (const line of lines) {
      if (line.startsWith('{')) return (JSON.parse(line) as { port: number }).port;
    }
    throw new Error(`instance closed stdout before listening:\n${stderr}`);
  })();
  const port = await Promise.race([listening, exited]);
  exited.catch(() => undefined);
  return {
    origin: `http://127.0.0.1:${port}`,
    process: child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = once(child, 'exit');
      child.kill(signal);
      await done;
    },
  };
}
