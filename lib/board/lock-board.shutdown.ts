import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { tap, type Observable } from 'rxjs';

/** Whether the board's application is closing: one per board module of an application, set by its controller. */
@Injectable()
export class BoardShutdown {
  closing = false;
}

/**
 * Answers every board request with `Connection: close` once its application is closing. Node's
 * `server.close()` closes only the connections idle at that moment: a request in flight then kept
 * its connection open after its answer, and an open page's poll (every second) came on it before
 * the keep-alive timeout, each one answered, so that the server, and `app.close()`, waited as long
 * as the page stayed open (on Express; Fastify refuses requests once closing, after one more).
 */
@Injectable()
export class BoardShutdownInterceptor implements NestInterceptor {
  constructor(private readonly shutdown: BoardShutdown) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const response = context.switchToHttp().getResponse<unknown>();
    // Checked again as the answer goes out: a request that came in before the close began.
    const closeIfClosing = (): void => {
      if (this.shutdown.closing) answerThenClose(response);
    };
    closeIfClosing();
    return next.handle().pipe(tap({ next: closeIfClosing, error: closeIfClosing }));
  }
}

/**
 * Express' response is Node's; Fastify's reply has it as `raw`, whose headers Fastify's own join.
 * HTTP/2 (a response with a `stream`) has no such header, and needs none: Node drops it, with a
 * warning for each.
 */
function answerThenClose(response: unknown): void {
  const raw = ((response as { raw?: unknown } | null)?.raw ?? response) as (Partial<ServerResponse> & { stream?: unknown }) | null;
  if (raw?.headersSent === false && typeof raw.setHeader === 'function' && raw.stream === undefined) raw.setHeader('Connection', 'close');
}
