import { readFileSync } from 'node:fs';
import type { DisputeDefault, EscrowSettings } from '../acmp/escrow/constants.js';
import type { HostConfig } from '../server/config.js';
import type { HostModule } from '../server/module.js';
import { MODULE_NAMES, selectModules, type ModuleName } from './host-modules.js';
import { readPayoutFile } from './escrow-payout.js';
import { UsageError } from './io.js';

/** The provider's bearer token at its escrow agent (never a flag: flags show in `ps`). */
const ESCROW_TOKEN_ENV = 'A2AC_ESCROW_TOKEN';
/** The A2A TCK's own variable (seconds), read as the TCK's SUT_REQUIREMENTS.md asks of the agent. */
const TCK_TIMEOUT_ENV = 'TCK_STREAMING_TIMEOUT';

export const SERVE_MODULE_USAGE = `  --modules <list>       modules to run, comma-separated: ${MODULE_NAMES.join(', ')} (default acmp,acpspec)
                         (tck: the official A2A TCK's messageId prefixes, opt-in; ${TCK_TIMEOUT_ENV} in seconds)
  --escrow               also run the escrow agent (ACMP Layer 4, docs/acmp-escrow.md)
  --escrow-window-ms <n> the escrow agent's default challenge window (default 86400000)
  --escrow-dispute-deadline-ms <n>  how long a dispute may stay open (default 604800000)
  --escrow-dispute-default <refund_buyer|pay_claim>  the outcome of a dispute nobody resolved
  --escrow-agent <url>   the escrow agent the ACMP provider checks escrow_id at (token: ${ESCROW_TOKEN_ENV})
  --escrow-payee <id>    the provider's identity at that agent (e.g. agent:provider)
  --escrow-ca <pem>      CA certificate to trust for that agent
  --escrow-claim-delay-ms <n>  wait this long for the buyer's release before claiming (default 60000)
  --escrow-payout <file> where to be paid, sent with claims (\`wallet payout\` output, docs/acmp-escrow.md §9.1)`;

export const SERVE_MODULE_OPTIONS = {
  modules: { type: 'string' },
  escrow: { type: 'boolean' },
  'escrow-window-ms': { type: 'string' },
  'escrow-dispute-deadline-ms': { type: 'string' },
  'escrow-dispute-default': { type: 'string' },
  'escrow-agent': { type: 'string' },
  'escrow-payee': { type: 'string' },
  'escrow-ca': { type: 'string' },
  'escrow-claim-delay-ms': { type: 'string' },
  'escrow-payout': { type: 'string' },
} as const;

type Flags = {
  [K in keyof typeof SERVE_MODULE_OPTIONS]?: (typeof SERVE_MODULE_OPTIONS)[K]['type'] extends 'boolean'
    ? boolean
    : string;
};

/** The host modules the serve flags select. @throws UsageError for unknown modules or malformed values. */
export function modulesFromFlags(
  flags: Flags,
  config: HostConfig,
  env: Record<string, string | undefined>,
): HostModule[] {
  const names = (flags.modules ?? 'acmp,acpspec')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const modules = new Set<ModuleName>();
  for (const name of names) {
    const known = MODULE_NAMES.find((m) => m === name);
    if (known === undefined)
      throw new UsageError(`unknown module "${name}" (use ${MODULE_NAMES.join(', ')})`);
    modules.add(known);
  }
  if (flags.escrow === true) modules.add('escrow');
  const settings: Partial<EscrowSettings> = {
    ...(flags['escrow-window-ms'] === undefined
      ? {}
      : { defaultChallengeWindowMs: ms('--escrow-window-ms', flags['escrow-window-ms']) }),
    ...(flags['escrow-dispute-deadline-ms'] === undefined
      ? {}
      : { disputeDeadlineMs: ms('--escrow-dispute-deadline-ms', flags['escrow-dispute-deadline-ms']) }),
    ...(flags['escrow-dispute-default'] === undefined
      ? {}
      : { defaultOutcome: outcome(flags['escrow-dispute-default']) }),
  };
  const agentUrl = flags['escrow-agent'];
  const payeeId = flags['escrow-payee'];
  if ((agentUrl === undefined) !== (payeeId === undefined))
    throw new UsageError('--escrow-agent and --escrow-payee go together');
  const escrowAgent =
    agentUrl === undefined || payeeId === undefined
      ? undefined
      : {
          agentUrl,
          payeeId,
          token: env[ESCROW_TOKEN_ENV] || undefined,
          ...(flags['escrow-ca'] ? { caCert: readFileSync(flags['escrow-ca'], 'utf8') } : {}),
          ...(flags['escrow-claim-delay-ms'] === undefined
            ? {}
            : { claimDelayMs: ms('--escrow-claim-delay-ms', flags['escrow-claim-delay-ms']) }),
          ...(flags['escrow-payout'] ? { payout: readPayoutFile(flags['escrow-payout']) } : {}),
        };
  const tckTimeout = env[TCK_TIMEOUT_ENV];
  return selectModules(config, {
    modules: [...modules],
    escrowSettings: settings,
    ...(escrowAgent ? { escrowAgent } : {}),
    ...(modules.has('tck') && tckTimeout
      ? { tckStreamingTimeoutMs: seconds(TCK_TIMEOUT_ENV, tckTimeout) }
      : {}),
  });
}

function seconds(name: string, value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0)
    throw new UsageError(`${name} must be a positive number of seconds`);
  return Math.round(Number(value) * 1000);
}

function ms(flag: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number of milliseconds`);
  return Number(value);
}

function outcome(value: string): DisputeDefault {
  if (value !== 'refund_buyer' && value !== 'pay_claim')
    throw new UsageError('--escrow-dispute-default must be refund_buyer or pay_claim');
  return value;
}
