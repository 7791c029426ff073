import { json } from '../../http/answer.js';
import { endpoint, type Context } from '../shared/pipeline.js';

/**
 * How long a client may keep the JWK set: a key is published from the rotation before the one
 * that makes it sign, and every instance reads the keys again within a minute, so a set at most
 * this old holds every key that signs, as long as rotations are further apart (docs/openid-connect.md).
 */
const JWKS_MAX_AGE_S = 300;

/**
 * `GET /oauth/jwks`: the public keys that verify ID tokens (RFC 7517 5, OpenID Connect Core
 * 10.1.1): the next and the active keys, public parts only, each with `kid`, `alg` and `use`.
 * Cacheable for {@link JWKS_MAX_AGE_S} seconds and readable from any origin.
 */
export const jwksEndpoint = endpoint<Context>({
  name: 'jwks',
  method: 'GET',
  path: '/oauth/jwks',
  kind: 'json',
  steps: [
    async function publishKeys(ctx) {
      const { published } = await ctx.server.oidc!.keys.current();
      ctx.res.set({
        'Cache-Control': `public, max-age=${JWKS_MAX_AGE_S}`,
        'Access-Control-Allow-Origin': '*',
      });
      ctx.res.removeHeader('Pragma');
      ctx.answer = json({ keys: published });
    },
  ],
});
