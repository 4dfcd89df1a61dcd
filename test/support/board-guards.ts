import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';

/** A board spec's stand-in for an application's admin guard: admits a request with the header `x-admin: yes`. */
@Injectable()
export class AdminHeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-admin'] === 'yes';
  }
}

/** A board spec's stand-in for an application's session guard: admits a request with the cookie `session=admin`. */
@Injectable()
export class AdminCookieGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const cookie = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.cookie ?? '';
    return cookie.split(/;\s*/).includes('session=admin');
  }
}
