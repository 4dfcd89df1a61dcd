/**
 * What the board accepts of a request, apart from Nest's own routing: the checks that keep a
 * page of another site from releasing locks with the admin's cookies (CSRF), and the query of
 * the lock list.
 */

import { quoteText } from '../core/keys/quote-key.js';

/** The header the board's own script sends with a release: a cross-site page cannot, without a CORS preflight. */
export const BOARD_HEADER = 'x-lock-board';

type Headers = Record<string, string | string[] | undefined>;

/** Why a release request could have come from another site, or `undefined` when it could not. */
export interface RefusedRequest {
  status: 403 | 415;
  message: string;
}

/**
 * A release must be JSON (a form, a multipart or a `text/plain` body is what an HTML form or a
 * "simple" cross-site request sends without asking) and carry `X-Lock-Board` (a custom header
 * makes the browser ask the server first, and the board approves no CORS preflight unless the
 * application's own CORS does, which the checks after it stand in for); when the
 * browser says where it comes from (`Sec-Fetch-Site`, `Origin`), it must be this very origin.
 * Clients that send neither (curl, scripts) are not browsers riding on a cookie.
 */
export function crossSiteRefusal(headers: Headers): RefusedRequest | undefined {
  const type = single(headers['content-type'])?.split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    return { status: 415, message: `A release must be sent as JSON (Content-Type: application/json), got ${show(type ?? 'no content type')}.` };
  }
  if (single(headers[BOARD_HEADER]) === undefined) {
    return { status: 403, message: `A release must carry the "X-Lock-Board" header that the board's own page sends.` };
  }
  return foreignSite(headers, 'a release');
}

/**
 * Why a read of the board (the lock list, the live feed, the page's script and style) could be
 * another site's, or `undefined`: the same browser checks as for a release. The application's
 * own CORS (`app.enableCors()`) covers the board's routes too, and would let any site read what
 * the board shows, with the admin's cookie if it allows credentials. A navigation (a link to the
 * board followed from elsewhere) is let through: its page is shown to the user, not to the site.
 */
export function crossSiteRead(method: string | undefined, headers: Headers): RefusedRequest | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined; // a release has checks of its own
  if (single(headers['sec-fetch-mode']) === 'navigate') return undefined;
  return foreignSite(headers, 'a read of the lock board');
}

/** When the browser says where a request comes from (`Sec-Fetch-Site`, `Origin`), it must be this very origin. */
function foreignSite(headers: Headers, what: string): RefusedRequest | undefined {
  const site = single(headers['sec-fetch-site']);
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return { status: 403, message: `Refused: ${what} from another site (Sec-Fetch-Site: ${show(site)}).` };
  }
  const origin = single(headers.origin);
  // HTTP/2 names the host in `:authority`; browsers send no `Host` there.
  const host = single(headers.host) ?? single(headers[':authority']);
  if (origin !== undefined && !sameOrigin(origin, host)) {
    return {
      status: 403,
      message: `Refused: ${what} from another origin (Origin: ${show(origin)}, Host: ${show(host ?? 'none')}). Behind a proxy, pass the Host header on.`,
    };
  }
  return undefined;
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const from = new URL(origin);
    if (from.protocol !== 'http:' && from.protocol !== 'https:') return false;
    // The Host header with the origin's scheme, so that a default port compares equal either way.
    return from.host === new URL(`${from.protocol}//${host}`).host;
  } catch {
    return false; // "null" (a sandboxed frame, a redirect) and anything unparseable
  }
}

/**
 * Why the query of the lock list is not acceptable (naming the parameter), or the cursor.
 * Only `cursor` is taken, once, at most 64 characters of those a cursor is made of; its form is
 * checked against the deployment by `cursorProblem`.
 */
export function listQuery(query: unknown): { cursor: string } | { problem: string } {
  const params = (query ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(params)) {
    if (name !== 'cursor') return { problem: `Unknown query parameter ${show(name)}: the lock list takes only "cursor".` };
  }
  const cursor = params.cursor ?? '0';
  if (typeof cursor !== 'string') return { problem: `Query parameter "cursor" must be given once, as text.` };
  // What the board hands out is short and of these characters: anything else is refused here,
  // before its text reaches a message, or Redis.
  if (!CURSOR_TEXT.test(cursor)) return { problem: `Query parameter "cursor" must be "0" or a cursor this board handed out, got ${show(cursor)}.` };
  return { cursor };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Digits, `-` and the letters and hex digits of its `r`, `s` and `m` parts (see `cursorProblem`): at most 51 of them. */
const CURSOR_TEXT = /^[0-9a-z-]{1,64}$/;

/**
 * A value from the request, quoted, escaped and cut short for an error message, as keys are: a
 * header's bytes 0x80 to 0x9f are C1 controls (CSI starts a terminal escape), and a decoded query
 * holds any character (a bidi override, a line separator).
 */
export function show(value: string): string {
  return quoteText(value, 60);
}
