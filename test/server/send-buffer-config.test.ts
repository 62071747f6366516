/** WEFT_MAX_SEND_BUFFER_BYTES: its default, a positive integer taken, anything else refused by name. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/server/config.js';

describe('WEFT_MAX_SEND_BUFFER_BYTES', () => {
  it('defaults to 8 MiB and takes a positive integer of bytes', () => {
    expect(loadConfig({}).maxSendBufferBytes).toBe(8_388_608);
    expect(loadConfig({ WEFT_MAX_SEND_BUFFER_BYTES: '65536' }).maxSendBufferBytes).toBe(65_536);
  });

  it('refuses anything else, naming the variable and the value', () => {
    for (const bad of ['0', '-5', '8MiB', '1.5']) {
      let problems: string[] = [];
      try {
        loadConfig({ WEFT_MAX_SEND_BUFFER_BYTES: bad });
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        problems = error.problems;
      }
      expect(problems).toEqual([
        `WEFT_MAX_SEND_BUFFER_BYTES must be an integer from 1 to ${Number.MAX_SAFE_INTEGER} (got "${bad}")`,
      ]);
    }
  });
});
