import { Controller, DefaultValuePipe, Param, Post, Query } from '@nestjs/common';
import { IntInRangePipe, NamePipe } from '../common/request-values.pipes.js';
import { ReportsService } from './reports.service.js';

/** The longest report a request may ask for: a minute, renewed by the watchdog throughout. */
const MAX_DURATION_MS = 60_000;

@Controller('reports')
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  /** Builds a report for `duration` ms; a second run of the same report meanwhile gets 409. */
  @Post(':name')
  build(@Param('name', NamePipe) name: string, @Query('duration', new DefaultValuePipe(3_500), new IntInRangePipe(0, MAX_DURATION_MS)) duration: number) {
    return this.reports.build(name, duration);
  }
}
