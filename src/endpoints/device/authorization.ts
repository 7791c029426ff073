import { OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import { startDeviceAuthorization } from '../../grants/device.js';
import { clientRequestScopes } from '../../rules/scopes.js';
import { requestedResource } from '../../rules/resources.js';
import { json } from '../../http/answer.js';
import { readClientForm } from '../shared/form.js';
import { optionalParam } from '../../http/params.js';
import { endpoint } from '../shared/pipeline.js';
import { ephemeralKeys } from '../../storage/keys.js';
import { isPublicClient } from '../../rules/client-kind.js';
import { addressKey, countInWindow, overLimit } from '../shared/client-rate-limit.js';
import {
  authenticateOrNamePublicClient,
  limitFailures,
  loadClientRows,
  type ClientContext,
} from '../shared/client-auth.js';

/**
 * The device authorization endpoint (RFC 8628 3.1): `POST /oauth/device_authorization`. A client
 * registered for the device grant asks for a device code and a user code, authenticating as at
 * the token endpoint (a public client names itself with `client_id` alone); the answer tells the
 * device where the person goes (`verification_uri`) and how often it may poll.
 *
 * @see RFC 8628 sections 3.1, 3.2
 */
export const deviceAuthorizationEndpoint = endpoint<ClientContext>({
  name: 'device_authorization',
  method: 'POST',
  path: '/oauth/device_authorization',
  kind: 'json',
  steps: [
    readClientForm('4kb', 10),
    loadClientRows(() => ({})),
    authenticateOrNamePublicClient,
    limitFailures,
    startDevice,
  ],
});

async function startDevice(ctx: ClientContext): Promise<void> {
  const { server, client, params, req } = ctx;
  if (client.grantType !== 'device_code') {
    throw new OAuthError('unauthorized_client', 'This client is not registered for the device flow.');
  }
  const scopes = clientRequestScopes(optionalParam(params, 'scope'), client, server.options.scopes);
  const resource = requestedResource(server.resources, client, {
    value: optionalParam(params, 'resource'),
    repeated: false,
  });
  const resources = resource === undefined ? [] : [resource.resource];
  await limitRequests(ctx);
  const { codeTtl, interval } = server.options.device;
  const response = await startDeviceAuthorization(
    server,
    client,
    { scopes, resources },
    {
      codeTtl,
      interval,
      verificationUri: server.urls.device,
    },
  );
  emit(server, { type: 'device.requested', clientId: client.clientId, scopes, ...eventContext(req) });
  ctx.answer = json(response);
}

/**
 * A flood of requests of one client is refused with 429 until the minute ends: each one leaves a
 * user code live that a person could be tricked into typing, and guessing gets easier the more
 * there are. A public client's are counted per address too: anyone may use its `client_id`, and
 * must not lock its other users out.
 */
async function limitRequests(ctx: ClientContext): Promise<void> {
  const { server, client, req } = ctx;
  const max = server.options.device.maxRequestsPerClient;
  if (max === false) return;
  const address = isPublicClient(client) ? `:address:${addressKey(server, req) ?? 'unknown'}` : '';
  const key = ephemeralKeys.rateLimit(`device:client:${client.clientId}${address}`);
  const wait = await countInWindow(server, key, max, 60_000);
  if (wait !== undefined) {
    const description = 'Too many device authorization requests. Try again later.';
    throw overLimit(server, req, { limit: 'device_authorization', per: 'client' }, description, wait);
  }
}
