/**
 * The code of the error a script ends with on a fencing counter that INCR takes out of the tokens'
 * range (see `NEXT_FENCING`), followed by the counter's value and its key.
 */
export const FOREIGN_COUNTER = 'FOREIGNFENCINGCOUNTER';

/**
 * The fencing counter's next token, for every script that hands one out (the quorum masters'
 * excepted, see `quorum-lua.ts`): `INCR` of the counter named `fence`, into a local `fencing`.
 *
 * A counter `INCR` creates (the key's first lock, or a counter lost with Redis' data: a restart
 * without persistence, an eviction, an expired `fenceRetention`) starts at the server's clock
 * in milliseconds instead of 1. A fenced resource keeps the highest token it saw; a counter that
 * began again at 1 would be refused there, by every new holder, until it passed that token.
 * Started at the clock, the new counter is above every token the lost one handed out, as long as
 * that one handed out fewer tokens than milliseconds passed since it began (under 1,000 a
 * second on average). Milliseconds, not microseconds: tokens stay below 10^14, which Lua still
 * writes out in full where a script joins one into a string. Spelled out from `TIME`'s own
 * digits, so that no Redis version formats a double for the `SET`.
 *
 * Every script runs `CHECK_FENCING` before its first write, which refuses such a counter with
 * nothing written, but the mutex's and the semaphore's fast paths, which run `nextFencingUndoing`
 * (their one write taken back before the refusal); what follows is this code's own guard, should
 * a script come to run it alone.
 * A counter that INCR takes out of the tokens' range (a whole number from 1 to 2^53 - 1, exact in
 * a double, as FencedRedis and the SQL fence columns compare it) holds a value this library never
 * wrote (a negative one, or one past 2^53, set by hand): it is put back as it was (its expiry
 * kept), and the script ends with a `FOREIGN_COUNTER` error naming its value and key (a string
 * error, which Redis before 7 passes on as it does a string: not a table), which the engine words as a key of
 * the lock holding foreign data (see store-failure.ts), as it does the INCR's own refusal of a
 * counter holding a word, or of one at the largest integer Redis keeps (it would overflow).
 */
export const NEXT_FENCING = `local fencing = redis.call('INCR', fence)
if fencing == 1 then
  local t = redis.call('TIME')
  local ms = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
  redis.call('SET', fence, ms)
  fencing = tonumber(ms)
elseif fencing < 1 or fencing > 9007199254740991 then
  -- Put back as it was, its expiry kept: INCR's value less one, spelled out in two exact halves
  -- (a double is not exact past 2^53), with the commands the locks' ACL grants (no DECR).
  local now, left = redis.call('GET', fence), redis.call('PTTL', fence)
  local sign, digits = string.match(now, '^(-?)(%d+)$')
  local hi, lo = tonumber(string.sub(digits, 1, -9)) or 0, tonumber(string.sub(digits, -8)) + (sign == '-' and 1 or -1)
  if lo < 0 then hi, lo = hi - 1, lo + 100000000 elseif lo > 99999999 then hi, lo = hi + 1, lo - 100000000 end
  local was = now == '0' and '-1' or sign .. (hi > 0 and string.format('%d%08d', hi, lo) or string.format('%d', lo))
  if left > 0 then redis.call('SET', fence, was, 'PX', left) else redis.call('SET', fence, was) end
  error('${FOREIGN_COUNTER} ' .. was .. ' ' .. fence)
end`;

/**
 * The refusals of `NEXT_FENCING`, before any write: a script that hands a token out (to its caller,
 * or to a waiter a release or a leave hands the lock to) runs it ahead of its first write, so that
 * a counter no token can come from ends it with nothing changed. Lua does not undo a script's
 * writes made before its error: a release that had freed the lock and set it for the waiter at the
 * head, refused only then by the counter, left the lock held for that waiter (who never heard of
 * it) until its grant's lease ran out, and the releaser was told the release failed.
 * Reads the counter named `fence` alone (a key of another type raises WRONGTYPE here). A counter out
 * of the tokens' range (whose next value would be below 1 or past 2^53 - 1) ends it with the
 * `FOREIGN_COUNTER` error `NEXT_FENCING` raises; a word, or the largest integer Redis keeps, with
 * the `INCR` that `NEXT_FENCING` would run, which Redis refuses without writing ("value is not an
 * integer or out of range", "increment or decrement would overflow"): the same words, Redis' own.
 * Whole numbers as Redis reads them: no sign but '-', no leading zero, within 64 bits.
 */
export const CHECK_FENCING = fenceCheck(true);

/**
 * `CHECK_FENCING` without the tokens' range, for the quorum masters' acquire (`quorum-lua.ts`),
 * whose counter `INCR` then raises to the caller's seed: ends the script, before any write, on a
 * counter its `INCR` would refuse (a word, the largest integer Redis keeps, a key of another type).
 * Run only ahead of a grant again to the owner token that holds the lock (its `PEXPIRE` cannot be
 * taken back): a first grant takes its `SET NX` back instead, as `nextFencingUndoing` does.
 */
export const CHECK_INCR = fenceCheck(false);

function fenceCheck(range: boolean): string {
  return `do
  local held = redis.call('GET', fence)
  if held and held ~= '0' then
    local sign, digits = string.match(held, '^(-?)([1-9]%d*)$')
    if not digits or #digits > 19 or (#digits == 19 and digits >= (sign == '-' and '9223372036854775809' or '9223372036854775807')) then
      redis.call('INCR', fence)
    end${
      range
        ? `
    if sign == '-' or #digits > 16 or (#digits == 16 and digits > '9007199254740990') then
      error('${FOREIGN_COUNTER} ' .. held .. ' ' .. fence)
    end`
        : ''
    }
  end
end`;
}

/**
 * `NEXT_FENCING` for a fast path whose one write came before it (`undo` takes that write back: the
 * `DEL` of a key its `SET NX` created): a counter no token can come from ends the script with
 * `undo` run first, so that it leaves every key as it found it without `CHECK_FENCING`'s `GET` ahead,
 * a command more on every acquisition. `INCR` through `pcall`, its refusal (a word, the largest
 * integer Redis keeps, a key of another type) answered as it was raised, after `undo`; a value out
 * of the tokens' range put back as `NEXT_FENCING` does, then `undo`, then its `FOREIGN_COUNTER` error.
 */
export function nextFencingUndoing(undo: string): string {
  const incr = "local fencing = redis.call('INCR', fence)";
  const foreign = `error('${FOREIGN_COUNTER} `;
  if (!NEXT_FENCING.startsWith(incr) || NEXT_FENCING.split(foreign).length !== 2) throw new Error('nextFencingUndoing: NEXT_FENCING changed shape');
  return NEXT_FENCING.replace(incr, `local fencing = redis.pcall('INCR', fence)\nif type(fencing) == 'table' then\n  ${undo}\n  return fencing\nend`).replace(foreign, `${undo}\n  ${foreign}`);
}
