import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { rawRequest } from './raw-http.js';

/**
 * Debian's python3-openid, the provider written elsewhere that the interoperability tests run
 * against. It must be /usr/bin/python3: the python3 on PATH may not see Debian's packages.
 */
export const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./python-openid-provider.py', import.meta.url));

export type Availability = { ok: true } | { ok: false; reason: string };

let checked: Availability | undefined;

/**
 * Whether /usr/bin/python3 can import the library. Missing is reported in the suite name and on
 * stderr; under CI it throws instead, failing the test file, so a CI run can never pass without
 * having run the provider.
 */
export function pythonOpenIdAvailability(): Availability {
  checked ??= probe();
  if (!checked.ok) {
    if (process.env.CI) {
      throw new Error(`${checked.reason} (CI is set: the python3-openid interoperability tests must run)`);
    }
    console.warn(
      `NOT TESTED: ${checked.reason}. Install it with: apt-get install -y --no-install-recommends python3-openid`,
    );
  }
  return checked;
}

function probe(): Availability {
  const run = spawnSync(PYTHON, ['-c', 'import openid.server.server, openid.store.memstore'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (run.error) return { ok: false, reason: `${PYTHON} cannot run (${run.error.message})` };
  if (run.status !== 0) {
    const last = run.stderr.trim().split('\n').at(-1) ?? '';
    return { ok: false, reason: `${PYTHON} cannot import python3-openid (${last})` };
  }
  return { ok: true };
}

/** Settings of the provider's /_control; see DEFAULTS in python-openid-provider.py. */
export interface PythonProviderSettings {
  answer?: 'approve' | 'cancel';
  user?: string;
  claimedId?: string;
  identity?: string;
  opEndpoint?: string;
  identifierEndpoint?: string;
  identifierXrdsLocation?: string;
  identifierRedirect?: string;
  userEndpoint?: string;
  userLocalId?: string;
  userXrdsLocation?: string;
}

export interface PythonProvider {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The OP identifier (an XRDS document naming the endpoint): `${url}/`. */
  identifier: string;
  /** The OP endpoint: `${url}/openid`. */
  endpoint: string;
  /** A user's claimed identifier (an HTML page with openid2.provider). */
  userUrl(name: string): string;
  /** Replaces every setting: unnamed ones return to the honest defaults. */
  configure(settings?: PythonProviderSettings): Promise<void>;
  /** Requests received so far, by kind: discovery, checkid_setup, check_authentication, ... */
  stats(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** Starts the python3-openid provider on 127.0.0.1 and a free port. */
export async function startPythonProvider(): Promise<PythonProvider> {
  const child = spawn(PYTHON, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`python provider did not start: ${stderr}`)), 10_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`python provider exited with ${code}: ${stderr}`));
    });
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  return {
    url,
    identifier: `${url}/`,
    endpoint: `${url}/openid`,
    userUrl: (name) => `${url}/user/${encodeURIComponent(name)}`,
    async configure(settings = {}) {
      const res = await rawRequest(`${url}/_control`, { method: 'POST', body: JSON.stringify(settings) });
      if (res.status !== 204) throw new Error(`python provider refused the settings: ${res.body}`);
    },
    async stats() {
      return JSON.parse((await rawRequest(`${url}/_stats`)).body) as Record<string, number>;
    },
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
