/**
 * Server configuration from the environment, parsed once with zod. Every problem is reported at
 * once, each line naming the variable, what it must be and what it was.
 */
import { z } from 'zod';
import { EncryptionError, parseEncryptionKey } from '../store/crypto/index.js';
import { parseDatabaseUrl } from '../store/migrate/index.js';

export const DEFAULT_DATABASE_URL = 'file:./data/weft.db';
/** Largest request body accepted (an AgentState import is the largest legitimate one). */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

const flag = (name: string, fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      if (/^(1|true|yes|on)$/i.test(v)) return true;
      if (/^(0|false|no|off)$/i.test(v)) return false;
      ctx.addIssue({ code: 'custom', message: `${name} must be true or false (got "${v}")` });
      return z.NEVER;
    });

const EnvSchema = z.object({
  /** Encryption at rest (optional): 32 bytes as 64 hex digits or base64. */
  WEFT_ENCRYPTION_KEY: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      try {
        return parseEncryptionKey(v);
      } catch (error) {
        const why = error instanceof EncryptionError ? error.message : String(error);
        ctx.addIssue({ code: 'custom', message: `WEFT_ENCRYPTION_KEY: ${why}` });
        return z.NEVER;
      }
    }),
  PORT: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return 4000;
      const n = Number(v);
      if (!/^\d+$/.test(v) || n > 65_535) {
        ctx.addIssue({
          code: 'custom',
          message: `PORT must be an integer from 0 to 65535 (got "${v}")`,
        });
        return z.NEVER;
      }
      return n;
    }),
  HOST: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? '127.0.0.1' : v)),
  DATABASE_URL: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const url = v === undefined || v === '' ? DEFAULT_DATABASE_URL : v;
      try {
        parseDatabaseUrl(url);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
      return url;
    }),
  REDIS_URL: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      if (!/^rediss?:\/\/.+/.test(v)) {
        ctx.addIssue({
          code: 'custom',
          message: `REDIS_URL must look like redis://host:6379 (got "${v}")`,
        });
        return z.NEVER;
      }
      return v;
    }),
  WEFT_GRAPHIQL: flag('WEFT_GRAPHIQL', true),
  WEFT_INTROSPECTION: flag('WEFT_INTROSPECTION', true),
  WEFT_ALLOW_OPEN: flag('WEFT_ALLOW_OPEN', false),
  WEFT_MAX_BODY_BYTES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return DEFAULT_MAX_BODY_BYTES;
      if (!/^\d+$/.test(v) || Number(v) < 1024) {
        ctx.addIssue({
          code: 'custom',
          message: `WEFT_MAX_BODY_BYTES must be an integer of at least 1024 (got "${v}")`,
        });
        return z.NEVER;
      }
      return Number(v);
    }),
});

export interface ServerConfig {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string | undefined;
  graphiql: boolean;
  introspection: boolean;
  /** Serve without API keys on a non-loopback host (DESIGN §8 refuses that by default). */
  allowOpen: boolean;
  maxBodyBytes: number;
  /** WEFT_ENCRYPTION_KEY: payloads and memory content encrypted at rest with it (AES-256-GCM). */
  encryptionKey: Uint8Array | undefined;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The configuration in `env` (default: process.env); throws ConfigError listing every problem. */
export function loadConfig(env: Record<string, string | undefined> = process.env): ServerConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message));
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    graphiql: e.WEFT_GRAPHIQL,
    introspection: e.WEFT_INTROSPECTION,
    allowOpen: e.WEFT_ALLOW_OPEN,
    maxBodyBytes: e.WEFT_MAX_BODY_BYTES,
    encryptionKey: e.WEFT_ENCRYPTION_KEY,
  };
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|\[::1\]|localhost)$/i;

export const isLoopbackHost = (host: string): boolean => LOOPBACK.test(host);
