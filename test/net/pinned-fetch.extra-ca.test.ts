/**
 * The pinned fetch trusts what Node trusts by default, `NODE_EXTRA_CA_CERTS` included, whether or
 * not it is given certificates of its own (`ca`, which in Node's https would replace them all).
 * `NODE_EXTRA_CA_CERTS` is read when Node starts, so each case runs in a node process of its own.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificate, startDocumentServer, type DocumentServer } from '../support/document-server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'oob-extra-ca-'));
let docs: DocumentServer;
/** The document server's certificate, as a file for NODE_EXTRA_CA_CERTS. */
let serverCaFile: string;
/** A certificate that has nothing to do with the document server. */
let otherCa: string;

beforeAll(async () => {
  docs = await startDocumentServer();
  docs.serve('/client.json', { json: { client_id: 'x' } });
  serverCaFile = join(dir, 'server-ca.pem');
  writeFileSync(serverCaFile, docs.ca);
  otherCa = makeCertificate('/CN=Other CA').cert;
});
afterAll(async () => {
  await docs?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs pinnedFetch in a fresh node process; resolves its status, or the refusal's reason. */
async function fetchInNode(env: Record<string, string>, ca: string[] | undefined): Promise<string> {
  const script = `
    import { pinnedFetch } from ${JSON.stringify(join(ROOT, 'src/net/pinned-fetch.ts'))};
    const ca = JSON.parse(process.env.TEST_CA);
    pinnedFetch(new URL(process.env.TEST_URL), { timeoutMs: 5000, maxBytes: 65536, allowLoopback: true, ...(ca ? { ca } : {}) })
      .then((res) => console.log(String(res.status)), (err) => console.log(err.reason ?? String(err)));
  `;
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, TEST_URL: `${docs.origin}/client.json` };
  childEnv.TEST_CA = JSON.stringify(ca ?? null);
  if (env.NODE_EXTRA_CA_CERTS === undefined) delete childEnv.NODE_EXTRA_CA_CERTS;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: ROOT, env: childEnv },
  );
  return stdout.trim();
}

describe('NODE_EXTRA_CA_CERTS', () => {
  it('without it, the self-signed server is refused, with or without another ca', async () => {
    expect(await fetchInNode({}, undefined)).toBe('network');
    expect(await fetchInNode({}, [otherCa])).toBe('network');
  }, 30_000);

  it('with it and no ca, the server is trusted', async () => {
    expect(await fetchInNode({ NODE_EXTRA_CA_CERTS: serverCaFile }, undefined)).toBe('200');
  }, 30_000);

  it('with it and a ca of its own, the server is still trusted (the ca adds to it)', async () => {
    expect(await fetchInNode({ NODE_EXTRA_CA_CERTS: serverCaFile }, [otherCa])).toBe('200');
  }, 30_000);

  it('a ca given for the server is trusted without it', async () => {
    expect(await fetchInNode({}, [readFileSync(serverCaFile, 'utf8')])).toBe('200');
  }, 30_000);
});
