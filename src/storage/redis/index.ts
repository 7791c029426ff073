/**
 * `openid-oauth-bridge/redis`: the ephemeral store on Redis, for app instances that share their
 * codes, nonces, login sessions and rate limits through Redis while durable state stays in SQL,
 * and `composeStorage`, which puts the two together (any other ephemeral store too).
 * Needs the optional peer dependency `redis` (node-redis 5 or later).
 *
 * @packageDocumentation
 */
export { composeStorage } from '../read.js';
export {
  redisEphemeralStore,
  type RedisEphemeralClient,
  type RedisEphemeralStoreOptions,
} from './ephemeral.js';
