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
 */
export const NEXT_FENCING = `local fencing = redis.call('INCR', fence)
if fencing == 1 then
  local t = redis.call('TIME')
  local ms = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
  redis.call('SET', fence, ms)
  fencing = tonumber(ms)
end`;
