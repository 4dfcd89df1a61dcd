import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { chromiumPath } from '../../scripts/chromium.mjs';

/**
 * A headless Chromium for the board specs of the calling file (or describe block): launched
 * before them, closed after; call the returned function in a test for it.
 */
export function useChromium(): () => Browser {
  let browser: Browser | undefined;
  // Starting Chromium took longer than the 20 s hook timeout once on a loaded machine (load 13 on 2 cores).
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox'], timeout: 60_000 });
  }, 60_000);
  afterAll(() => browser?.close());
  return () => browser!;
}
