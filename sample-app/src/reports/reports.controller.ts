import { Controller, DefaultValuePipe, Param, ParseIntPipe, Post, Query } from '@nestjs/common';
import { ReportsService } from './reports.service.js';

@Controller('reports')
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  /** Builds a report for `duration` ms; a second run of the same report meanwhile gets 409. */
  @Post(':name')
  build(@Param('name') name: string, @Query('duration', new DefaultValuePipe(3_500), ParseIntPipe) duration: number) {
    return this.reports.build(name, duration);
  }
}
