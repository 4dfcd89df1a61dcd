import type { CanActivate, DynamicModule, ForwardReference, Type } from '@nestjs/common';

/** Options of `RedisLockBoardModule.register()`. */
export interface LockBoardOptions {
  /** Route of the page (under the app's global prefix). Default `locks`. */
  path?: string;
  /**
   * Guards protecting every route of the board, as with `@UseGuards()`: the board shows who
   * holds what, so protect it like any admin page. Class guards are created in the board's
   * module: list what they inject under `imports`.
   */
  guards?: (CanActivate | Type<CanActivate>)[];
  /** Modules the guards need. */
  imports?: (Type<unknown> | DynamicModule | Promise<DynamicModule> | ForwardReference)[];
  /**
   * Shows a "Release by force" button (with a confirmation) and accepts the release request.
   * Each forced release is emitted as a `force-released` event. Default `false`: read-only.
   */
  allowForceRelease?: boolean;
  /** Locks scanned per page (1 to 200). Default 50. */
  pageSize?: number;
}
