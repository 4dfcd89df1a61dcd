import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/app-config.js';

const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'], forceCloseConnections: true });
app.enableShutdownHooks();
const config = app.get(AppConfig);
await app.listen(config.port, '127.0.0.1');
// The demo waits for this line to learn the port.
console.log(`sample-app listening on ${(await app.getUrl()).replace('[::1]', '127.0.0.1')}`);
