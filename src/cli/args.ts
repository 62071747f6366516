/** A tiny argument parser: positionals, `--flag`, `--name value` / `--name=value`. */

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface ParsedArgs {
  positionals: string[];
  options: Map<string, string | true>;
}

export function parseArgs(
  argv: readonly string[],
  spec: { flags?: readonly string[]; values?: readonly string[] },
): ParsedArgs {
  const flags = new Set(spec.flags ?? []);
  const values = new Set(spec.values ?? []);
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (flags.has(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      options.set(name, true);
    } else if (values.has(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      options.set(name, value);
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return { positionals, options };
}

/** A non-negative integer option, or undefined when absent. */
export function intOption(args: ParsedArgs, name: string): number | undefined {
  const value = args.options.get(name);
  if (value === undefined) return undefined;
  if (value === true || !/^\d+$/.test(value)) {
    throw new UsageError(`--${name} must be a non-negative integer (got ${String(value)})`);
  }
  return Number(value);
}
