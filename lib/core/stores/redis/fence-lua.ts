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
