import { BadRequestException, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';

/**
 * An integer from `min` to `max`, from a query string or a JSON body (a number or its digits):
 * else 400 naming the value. A request decides how long a handler sleeps, how long a lock is
 * held (renewed by its watchdog), and what is added to a balance: unbounded, one client holds
 * locks and handlers for as long as it likes, or adds past what a JavaScript number adds exactly.
 */
export class IntInRangePipe implements PipeTransform<unknown, number> {
  constructor(
    private readonly min: number,
    private readonly max: number,
  ) {}

  transform(value: unknown, { data }: ArgumentMetadata): number {
    const number = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
    if (Number.isInteger(number) && number >= this.min && number <= this.max) return number;
    throw new BadRequestException(`"${data ?? 'value'}" must be an integer from ${this.min} to ${this.max}.`);
  }
}

/**
 * A name or id that goes into a lock key and a row: 1 to 64 letters, digits, `-` or `_`, else 400
 * naming the parameter (not echoing the value, which the client sent and may be anything).
 */
export class NamePipe implements PipeTransform<unknown, string> {
  transform(value: unknown, { data }: ArgumentMetadata): string {
    if (typeof value === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(value)) return value;
    throw new BadRequestException(`"${data ?? 'name'}" must be 1 to 64 letters, digits, "-" or "_".`);
  }
}

/** The largest deposit, exact in JavaScript; a sum past 2^53 - 1 is refused (AccountsService). */
export const MAX_AMOUNT = 1_000_000_000;
