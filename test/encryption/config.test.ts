/** WEFT_ENCRYPTION_KEY in the server configuration: optional, 32 bytes as hex or base64. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/server/config.js';

describe('WEFT_ENCRYPTION_KEY', () => {
  it('is optional', () => {
    expect(loadConfig({}).encryptionKey).toBeUndefined();
  });

  it('takes 32 bytes as hex or base64', () => {
    const key = randomBytes(32);
    expect(loadConfig({ WEFT_ENCRYPTION_KEY: key.toString('hex') }).encryptionKey).toEqual(key);
    expect(loadConfig({ WEFT_ENCRYPTION_KEY: key.toString('base64') }).encryptionKey).toEqual(key);
  });

  it('rejects a key of the wrong size, naming the variable and never echoing the key', () => {
    const short = randomBytes(16).toString('hex');
    let error: unknown;
    try {
      loadConfig({ WEFT_ENCRYPTION_KEY: short });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toContain('WEFT_ENCRYPTION_KEY');
    expect(message).toContain('32 bytes');
    expect(message).not.toContain(short);
  });
});
