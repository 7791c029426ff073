import { XMLParser } from 'fast-xml-parser';
import { SERVER_TYPE, SIGNON_TYPE } from './constants.js';
import { parseHttpUrl } from './realm.js';

/** An OpenID 2.0 service found by discovery. */
export interface OpenIdService {
  /** `server`: an OP Identifier Element; `signon`: a Claimed Identifier Element. */
  kind: 'server' | 'signon';
  /** The OP endpoint URL, normalised by the WHATWG URL parser. */
  endpoint: string;
  /** The OP-Local Identifier of a `signon` service, normalised, or `null`. */
  localId: string | null;
}

const parser = (): XMLParser =>
  new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    removeNSPrefix: true,
    parseTagValue: false,
    parseAttributeValue: false,
    isArray: (name) => ['XRD', 'Service', 'Type', 'URI', 'LocalID'].includes(name),
  });

/**
 * Extracts the OpenID 2.0 services of a Yadis XRDS document, best first: OP Identifier Elements
 * before Claimed Identifier Elements (section 7.3.2.2), then by `priority` (lower first, absent
 * last), then in document order. Only the last XRD counts (XRI Resolution 2.0 section 9), and only
 * http(s) URIs are kept, so an XRI never gets through.
 *
 * @returns the services, or `null` if the text is not an XRDS document.
 * @see OpenID 2.0 section 7.3.2, Yadis 1.0 section 7
 */
export function parseXrds(text: string): OpenIdService[] | null {
  // A DOCTYPE is never needed in XRDS; refusing it rules out entity-expansion tricks outright.
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) return null;
  let doc: unknown;
  try {
    doc = parser().parse(text);
  } catch {
    return null;
  }
  const root = field(doc, 'XRDS');
  if (root === undefined) return null;
  const xrds = field(root, 'XRD');
  const xrd = Array.isArray(xrds) ? xrds.at(-1) : undefined;
  const services = field(xrd, 'Service');
  if (!Array.isArray(services)) return [];
  const ranked: { service: OpenIdService; rank: number; priority: number }[] = [];
  for (const node of services) {
    const types = list(field(node, 'Type')).map(textOf);
    const kind = types.includes(SERVER_TYPE) ? 'server' : types.includes(SIGNON_TYPE) ? 'signon' : null;
    const endpoint = bestUri(list(field(node, 'URI')));
    if (kind === null || endpoint === null) continue;
    const localIdText = kind === 'signon' ? textOf(list(field(node, 'LocalID'))[0]) : null;
    const localId = localIdText ? parseHttpUrl(localIdText)?.href : null;
    if (localId === undefined) continue; // a LocalID that is not an http(s) URL (an XRI, say)
    ranked.push({
      service: { kind, endpoint, localId },
      rank: kind === 'server' ? 0 : 1,
      priority: priorityOf(node),
    });
  }
  ranked.sort((a, b) => a.rank - b.rank || a.priority - b.priority);
  return ranked.map((r) => r.service);
}

function bestUri(uris: unknown[]): string | null {
  const usable = uris
    .map((node, index) => ({ url: parseHttpUrl(textOf(node) ?? ''), priority: priorityOf(node), index }))
    .filter((u): u is { url: URL; priority: number; index: number } => u.url !== null)
    .sort((a, b) => a.priority - b.priority || a.index - b.index);
  return usable[0]?.url.href ?? null;
}

function priorityOf(node: unknown): number {
  const raw = field(node, '@_priority');
  return typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : Number.POSITIVE_INFINITY;
}

function textOf(node: unknown): string | null {
  if (typeof node === 'string') return node.trim();
  const text = field(node, '#text');
  return typeof text === 'string' ? text.trim() : null;
}

function field(node: unknown, name: string): unknown {
  return typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[name] : undefined;
}

function list(node: unknown): unknown[] {
  return Array.isArray(node) ? node : [];
}
