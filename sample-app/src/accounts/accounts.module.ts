import { Module } from '@nestjs/common';
import { AccountsController } from './accounts.controller.js';
import { AccountsService } from './accounts.service.js';
import { BalanceStore } from './balance-store.js';
import { Database } from './database.js';

@Module({ controllers: [AccountsController], providers: [AccountsService, BalanceStore, Database] })
export class AccountsModule {}
