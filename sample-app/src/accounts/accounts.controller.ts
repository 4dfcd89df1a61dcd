import { Body, Controller, DefaultValuePipe, Get, Param, ParseBoolPipe, Post, Query } from '@nestjs/common';
import { IntInRangePipe, MAX_AMOUNT, NamePipe } from '../common/request-values.pipes.js';
import { AccountsService } from './accounts.service.js';

/** The longest stall a request may ask for: long enough to outlast the stalled deposit's lease. */
const MAX_STALL_MS = 10_000;

@Controller('accounts')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Get(':id')
  async get(@Param('id', NamePipe) id: string) {
    return { id, balance: await this.accounts.balance(id) };
  }

  @Post(':id/deposit')
  async deposit(@Param('id', NamePipe) id: string, @Body('amount', new IntInRangePipe(1, MAX_AMOUNT)) amount: number) {
    return { id, balance: await this.accounts.deposit(id, amount) };
  }

  @Post(':id/deposit-now')
  async depositNow(@Param('id', NamePipe) id: string, @Body('amount', new IntInRangePipe(1, MAX_AMOUNT)) amount: number) {
    return { id, balance: await this.accounts.depositNow(id, amount) };
  }

  @Post(':id/deposit-unsafe')
  async depositUnsafe(@Param('id', NamePipe) id: string, @Body('amount', new IntInRangePipe(1, MAX_AMOUNT)) amount: number) {
    return { id, balance: await this.accounts.depositUnsafe(id, amount) };
  }

  /** A deposit that stalls past its lease before writing: 409 (from `LockConflictInterceptor`) when the database refuses its token. */
  @Post(':id/deposit-stalled')
  async depositStalled(
    @Param('id', NamePipe) id: string,
    @Body('amount', new IntInRangePipe(1, MAX_AMOUNT)) amount: number,
    @Query('stallMs', new DefaultValuePipe(1_500), new IntInRangePipe(0, MAX_STALL_MS)) stallMs: number,
    @Query('fenced', new DefaultValuePipe(true), ParseBoolPipe) fenced: boolean,
  ) {
    // A refused late write (`FencedWriteRefusedError`) is answered 409 by the library's
    // interceptor, without the account's name: caught here and rethrown with its message, it
    // would show a client the row's name and the fencing tokens.
    return { id, balance: await this.accounts.depositStalled(id, amount, stallMs, fenced) };
  }
}
