import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A raw HTTP server on 127.0.0.1 with a random port, for hostile-server scenarios. */
export interface TestServer {
  url: string;
  /** Requests received so far. */
  hits(): number;
  /** TCP connections accepted so far, whether or not a request followed. */
  connections(): number;
  close(): Promise<void>;
}

export async function startServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('canary'),
): Promise<TestServer> {
  let hits = 0;
  let connections = 0;
  const server = createServer((req, res) => {
    hits += 1;
    handler(req, res);
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits: () => hits,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A server that counts requests and answers something harmless: it must never be reached. */
export const startCanary = (): Promise<TestServer> => startServer();

/** Accepts connections and never answers. */
export const startSilentServer = (): Promise<TestServer> => startServer(() => undefined);

/** Sends headers, then body bytes forever (`chunk` every `everyMs`), until the client leaves. */
export function startEndlessServer(
  chunk: string,
  everyMs: number,
  contentType = 'text/html',
): Promise<TestServer> {
  return startServer((_req, res) => {
    res.writeHead(200, { 'content-type': contentType });
    const timer = setInterval(() => res.write(chunk), everyMs);
    res.on('close', () => clearInterval(timer));
  });
}
