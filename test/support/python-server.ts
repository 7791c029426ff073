import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { PYTHON } from './python-openid.js';

/** A test server script run by /usr/bin/python3 that printed `{"url": ...}` on stdout. */
export interface PythonServer {
  url: string;
  /** SIGTERM, then SIGKILL after 3 s; resolves when the process has exited. */
  close(): Promise<void>;
}

/**
 * Starts `script` (a python3-openid server that listens on 127.0.0.1 and prints its URL as one
 * JSON line) and resolves once it listens. The child stops when its stdin closes, so a test run
 * that dies leaves no server behind.
 */
export async function spawnPythonServer(script: string): Promise<PythonServer> {
  const child = spawn(PYTHON, [script], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start: ${stderr}`)), 10_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}: ${stderr}`));
    });
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  return {
    url,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
