import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A player the {@link startSteamWebApi} fixture knows, as `GetPlayerSummaries` describes one. */
export interface SteamWebApiPlayer {
  personaname: string;
  /** Default: `https://avatars.steamstatic.com/<a hash>_full.jpg`, as Steam's. */
  avatarfull?: string;
  /** Default: `https://steamcommunity.com/profiles/<SteamID64>/`. */
  profileurl?: string;
  /** `private` answers with `communityvisibilitystate` 1, as Steam does for a private profile. Default `public`. */
  visibility?: 'public' | 'private';
}

/** Options of {@link startSteamWebApi}. */
export interface SteamWebApiOptions {
  /** The key requests must carry (`?key=`); another gets 403, as from Steam. Default: any. */
  key?: string;
  /**
   * Players by SteamID64; `null` leaves one out of the answer (as Steam does for no such account).
   * Any other SteamID64 is a public player named `Player <last 4 digits>`.
   */
  players?: Record<string, SteamWebApiPlayer | null>;
  /** Answer after this many milliseconds (a slow API). Default `0`; may be changed while running. */
  delayMs?: number;
  /** Answer every request with this status and no players (an API in trouble). Default `200`. */
  status?: number;
}

/** A running {@link startSteamWebApi}. */
export interface RunningSteamWebApi {
  /** Its base URL, for `steam({ webApi: { key, baseUrl } })`. */
  url: string;
  /** How many `GetPlayerSummaries` requests it has answered (the quota a cache saves). */
  readonly requests: number;
  /** Options that take effect from the next request. */
  delayMs: number;
  status: number;
  players: Record<string, SteamWebApiPlayer | null>;
  close(): Promise<void>;
}

/**
 * A Steam-Web-API-like server for tests and demos: `GET /ISteamUser/GetPlayerSummaries/v0002/`
 * with `key` and `steamids`, answered in the shape of Steam's (`{ response: { players: [...] } }`),
 * on 127.0.0.1 only. **For tests only**: it makes up players. Pair it with
 * `steam({ baseUrl: op.url, webApi: { key, baseUrl: api.url } })` and
 * `startDevelopmentProvider({ shape: 'steam' })` to try persona names and avatars locally.
 *
 * @example
 * const api = await startSteamWebApi({ key: 'TESTKEY0123456789', players: {
 *   '76561198000000042': { personaname: 'Gordon' } } });
 */
export async function startSteamWebApi(options: SteamWebApiOptions = {}): Promise<RunningSteamWebApi> {
  let requests = 0;
  const state = {
    delayMs: options.delayMs ?? 0,
    status: options.status ?? 200,
    players: { ...options.players },
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== '/ISteamUser/GetPlayerSummaries/v0002/') {
      res.writeHead(404).end();
      return;
    }
    requests += 1;
    const answer = () => {
      if (options.key !== undefined && url.searchParams.get('key') !== options.key) {
        res.writeHead(403, { 'content-type': 'text/html' }).end('<html><body>Forbidden</body></html>');
        return;
      }
      if (state.status !== 200) {
        res.writeHead(state.status, { 'content-type': 'application/json' }).end('{"response":{}}');
        return;
      }
      const ids = (url.searchParams.get('steamids') ?? '').split(',').filter((id) => /^[0-9]{17}$/.test(id));
      const players = ids
        .filter((id) => state.players[id] !== null)
        .map((id) => summary(id, state.players[id]));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ response: { players } }));
    };
    if (state.delayMs > 0) setTimeout(answer, state.delayMs);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.defineProperties(state, {
    url: { value: url, enumerable: true },
    requests: { get: () => requests, enumerable: true },
    close: {
      value: () =>
        new Promise<void>((resolve, reject) => {
          server.close((err) => (err ? reject(err) : resolve()));
          server.closeAllConnections();
        }),
    },
  }) as RunningSteamWebApi;
}

/** One player of a `GetPlayerSummaries` answer, in Steam's fields. */
function summary(steamId: string, player: SteamWebApiPlayer | null | undefined) {
  const hash = Buffer.from(steamId).toString('hex').slice(-40).padStart(40, '0');
  const avatar = `https://avatars.steamstatic.com/${hash}`;
  return {
    steamid: steamId,
    communityvisibilitystate: player?.visibility === 'private' ? 1 : 3,
    profilestate: 1,
    personaname: player?.personaname ?? `Player ${steamId.slice(-4)}`,
    profileurl: player?.profileurl ?? `https://steamcommunity.com/profiles/${steamId}/`,
    avatar: `${avatar}.jpg`,
    avatarmedium: `${avatar}_medium.jpg`,
    avatarfull: player?.avatarfull ?? `${avatar}_full.jpg`,
    personastate: 0,
  };
}
