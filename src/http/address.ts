import type { Request } from 'express';

const ADDRESS: unique symbol = Symbol('openid-oauth-bridge.address');

type Remembered = Request & { [ADDRESS]?: string | null };

/**
 * The request's address as Express reports it (`req.ip`, which honours the host's `trust proxy`
 * setting), read once: Express parses the forwarding headers again at every read of `req.ip`,
 * and a token request reads it for its rate limits and for each event it reports.
 */
export function addressOf(req: Request): string | undefined {
  const remembered = req as Remembered;
  let address = remembered[ADDRESS];
  if (address === undefined) {
    address = req.ip ?? null;
    remembered[ADDRESS] = address;
  }
  return address ?? undefined;
}
