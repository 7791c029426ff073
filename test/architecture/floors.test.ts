/**
 * The floors of docs/architecture.md hold because `npm run lint` fails when one slips: an endpoint
 * folder importing another endpoint folder, or a layer below the configuration importing it, the
 * server, an endpoint, the CLI or the kit. Checked here on the lint configuration itself, with
 * imports written into files where they must be refused (and where they are fine).
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

/** The messages of the floor rule for `source`, linted as if it were the file at `path`. */
async function floorErrors(path: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\nexport {};\n`, { filePath: path });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the floors, as the lint rule keeps them', () => {
  it.each([
    ['src/endpoints/token/x.ts', "import { continueAuthorization } from '../authorize/continue.js';"],
    ['src/endpoints/discovery/x.ts', "import type { TokenContext } from '../token/grants.js';"],
    ['src/grants/x.ts', "import type { AuthorizationServer } from '../config/server.js';"],
    ['src/http/x.ts', "import { handle } from '../endpoints/shared/pipeline.js';"],
    ['src/login/openid/x.ts', "import { createAuthorizationServer } from '../../server.js';"],
    ['src/storage/sql/x.ts', "import { MAX_PROVIDER_NAME_LENGTH } from '../../config/messages.js';"],
    ['src/rules/x.ts', "import { runCli } from '../cli/cli.js';"],
  ])('refuses in %s: %s', async (path, source) => {
    expect(await floorErrors(path, source)).toHaveLength(1);
  });

  it.each([
    ['src/endpoints/token/x.ts', "import { bearerSteps } from '../shared/bearer.js';"],
    ['src/endpoints/token/x.ts', "import { exchangeCode } from '../../grants/codes.js';"],
    ['src/endpoints/token/x.ts', "import type { AuthorizationServer } from '../../config/server.js';"],
    ['src/grants/x.ts', "import { SCOPE_TOKEN } from '../rules/scopes.js';"],
    ['src/config/x.ts', "import type { Storage } from '../storage/types.js';"],
  ])('lets through in %s: %s', async (path, source) => {
    expect(await floorErrors(path, source)).toEqual([]);
  });
});
