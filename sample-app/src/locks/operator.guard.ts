import { createHash, timingSafeEqual } from 'node:crypto';
import { Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';

/**
 * Lets in a request that carries `Authorization: Bearer <LOCKS_TOKEN>`, and no one while
 * `LOCKS_TOKEN` is unset: `/locks` shows the locks this instance holds and every lock event as it
 * happens, which is for operators, whatever network the app listens on. Your application's own
 * guard (a session, a JWT with an admin role) goes here. A header, not a cookie: a page of another
 * site cannot make the browser send it, neither across sites nor by DNS rebinding.
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const expected = this.config.locksToken;
    if (expected === undefined) throw new UnauthorizedException('Start the app with LOCKS_TOKEN set to open /locks, and send it as "Authorization: Bearer <token>".');
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers.authorization;
    const given = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    // Compared as digests in constant time: the answer's timing says nothing of the token.
    if (!timingSafeEqual(digest(given), digest(expected))) throw new UnauthorizedException('/locks needs "Authorization: Bearer <LOCKS_TOKEN>".');
    return true;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
