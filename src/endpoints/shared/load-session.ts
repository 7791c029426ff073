import type { Context } from './pipeline.js';
import { LoginSession } from '../../session/session.js';

/**
 * The step that loads the login session: express-session (the library's or the host's) runs, and
 * the session is read from the request that carries it.
 */
export async function loadSession(ctx: Context): Promise<void> {
  const { server, req, res } = ctx;
  const carrier = await server.session.load(req, res);
  ctx.session = new LoginSession(carrier, server.clock, server.session.own);
}
