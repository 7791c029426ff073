import { OAuthError } from '../../errors/oauth-error.js';
import { eventContext } from '../../events/emit.js';
import { json } from '../../http/answer.js';
import { readClientForm } from '../../http/form.js';
import { requiredParam } from '../../http/params.js';
import { endpoint } from '../../http/pipeline.js';
import { authenticateClient, limitFailures, type ClientContext } from '../client-auth/authenticate.js';
import type { GrantDeps } from '../../grants/deps.js';
import { readAhead, readAheadWith, type ReadOperation } from '../../storage/read-ahead.js';
import type { AccessTokenAhead } from '../../grants/tokens.js';
import { presentedClientId } from '../client-auth/credentials.js';
import { clientAuthRateLimit } from '../client-auth/rate-limit.js';
import { grants } from './grants.js';

interface TokenContext extends ClientContext {
  grant: (typeof grants)[string];
  /** What the grant wrote with the reads, handed out only once its checks pass. */
  ahead?: AccessTokenAhead & { saved: boolean };
}

/**
 * The token endpoint (RFC 6749 3.2): `POST /oauth/token` with an
 * `application/x-www-form-urlencoded` body, for the `authorization_code` and `refresh_token`
 * grants. The grant asked for is checked before the client is; failed client authentications
 * are rate limited.
 *
 * @see RFC 6749 sections 4.1.3, 5.1, 5.2, 6
 */
export const tokenEndpoint = endpoint<TokenContext>({
  name: 'token',
  method: 'POST',
  path: '/oauth/token',
  kind: 'json',
  steps: [readClientForm('8kb', 20), chooseGrant, readAtOnce, authenticateClient, limitFailures, issueTokens],
});

function chooseGrant(ctx: TokenContext): void {
  const grantType = requiredParam(ctx.params, 'grant_type');
  const grant = Object.hasOwn(grants, grantType) ? grants[grantType] : undefined;
  if (!grant) {
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
  }
  ctx.grant = grant;
}

/**
 * Step: reads at once what the steps after it read first (one round trip on PostgreSQL): the
 * presented client, its rate-limit counters, and the code or refresh token presented; a refresh
 * saves its access token in the same batch, handed out only once every check has passed.
 */
function readAtOnce(ctx: TokenContext): void | Promise<void> {
  const { server, req, params } = ctx;
  if (server.storage.batch === undefined) return;
  const now = server.clock();
  const clientId = presentedClientId(req);
  const reads: ReadOperation[] = clientId === undefined ? [] : [{ op: 'clients.find', clientId }];
  for (const key of clientAuthRateLimit(server)?.keys(req) ?? [])
    reads.push({ op: 'ephemeral.get', key, now });
  const writeAhead =
    clientId !== undefined && server.storage.batchSavesRoundTrips === true ? { clientId } : undefined;
  const first = ctx.grant.first(server, params, now, writeAhead);
  reads.push(...first.reads);
  const { ahead } = first;
  if (ahead === undefined) {
    return readAhead(server.storage, reads).then((storage) => {
      ctx.storage = storage;
    });
  }
  return readAheadWith(server.storage, [ahead.write], reads).then(({ storage, written }) => {
    ctx.storage = storage;
    ctx.ahead = { ...ahead, saved: written[0] === true };
  });
}

function issueTokens(ctx: TokenContext): Promise<void> {
  const { server, storage } = ctx;
  const deps: GrantDeps =
    storage === server.storage
      ? server
      : { storage, clock: server.clock, options: server.options, events: server.events };
  return ctx.grant
    .handle(server, ctx.client, ctx.params, () => eventContext(ctx.req), deps, ctx.ahead)
    .then((tokens) => {
      ctx.answer = json(tokens);
    });
}
