import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { ServerResponse } from 'node:http';

/**
 * Whether the board's application is closing, and the board's answers not yet sent: one per
 * board module of an application, closed by its controller.
 *
 * Once the application is closing every board request is answered with `Connection: close`.
 * Node's `server.close()` closes only the connections idle at that moment: a request in flight
 * then kept its connection open after its answer, and an open page's poll (every second) came on
 * it before the keep-alive timeout, each one answered, so that the server, and `app.close()`,
 * waited as long as the page stayed open (on Express; Fastify refuses requests once closing,
 * after one more). Set from a middleware, not an interceptor: the application's global
 * interceptors run first, and one that answers a request itself (a cache) skipped the board's.
 */
@Injectable()
export class BoardShutdown {
  closing = false;
  private readonly answering = new Set<unknown>();

  /** Every answer from now on closes its connection, those on their way included. */
  close(): void {
    this.closing = true;
    for (const response of this.answering) answerThenClose(response);
    this.answering.clear();
  }

  /** A board request came in: its answer closes the connection if the close has begun by the time it goes out. */
  answer(response: unknown): void {
    if (this.closing) return answerThenClose(response);
    const raw = rawOf(response);
    if (typeof raw?.once !== 'function') return;
    this.answering.add(response);
    raw.once('close', () => this.answering.delete(response));
  }
}

/** Runs before the application's guards and interceptors, on every board route. */
@Injectable()
export class BoardShutdownMiddleware implements NestMiddleware {
  constructor(private readonly shutdown: BoardShutdown) {}

  use(_request: unknown, response: unknown, next: () => void): void {
    this.shutdown.answer(response);
    next();
  }
}

type RawResponse = (Partial<ServerResponse> & { stream?: unknown }) | null;

/** Express' response is Node's; Fastify's reply has it as `raw` (its middleware gets it bare). */
function rawOf(response: unknown): RawResponse {
  return ((response as { raw?: unknown } | null)?.raw ?? response) as RawResponse;
}

/**
 * Fastify joins the headers set on its raw response to its own. HTTP/2 (a response with a
 * `stream`) has no such header, and needs none: Node drops it, with a warning for each.
 */
function answerThenClose(response: unknown): void {
  const raw = rawOf(response);
  if (raw?.headersSent === false && typeof raw.setHeader === 'function' && raw.stream === undefined) raw.setHeader('Connection', 'close');
}
