import type { Response } from 'express';

/** RFC 6749 5.1: token responses and anything carrying a secret must not be cached. */
export function setNoStore(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
}

const PAGE_HEADERS: readonly (readonly [string, string])[] = [
  ['Cache-Control', 'no-store'],
  ['Pragma', 'no-cache'],
  [
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; img-src data: https:; frame-ancestors 'none'; base-uri 'none'",
  ],
  ['X-Frame-Options', 'DENY'],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
];

/**
 * Headers for every HTML page the library renders: never cached, never framed (clickjacking of
 * the consent page, RFC 6819 4.4.1.9), no Referer leaking codes or tokens, no scripts at all;
 * images only from `data:` or https (the providers' icons).
 */
export function setPageHeaders(res: Response): void {
  // setHeader, not res.set: none is Content-Type, which is all res.set would add.
  for (const [name, value] of PAGE_HEADERS) res.setHeader(name, value);
}
