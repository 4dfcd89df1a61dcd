import { Body, ConflictException, Controller, DefaultValuePipe, Get, Param, ParseBoolPipe, ParseIntPipe, Post, Query } from '@nestjs/common';
import { FencedWriteRefusedError } from 'nestjs-redis-lock';
import { AccountsService } from './accounts.service.js';

@Controller('accounts')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Get(':id')
  async get(@Param('id') id: string) {
    return { id, balance: await this.accounts.balance(id) };
  }

  @Post(':id/deposit')
  async deposit(@Param('id') id: string, @Body('amount', ParseIntPipe) amount: number) {
    return { id, balance: await this.accounts.deposit(id, amount) };
  }

  @Post(':id/deposit-now')
  async depositNow(@Param('id') id: string, @Body('amount', ParseIntPipe) amount: number) {
    return { id, balance: await this.accounts.depositNow(id, amount) };
  }

  @Post(':id/deposit-unsafe')
  async depositUnsafe(@Param('id') id: string, @Body('amount', ParseIntPipe) amount: number) {
    return { id, balance: await this.accounts.depositUnsafe(id, amount) };
  }

  /** A deposit that stalls past its lease before writing: 409 when the database refuses its token. */
  @Post(':id/deposit-stalled')
  async depositStalled(
    @Param('id') id: string,
    @Body('amount', ParseIntPipe) amount: number,
    @Query('stallMs', new DefaultValuePipe(1_500), ParseIntPipe) stallMs: number,
    @Query('fenced', new DefaultValuePipe(true), ParseBoolPipe) fenced: boolean,
  ) {
    try {
      return { id, balance: await this.accounts.depositStalled(id, amount, stallMs, fenced) };
    } catch (error) {
      if (error instanceof FencedWriteRefusedError) throw new ConflictException(error.message);
      throw error;
    }
  }
}
