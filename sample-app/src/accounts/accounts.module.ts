import { Module } from '@nestjs/common';
import { AccountsController } from './accounts.controller.js';
import { AccountsService } from './accounts.service.js';
import { BalanceStore } from './balance-store.js';

@Module({ controllers: [AccountsController], providers: [AccountsService, BalanceStore] })
export class AccountsModule {}
