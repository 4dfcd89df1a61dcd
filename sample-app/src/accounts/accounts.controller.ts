import { Body, Controller, Get, Param, ParseIntPipe, Post } from '@nestjs/common';
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
}
