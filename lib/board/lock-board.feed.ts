import { Logger } from '@nestjs/common';
import type { Socket } from 'node:net';
import { tap, type MonoTypeOperatorFunction } from 'rxjs';

/**
 * Events written to a live feed while its connection stayed backed up (never drained between
 * them): past this many, its client reads nothing (a tab on a laptop gone to sleep, a proxy that
 * stopped reading), and the feed ends. About a megabyte of feed lines.
 */
export const FEED_BACKLOG_LIMIT = 5_000;

const logger = new Logger('RedisLockBoard');

/**
 * Ends the live feed on `socket` once `FEED_BACKLOG_LIMIT` events were written to it while it
 * stayed backed up. `@nestjs/core` before 11.2.8 queues a feed's events for as long as its
 * connection lasts, later versions only past 4 M characters; the page loses nothing it needs by
 * the end (it reloads the list every second, and a browser's EventSource connects again).
 */
export function endFeedNotRead<T>(socket: Socket | undefined): MonoTypeOperatorFunction<T> {
  let backlog = 0;
  return tap(() => {
    if (socket === undefined) return;
    backlog = socket.writableNeedDrain ? backlog + 1 : 0;
    if (backlog !== FEED_BACKLOG_LIMIT + 1) return;
    logger.warn(`A client read none of its live feed while ${FEED_BACKLOG_LIMIT} lock events were written to it: its connection was closed (a browser's EventSource connects again).`);
    socket.destroy();
  });
}
