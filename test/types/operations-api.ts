// Compiled (not run) by `npm run typecheck` against the built package with skipLibCheck off:
// the subpath exports resolve, with their types, as an application imports them.
import { subscribe } from 'node:diagnostics_channel';
import { Controller, Get, Injectable, Module, type CanActivate } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { LOCK_DIAGNOSTICS_CHANNELS, LockService, RedisLockModule, type LockEvent, type LockHolder, type LockInspection } from 'nestjs-redis-lock';
import { RedisLockBoardModule, type LockBoardAsyncOptions, type LockBoardOptions } from 'nestjs-redis-lock/board';
import { enableLockMetrics, RedisLockMetricsModule, type LockMetricsHandle } from 'nestjs-redis-lock/otel';
import { RedisLockHealthIndicator, type RedisLockNodeHealth } from 'nestjs-redis-lock/terminus';

@Injectable()
class AdminGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

const board: LockBoardOptions = { path: 'admin/locks', guards: [AdminGuard], routeMetadata: { roles: ['admin'] }, allowForceRelease: false, pageSize: 20 };
const asyncBoard: LockBoardAsyncOptions = {
  path: 'ops/locks',
  guards: [AdminGuard],
  inject: ['BOARD_RELEASE'],
  useFactory: (release: boolean) => ({ allowForceRelease: release, pageSize: 20 }),
};
// The factory gives settings only: the route is fixed before any provider exists.
// @ts-expect-error path is not a setting
export const misplaced: LockBoardAsyncOptions = { useFactory: () => ({ path: 'x' }) };

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: RedisLockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy('locks', { timeout: 500, requireAllNodes: true, showDetails: false })]);
  }
}

@Module({
  imports: [
    RedisLockModule.forRoot({ redis: 'redis://localhost:6379', isGlobal: true, instanceName: 'worker-1' }),
    RedisLockMetricsModule.forRoot(),
    RedisLockBoardModule.register(board),
    RedisLockBoardModule.registerAsync(asyncBoard),
  ],
  controllers: [HealthController],
  providers: [RedisLockHealthIndicator],
})
export class OperationsModule {}

export async function inspectIt(locks: LockService): Promise<string> {
  const seen: LockInspection = await locks.inspect('report');
  const holder: LockHolder | undefined = seen.holder;
  const lock = await locks.acquire('report', { name: 'report', label: 'nightly report' });
  await lock.release();
  const permits = seen.semaphore?.holders.map((permit) => `${permit.permits}:${permit.fencingToken}:${permit.ttlMs}:${permit.holder?.label}`);
  return `${seen.held} ${seen.ttlMs ?? 0} ${seen.waiters} ${seen.fencingToken ?? 0} ${holder?.host}:${holder?.pid} ${holder?.since} ${seen.semaphore?.used}/${seen.semaphore?.limit} ${permits}`;
}

const handle: LockMetricsHandle = enableLockMetrics();
handle.disable();
subscribe(LOCK_DIAGNOSTICS_CHANNELS.lost, (message) => {
  const event = message as LockEvent;
  if (event.type === 'lost') console.log(event.name, event.reason);
});
export const node: RedisLockNodeHealth = { status: 'up', latencyMs: 1 };
