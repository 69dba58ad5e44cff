import { parseArgs } from 'node:util';
import { acpEvents, acpSend, acpState } from './acp-remote.js';
import { acpNew } from './acp-new.js';
import { acpValidate } from './acp-validate.js';
import { UsageError, type CliIo } from './io.js';

export const ACP_USAGE = `Usage: a2a-commerce acp <command> [options]

  acp new snapshot                            print a fresh, valid snapshot (new UUIDv7 envelope id, a new
                                              transaction); --stage, --type, --transaction-id, --producer
  acp new delta <parent.json>                 print a delta following that envelope (a note event);
                                              --stage changes the stage, --note adds text
  acp validate <file>                         schema and delta-policy check; every problem with its
                                              JSON Pointer; exit 1 when invalid
  acp send <agent-url> <envelope.json>        send one envelope (A2A; --http for the HTTPS binding);
                                              prints the acp_ack or the coded error
  acp state <agent-url> <transaction-id>      the receiver's state snapshot, as canonical bytes
                                              (A2A state request; --http for GET …/state)
  acp events <agent-url> <transaction-id>     the event stream (HTTPS route), one JSON line per event;
                                              --follow keeps reading (Server-Sent Events) until Ctrl-C

Options:
  --http             use the HTTPS binding instead of A2A (send, state)
  --token <t>        bearer token (send, state, events); default: A2AC_TOKEN from the environment,
                     which keeps the token out of shell history and the process list
  --data-dir <dir>   trust that data directory's self-signed localhost certificate
  --ca <pem>         trust a CA file
  --follow           (events) follow new events
  --after <n>        (events) start after this sequence number
  --count <n>        (events) stop after n events
  --stage <stage>    (new) inquiry, lead, quote, deal, contracted, fulfilled, closed or cancelled

Examples to copy: docs/examples/ (one envelope per lifecycle stage, one per error code).
  a2a-commerce acp new snapshot > envelope.json && a2a-commerce acp validate envelope.json`;

const OPTIONS = {
  http: { type: 'boolean' },
  token: { type: 'string' },
  ca: { type: 'string' },
  'data-dir': { type: 'string' },
  follow: { type: 'boolean' },
  after: { type: 'string' },
  count: { type: 'string' },
  stage: { type: 'string' },
  type: { type: 'string' },
  'transaction-id': { type: 'string' },
  producer: { type: 'string' },
  note: { type: 'string' },
} as const;

/** `a2a-commerce acp …`: ACPspec tools (validate, send, state, events). */
export async function acp(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const [command, ...rest] = positionals;
  switch (command) {
    case 'new':
      return acpNew(rest, values, io);
    case 'validate':
      return acpValidate(rest, io);
    case 'send':
      return acpSend(rest, values, io);
    case 'state':
      return acpState(rest, values, io);
    case 'events':
      return acpEvents(rest, values, io);
    case undefined:
      throw new UsageError('missing <command>');
    default:
      throw new UsageError(`unknown acp command "${command}"`);
  }
}
