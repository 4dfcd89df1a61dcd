/**
 * Fencing tokens of one key as ordinals (1 for the first of them): a key's counter starts at the
 * server's clock in milliseconds, not at 1, so a test that counts terms or turns reads them so.
 */
export function ordinals(tokens: readonly number[]): number[] {
  return tokens.map((token) => token - tokens[0]! + 1);
}
