import { ACMP_USAGE, acmp } from './acmp.js';
import { ACP_USAGE, acp } from './acp.js';
import { CARD_USAGE, TOKEN_ENV, card } from './card.js';
import { CONFORM_USAGE, conform } from './conform.js';
import { demo } from './demo.js';
import { ESCROW_USAGE, escrow } from './escrow.js';
import { explainCliError } from './errors.js';
import { KEYS_USAGE, keys } from './keys.js';
import { UsageError, type CliIo } from './io.js';
import { MCP_STDIO_USAGE, mcpStdio } from './mcp-stdio.js';
import { MIGRATE_USAGE, migrate } from './migrate.js';
import { PRUNE_USAGE, prune } from './prune.js';
import { REASSIGN_USAGE, reassign } from './reassign.js';
import { SERVE_USAGE, serve } from './serve.js';
import { WALLET_USAGE, wallet } from './wallet.js';
import { errorCode } from '../shared/errors.js';

type Verb = { run: (argv: string[], io: CliIo) => Promise<number>; usage: string; summary: string };

const VERBS: Record<string, Verb> = {
  serve: { run: serve, usage: SERVE_USAGE, summary: 'run the agent host' },
  'mcp-stdio': {
    run: mcpStdio,
    usage: MCP_STDIO_USAGE,
    summary: "serve the host's ACMP provider over MCP stdio",
  },
  card: { run: card, usage: CARD_USAGE, summary: 'fetch, check and print an agent card' },
  migrate: { run: migrate, usage: MIGRATE_USAGE, summary: 'apply database migrations (PostgreSQL, SQLite)' },
  prune: {
    run: prune,
    usage: PRUNE_USAGE,
    summary: 'remove ended tasks and sessions past their retention age (--dry-run: count only)',
  },
  keys: { run: keys, usage: KEYS_USAGE, summary: 'Layer 7 identity keys: new, list, retire' },
  reassign: { run: reassign, usage: REASSIGN_USAGE, summary: "give one caller identity's data to another" },
  acmp: {
    run: acmp,
    usage: ACMP_USAGE,
    summary: 'ACMP buyer: capabilities of an agent, quote, negotiate, invoke a capability',
  },
  acp: { run: acp, usage: ACP_USAGE, summary: 'ACPspec: validate, send, state, events' },
  escrow: {
    run: escrow,
    usage: ESCROW_USAGE,
    summary:
      'ACMP escrow: lock, bind, release, reclaim, claim, dispute, status; operator credit/resolve/ledger',
  },
  wallet: {
    run: wallet,
    usage: WALLET_USAGE,
    summary: "the buyer's wallet: audit log, spend and headroom, crash recovery (operator)",
  },
  conform: {
    run: conform,
    usage: CONFORM_USAGE,
    summary: 'check an agent against the ACMP and ACPspec bindings (conformance kit)',
  },
  demo: { run: demo, usage: 'Usage: a2a-commerce demo', summary: 'start a host, run the scenarios, stop' },
};

const USAGE = `Usage: a2a-commerce <command> [options]

Commands:
${Object.entries(VERBS)
  .map(([name, v]) => `  ${name.padEnd(9)} ${v.summary}`)
  .join('\n')}

Run a2a-commerce <command> --help for a command's options.`;

/** Runs the CLI; returns the exit code. Errors are printed as one line, never as a stack trace. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name === undefined ? 2 : 0;
  }
  const verb = VERBS[name];
  if (!verb) {
    io.err(`unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(verb.usage);
    return 0;
  }
  try {
    return await verb.run(rest, io);
  } catch (error) {
    return report(error, { verb, argv: rest, io });
  }
}

/** Prints a failed verb's error as one line: with the verb's usage (exit 2), or explained (exit 1). */
function report(error: unknown, run: { verb: Verb; argv: readonly string[]; io: CliIo }): number {
  const { verb, argv, io } = run;
  const code = errorCode(error);
  if (error instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
    io.err(`error: ${error instanceof Error ? error.message : String(error)}\n\n${verb.usage}`);
    return 2;
  }
  const url = argv.find((a) => /^https?:\/\//i.test(a));
  const tokenSent =
    argv.includes('--token') || argv.some((a) => a.startsWith('--token=')) || Boolean(io.env[TOKEN_ENV]);
  io.err(explainCliError(error, { url, tokenSent }));
  return 1;
}
