/**
 * The packed tarball, installed as a stranger installs it (no workspace link), in a fresh ESM app,
 * a fresh CommonJS app and a fresh TypeScript app that has only typescript, @types/node and
 * @types/express besides the package. Also loads both builds in one process (the dual-package
 * hazard). Dependencies come from npm's cache, so the test runs offline.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { freePort, runCodeFlow, runProgram } from '../examples/run-example.js';
import { Browser, firstForm, firstLink, signInAtDevelopmentProvider } from '../support/browser.js';
import { developerPageTryIt } from './developer-page-try-it.js';
import { pack, ROOT, type Packed } from './packed.js';
import { readmeQuickStart } from './readme-quick-start.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
let packed: Packed;
let esmApp: string;
/** An app with the conformance kit's optional peer, fast-check, as docs/custom-adapter.md says. */
let kitApp: string;
let cjsApp: string;
let tsApp: string;
let readmeEsmApp: string;
let readmeCjsApp: string;
const quickStart = readmeQuickStart();
const tryIt = developerPageTryIt();

/**
 * The storage driver's native addon. `npm ci --ignore-scripts` (offline, as CI runs it) skips the
 * install script that would build it; the build is the one this repository's `npm ci` made for
 * this machine, so the app gets that file, as its own install script would have made it.
 */
function copyNativeAddons(app: string) {
  for (const driver of quickStart.drivers) {
    const release = join('node_modules', driver, 'build', 'Release');
    for (const file of ['better_sqlite3.node']) {
      if (!existsSync(join(ROOT, release, file))) continue;
      mkdirSync(join(app, release), { recursive: true });
      copyFileSync(join(ROOT, release, file), join(app, release, file));
    }
  }
}

beforeAll(async () => {
  packed = await pack();
  [esmApp, cjsApp, tsApp, readmeEsmApp, readmeCjsApp, kitApp] = await Promise.all([
    packed.app('esm-app', { type: 'module' }),
    packed.app('cjs-app', { type: 'commonjs' }),
    packed.app('ts-app', { type: 'module' }, ['typescript', '@types/node', '@types/express']),
    // A stranger's `npm init -y` makes a CommonJS package; the ESM program is an .mjs file in it.
    packed.app('readme-esm-app', { type: 'module' }, quickStart.drivers),
    packed.app('readme-cjs-app', { type: 'commonjs' }, quickStart.drivers),
    packed.app('kit-app', { type: 'module' }, ['fast-check']),
  ]);
  copyNativeAddons(readmeEsmApp);
  copyNativeAddons(readmeCjsApp);
}, 420_000);
// Deleting the apps' node_modules took from 5 to over 20 s here, past the default hook timeout.
afterAll(() => packed?.dispose(), 60_000);

const rootUrls = (port = '\\d+') => ({
  oauth: {
    authorization: {
      href: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${port}/oauth/authorize$`)),
    },
    token: { href: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${port}/oauth/token$`)) },
  },
});

describe('the packed tarball', () => {
  it('holds the builds (ESM, CJS, types), the node10 stubs and every file the README links', () => {
    const paths = packed.files.map((f) => f.path);
    for (const file of [
      'dist/index.js',
      'dist/index.cjs',
      'dist/index.d.ts',
      'dist/index.d.cts',
      'dist/pages/index.js',
      'dist/pages/index.cjs',
      'dist/openid/index.js',
      'dist/openid/index.cjs',
      'dist/testing/index.js',
      'dist/testing/index.cjs',
      'dist/redis/index.js',
      'dist/redis/index.cjs',
      'dist/storage/index.js',
      'dist/storage/index.cjs',
      'dist/cli.js',
      'pages/package.json',
      'openid/package.json',
      'testing/package.json',
      'redis/package.json',
      'storage/package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'package.json',
    ]) {
      expect(paths).toContain(file);
    }
    // Every relative link and image of the README resolves in the package.
    const linked = new Set<string>();
    for (const document of ['README.md']) {
      const text = readFileSync(join(ROOT, document), 'utf8');
      const dir = document.includes('/') ? document.slice(0, document.lastIndexOf('/') + 1) : '';
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)|src="([^"]+)"/g)) {
        if (!target || /^[a-z]+:|^#|^\/\//i.test(target)) continue;
        const path = new URL(target.split('#')[0]!, `file:///${dir}`).pathname.slice(1);
        linked.add(path);
      }
    }
    const missing = [...linked].filter(
      (path) => !paths.includes(path) && !paths.some((p) => p.startsWith(`${path.replace(/\/$/, '')}/`)),
    );
    expect(missing).toEqual([]);
    // Nothing that is not for users: sources, tests, configuration.
    expect(paths.filter((p) => /^(src|test|bench\/(?!README)|\.ci)\b/.test(p))).toEqual([]);
    console.log(
      `packed: ${paths.length} files, ${(packed.size / 1024).toFixed(1)} KiB packed, ` +
        `${(packed.unpackedSize / 1024).toFixed(1)} KiB unpacked`,
    );
  });

  it('runs the quick start in a fresh ESM app (import)', async () => {
    copyFileSync(join(FIXTURES, 'quick-start.mjs'), join(esmApp, 'index.mjs'));
    const out = JSON.parse(await packed.run(esmApp, process.execPath, ['index.mjs'])) as unknown;
    expect(out).toEqual({ status: 200, body: rootUrls() });
  });

  it('runs the quick start in a fresh CommonJS app (require)', async () => {
    copyFileSync(join(FIXTURES, 'quick-start.cjs'), join(cjsApp, 'index.js'));
    const out = JSON.parse(await packed.run(cjsApp, process.execPath, ['index.js'])) as unknown;
    expect(out).toEqual({ status: 200, body: rootUrls() });
  });

  it('loads every entry with import and with require', async () => {
    const entries = {
      'openid-oauth-bridge': 'createAuthorizationServer',
      'openid-oauth-bridge/pages': 'html',
      'openid-oauth-bridge/openid': 'RelyingParty',
      'openid-oauth-bridge/testing': 'startDevelopmentProvider',
      'openid-oauth-bridge/redis': 'redisEphemeralStore',
      'openid-oauth-bridge/storage': 'sqlStorage',
    };
    const program = `
      const entries = ${JSON.stringify(entries)};
      const require = (await import('node:module')).createRequire(import.meta.url);
      const out = {};
      for (const [specifier, name] of Object.entries(entries)) {
        out[specifier] = [typeof (await import(specifier))[name], typeof require(specifier)[name]];
      }
      console.log(JSON.stringify(out));`;
    const out = JSON.parse(
      await packed.run(esmApp, process.execPath, ['--input-type=module', '-e', program]),
    ) as unknown;
    expect(out).toEqual(
      Object.fromEntries(Object.keys(entries).map((specifier) => [specifier, ['function', 'function']])),
    );
  });

  it('loads the observability entry without @opentelemetry/api, which only openTelemetry() asks for (issue 41)', async () => {
    // The fresh app has no @opentelemetry/api (an optional peer): the builds must not bundle it
    // either, or openTelemetry() would start instead of saying what to install.
    expect(existsSync(join(esmApp, 'node_modules', '@opentelemetry'))).toBe(false);
    const program = `
      const require = (await import('node:module')).createRequire(import.meta.url);
      const esm = await import('openid-oauth-bridge/observability');
      const cjs = require('openid-oauth-bridge/observability');
      const out = [];
      for (const entry of [esm, cjs]) {
        out.push([entry.TRACE_NAMES.length > 0, await entry.openTelemetry().then(() => 'started', (err) => err.message)]);
      }
      console.log(JSON.stringify(out));`;
    const out = JSON.parse(
      await packed.run(esmApp, process.execPath, ['--input-type=module', '-e', program]),
    ) as unknown;
    const refused = [true, expect.stringContaining('npm install @opentelemetry/api')];
    expect(out).toEqual([refused, refused]);
  });

  it(
    'runs the custom adapter example with the kit from the installed package, as docs/custom-adapter.md says',
    { timeout: 60_000 },
    async () => {
      // `npx tsx node_modules/openid-oauth-bridge/examples/custom-adapter.ts` in the app (the root's
      // tsx, since the app installs only the package and fast-check): no tsconfig of the repository.
      const tsx = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
      const out = await packed.run(kitApp, process.execPath, [
        tsx,
        join('node_modules', 'openid-oauth-bridge', 'examples', 'custom-adapter.ts'),
      ]);
      expect(out).toMatch(/^# fail 0$/m);
      expect(out).toMatch(/^# pass [1-9][0-9]*$/m);
    },
  );

  it('runs the CLI from the package bin', async () => {
    const help = await packed.run(esmApp, join(esmApp, 'node_modules', '.bin', 'openid-oauth-bridge'), [
      '--help',
    ]);
    expect(help).toContain('Usage: openid-oauth-bridge');
  });
});

describe("the README's own quick start, installed from the tarball with the driver its install line names", () => {
  it('names a storage driver, the settings it reads, and the request that gets a code', () => {
    expect(quickStart.drivers).toEqual(['better-sqlite3']);
    expect(quickStart.env).toEqual(['SESSION_SECRET', 'OPENID_PROVIDER']);
    expect(Object.fromEntries(quickStart.authorize.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'photo-printer',
      redirect_uri: 'https://printer.example/callback',
      scope: 'realms:read',
    });
  });

  it.each([
    ['ESM', () => readmeEsmApp, () => quickStart.esmFile, () => quickStart.esm],
    ['CommonJS', () => readmeCjsApp, () => quickStart.commonjsFile, () => quickStart.commonjs],
  ])(
    'the %s program runs as written, gives a token, and starts again on its database',
    { timeout: 90_000 },
    async (_kind, app, file, code) => {
      writeFileSync(join(app(), file()), code());
      // The README's ports (3000, 4000) may be taken here: free ones instead.
      const [port, providerPort] = [await freePort(), await freePort()];
      const providerIdentifier = quickStart.provider.identifier.replace(':4000', `:${providerPort}`);
      const provider = runProgram(
        'the development provider',
        [
          '--input-type=module',
          '-e',
          quickStart.provider.script.replace('port: 4000', `port: ${providerPort}`),
        ],
        app(),
        {},
      );
      onTestFinished(() => provider.stop().then(() => undefined));
      // Only what the README's run line sets, and PORT, which the program reads.
      const env = {
        SESSION_SECRET: 'a session secret of at least 32 characters',
        OPENID_PROVIDER: providerIdentifier,
        PORT: String(port),
        DATABASE_URL: undefined, // its default: sqlite:./.data/quick-start.db
      };
      const request = quickStart.authorize.searchParams;
      const flow = (clientSecret: string, consentRemembered = false) =>
        runCodeFlow(
          {
            baseUrl: `http://localhost:${port}`,
            origin: `http://127.0.0.1:${port}`,
            clientId: request.get('client_id')!,
            clientSecret,
            redirectUri: request.get('redirect_uri')!,
            scope: request.get('scope')!,
            providerIdentifier,
            user: 'alice',
            consentRemembered,
          },
          '/v1/realms',
        );
      await expect
        .poll(() =>
          fetch(providerIdentifier).then(
            (r) => r.status,
            () => 0,
          ),
        )
        .toBe(200);

      const first = runProgram(file(), [file()], app(), env);
      let clientSecret: string;
      try {
        [, clientSecret = ''] = await first.waitFor(/secret \(shown once\): (\S+)/);
        await first.waitFor(/listening on/);
        const { body } = await flow(clientSecret);
        expect(body).toEqual({ user: expect.any(String), realms: ['Ravenholm'] });
      } finally {
        await first.stop();
      }
      expect(existsSync(join(app(), '.data', 'quick-start.db'))).toBe(true);

      // The second start finds its client, keeps it (the secret still works) and says nothing.
      const second = runProgram(file(), [file()], app(), env);
      try {
        await second.waitFor(/listening on/);
        const { body } = await flow(clientSecret, true); // the consent is in the database too
        expect(body).toMatchObject({ realms: ['Ravenholm'] });
        expect(second.output()).toBe(`listening on http://localhost:${port}\n`);
      } finally {
        await second.stop();
      }
    },
  );
});

describe("docs/developer-page.md's try-it, from the tarball", () => {
  it('names express and the tarball, the program to save, and the requests to send', () => {
    expect(tryIt.packages).toEqual(['express']);
    expect(tryIt.file).toBe('app.mjs');
    expect(Object.fromEntries(tryIt.authorize.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'CLIENT_ID',
      redirect_uri: tryIt.redirectUri,
      scope: 'realms:read',
    });
  });

  it(
    'a member signs in at the development provider, creates a confidential app on the pages, and gets a token with its secret',
    { timeout: 60_000 },
    async () => {
      // The app docs/developer-page.md makes (`npm init -y`: CommonJS; express and the tarball) is
      // the CommonJS app; the program is an .mjs file in it.
      const app = cjsApp;
      writeFileSync(join(app, tryIt.file), tryIt.program);
      // The page's port (3000) may be taken here: a free one instead, through PORT.
      const port = await freePort();
      const onPort = (text: string) => text.replaceAll('localhost:3000', `localhost:${port}`);
      const program = runProgram(tryIt.file, [tryIt.file], app, { PORT: String(port) });
      onTestFinished(() => program.stop().then(() => undefined));
      const [, printed] = await program.waitFor(/developer page: (\S+)/);
      const developers = onPort(tryIt.developersUrl.href);
      expect(printed).toBe(developers);

      const baseUrl = `http://localhost:${port}`;
      const browser = new Browser(baseUrl);
      const get = (url: string) => browser.request(`http://127.0.0.1:${port}`, url);
      const post = (url: string, fields: Record<string, string>) =>
        browser.request(`http://127.0.0.1:${port}`, url, {
          method: 'POST',
          // What a browser sends with a form of the page: its own origin.
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: baseUrl },
          body: new URLSearchParams(fields),
        });

      // 1. The developer page: choose the development provider, sign in as alice.
      const selection = await get(developers);
      const selectionHtml = await selection.text();
      expect(selection.status).toBe(200);
      expect(selectionHtml).toContain('Development provider');
      const toProvider = await get(firstLink(selectionHtml)!);
      expect(toProvider.status).toBe(302);
      const callback = await get(
        await signInAtDevelopmentProvider(toProvider.headers.get('location')!, 'alice'),
      );
      expect(callback.status).toBe(303);
      expect(callback.headers.get('location')).toBe(developers);

      // 2. Create an application: web, confidential, the page's redirect URI and scope.
      const list = await (await get(developers)).text();
      expect(list).toContain(`href="${baseUrl}/developers/new"`);
      const form = firstForm(await (await get('/developers/new')).text())!;
      const scope = tryIt.authorize.searchParams.get('scope')!;
      const created = await post(form.action, {
        ...form.fields,
        name: 'My app',
        kind: 'web',
        client_type: 'confidential',
        redirect_uri: tryIt.redirectUri,
        [`scope.${scope}`]: 'on',
      });
      const createdHtml = await created.text();
      expect(created.status, createdHtml).toBe(200);

      // 3. The client id, and the secret shown this once.
      const clientId = /<code id="client-id">([^<]+)<\/code>/.exec(createdHtml)?.[1];
      const clientSecret = /<code class="secret" id="client-secret">([^<]+)<\/code>/.exec(createdHtml)?.[1];
      expect(clientId).toBeDefined();
      expect(clientSecret).toMatch(/^[\w-]{40,}$/);

      // 4. The authorization URL, signed in already: the consent page names the maker; trust it.
      const consent = await get(onPort(tryIt.authorize.href).replace('CLIENT_ID', clientId!));
      const consentHtml = await consent.text();
      expect(consent.status).toBe(200);
      expect(consentHtml).toMatch(/Made by <strong><bdi>[^<]*\/user\/alice<\/bdi><\/strong>/);
      expect(consentHtml).toContain('The operator has not verified it');
      const decision = firstForm(consentHtml)!;
      const decided = await post(decision.action, { ...decision.fields, decision: 'allow' });
      expect(decided.status).toBe(303);
      const back = new URL(decided.headers.get('location')!);
      expect(back.origin + back.pathname).toBe(tryIt.redirectUri);
      const code = back.searchParams.get('code')!;

      // 5. The two curl commands, as the page writes them.
      const sh = async (command: string) => (await promisify(execFile)('sh', ['-c', command])).stdout;
      const tokens = JSON.parse(
        await sh(
          onPort(tryIt.tokenCommand)
            .replace('code=CODE', `code=${code}`)
            .replace('CLIENT_ID:CLIENT_SECRET', `${clientId}:${clientSecret}`),
        ),
      ) as Record<string, unknown>;
      const answered = JSON.parse(tryIt.tokenAnswer.replaceAll('…', '')) as Record<string, unknown>;
      expect(Object.keys(tokens)).toEqual(Object.keys(answered));
      expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope });
      const api = JSON.parse(
        await sh(onPort(tryIt.apiCommand).replace('ACCESS_TOKEN', tokens.access_token as string)),
      ) as unknown;
      expect(api).toEqual({ user: expect.any(String), realms: ['Ravenholm'] });

      // Back on the page, the application counts its one member.
      expect(await (await get(developers)).text()).toContain('1 member authorized it');
    },
  );
});

describe('one package identity, both builds in one process', () => {
  it('answers 401 (not 500) to a wrong client secret and the listeners hear it', async () => {
    copyFileSync(join(FIXTURES, 'dual-load.mjs'), join(esmApp, 'dual.mjs'));
    const out = JSON.parse(await packed.run(esmApp, process.execPath, ['dual.mjs'])) as {
      distinct: boolean;
      status: number;
      body: unknown;
      heard: string[];
      errors: string[];
    };
    expect(out.distinct).toBe(true); // really two copies
    expect(out.errors).toEqual([]);
    expect(out.body).toMatchObject({ error: 'invalid_client' });
    expect(out.status).toBe(401);
    expect(out.heard).toContain('client.authentication_failed');
  });
});

describe('one ClientIdTakenError, both builds in one process', () => {
  it("is an instance of either copy's class, whichever copy threw it", async () => {
    copyFileSync(join(FIXTURES, 'dual-client-id-taken.mjs'), join(esmApp, 'dual-taken.mjs'));
    const out = JSON.parse(await packed.run(esmApp, process.execPath, ['dual-taken.mjs'])) as Record<
      string,
      unknown
    >;
    expect(out).toEqual({
      distinct: true, // really two classes
      cjsErrorIsEsm: true,
      cjsErrorIsCjs: true,
      esmErrorIsCjs: true,
      esmErrorIsEsm: true,
      otherRefusalIsTaken: false,
      otherRefusal: expect.stringContaining('must use https'),
    });
  });
});

describe('the types, in a TypeScript app with only typescript, @types/node and @types/express', () => {
  /** Every name the package exports from `entry`, read from the packed declaration file. */
  function exportedNames(entry: string): string[] {
    const dts = readFileSync(join(tsApp, 'node_modules', 'openid-oauth-bridge', 'dist', entry), 'utf8');
    return [...dts.matchAll(/^export \{([^}]*)\}/gm)].flatMap(([, list]) =>
      list!
        .split(',')
        .map((item) => item.trim().replace(/^type /, ''))
        .filter(Boolean)
        .map((item) => item.split(/\s+as\s+/).pop()!),
    );
  }

  beforeAll(() => {
    copyFileSync(join(FIXTURES, 'quick-start.ts'), join(tsApp, 'quick-start.ts'));
    const reexports = (extension: string) =>
      [
        ['openid-oauth-bridge', 'index.d.ts'],
        ['openid-oauth-bridge/pages', 'pages/index.d.ts'],
        ['openid-oauth-bridge/openid', 'openid/index.d.ts'],
        ['openid-oauth-bridge/testing', 'testing/index.d.ts'],
        ['openid-oauth-bridge/redis', 'redis/index.d.ts'],
        ['openid-oauth-bridge/storage', 'storage/index.d.ts'],
      ]
        .map(([specifier, dts]) => {
          const names = exportedNames(dts!.replace('.d.ts', extension));
          expect(names.length).toBeGreaterThan(2);
          return `export { ${names.join(', ')} } from '${specifier}';`;
        })
        .join('\n');
    // Every public export, through import (ESM) and require (a .cts file, the CJS declarations).
    writeFileSync(join(tsApp, 'every-export.ts'), `${reexports('.d.ts')}\n`);
    writeFileSync(join(tsApp, 'every-export.cts'), `${reexports('.d.cts')}\n`);
  });

  const tsc = (args: string[]) =>
    packed.run(tsApp, process.execPath, [
      join(tsApp, 'node_modules', 'typescript', 'bin', 'tsc'),
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      'false',
      '--target',
      'es2022',
      '--types',
      'node',
      ...args,
    ]);

  // tsc checks @types/node and @types/express too (skipLibCheck false): some seconds each.
  it('compiles under moduleResolution node16 (ESM and CJS files)', { timeout: 60_000 }, async () => {
    await expect(
      tsc([
        '--module',
        'node16',
        '--moduleResolution',
        'node16',
        'quick-start.ts',
        'every-export.ts',
        'every-export.cts',
      ]),
    ).resolves.toBe('');
  });

  it('compiles under moduleResolution bundler', { timeout: 60_000 }, async () => {
    await expect(
      tsc(['--module', 'esnext', '--moduleResolution', 'bundler', 'quick-start.ts', 'every-export.ts']),
    ).resolves.toBe('');
  });

  it('keeps internals out of the declarations', () => {
    const dts = readFileSync(
      join(tsApp, 'node_modules', 'openid-oauth-bridge', 'dist', 'index.d.ts'),
      'utf8',
    );
    expect(dts).not.toMatch(/\boptionsSchema\b/);
    expect(dts).not.toMatch(/\bpeekSession\b/);
    expect(dts).not.toMatch(/\[DISPATCH\]|\[LISTENED\]/);
  });
});
