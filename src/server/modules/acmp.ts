import { AcmpSessionBinding } from '../../a2a/acmp/negotiation-session.js';
import { createAcmpBinding } from '../../a2a/acmp/provider-binding.js';
import { createAcmpProvider, type AcmpProviderOptions } from '../../acmp/provider.js';
import { MemoryAcmpTaskStore } from '../../acmp/memory-task-store.js';
import { ACMP_OWNER_COLUMNS, acmpMigrations, KyselyAcmpTaskStore } from '../../storage/acmp-task-store-kysely.js';
import { MemoryAgreementStore } from '../../acmp/negotiation/memory-agreement-store.js';
import { MemorySessionStore } from '../../acmp/negotiation/memory-session-store.js';
import { Negotiator, type NegotiationOptions } from '../../acmp/negotiation/negotiator.js';
import { NegotiationSessions, type SessionOptions } from '../../acmp/negotiation/sessions.js';
import { KyselyAgreementStore } from '../../storage/acmp-agreement-store-kysely.js';
import { KyselySessionStore } from '../../storage/acmp-session-store-kysely.js';
import type { HostModule, ModuleContext } from '../module.js';

/** Options of the ACMP module: the provider definition, minus what the host supplies (store, clock, ids). */
const SHUTDOWN_GRACE_MS = 5_000;
const FINAL_SAVE_MS = 2_000;

/** Session mode (our extension, docs/acmp-negotiation.md "Session mode"): its limits, policy and URI. */
export type SessionModuleOptions = SessionOptions & {
  /** The extension URI (default `urn:a2a-commerce:acmp:negotiation-session:v0`). */
  uri?: string;
  /** How often a subscriber re-reads its session when no signal came (default 1 s). */
  fallbackReadMs?: number;
};

export type AcmpModuleOptions = Omit<AcmpProviderOptions, 'store' | 'clock' | 'ids' | 'logger' | 'negotiation'> & {
  /** The card extension's `required` flag (default false). */
  required?: boolean;
  /**
   * Serve Layer 6 negotiation (offerRequest / accept); agreements live in the host database. `sessions`
   * adds session mode (counter-offers in one A2A task) next to the flat mode.
   */
  negotiation?: boolean | (Omit<NegotiationOptions, 'store' | 'clock' | 'references'> & { sessions?: boolean | SessionModuleOptions });
};

/**
 * ACMP over A2A as a host module: the provider core over the host's database (idempotency survives
 * restarts and is shared by every host on one PostgreSQL), exposed through the A2A binding.
 */
export function acmpModule(options: AcmpModuleOptions): HostModule {
  return {
    name: 'acmp',
    migrations: [acmpMigrations],
    ownerColumns: ACMP_OWNER_COLUMNS,
    async start(context) {
      const { required, negotiation, ...providerOptions } = options;
      const { sessions: sessionOptions, ...negotiationOptions } = negotiation === true ? {} : negotiation || {};
      const store = context.database ? new KyselyAcmpTaskStore(context.database, { logger: context.logger }) : new MemoryAcmpTaskStore();
      // Signals must flow before the first task is followed (PostgreSQL LISTEN).
      if (store instanceof KyselyAcmpTaskStore) await store.open();
      const holder: { sessions?: NegotiationSessions } = {};
      const negotiating: NegotiationOptions | undefined = negotiation
        ? {
            ...negotiationOptions,
            store: context.database ? new KyselyAgreementStore(context.database) : new MemoryAgreementStore(),
            clock: context.clock,
            ...(sessionOptions ? { references: (taskId: string) => holder.sessions?.reference(taskId) ?? Promise.resolve(undefined) } : {}),
          }
        : undefined;
      const provider = createAcmpProvider({
        ...providerOptions,
        store,
        ...(negotiating ? { negotiation: negotiating } : {}),
        clock: context.clock,
        ids: context.ids,
        logger: context.logger,
      });
      const session = negotiating && sessionOptions ? await startSessions(context, negotiating, options, sessionOptions === true ? {} : sessionOptions) : undefined;
      holder.sessions = session?.sessions;
      const binding = createAcmpBinding({ provider, required, sessions: session?.binding, ids: context.ids, clock: context.clock, logger: context.logger });
      return {
        binding,
        // Graceful stop: running invokes get a grace period to finish (their results are stored and
        // replayed to retries); what still runs then ends as -33099 and is saved before the database closes.
        close: async () => {
          await provider.drain(SHUTDOWN_GRACE_MS);
          await provider.close();
          await binding.drain(FINAL_SAVE_MS);
          await holder.sessions?.close();
          await store.close?.();
        },
      };
    },
  };
}

/** The session service over the host database (the same agreements as flat mode) and its A2A side. */
async function startSessions(
  context: ModuleContext,
  negotiation: NegotiationOptions,
  options: AcmpModuleOptions,
  sessionOptions: SessionModuleOptions,
): Promise<{ sessions: NegotiationSessions; binding: AcmpSessionBinding }> {
  const { uri, fallbackReadMs, ...limits } = sessionOptions;
  const store = context.database ? new KyselySessionStore(context.database, { logger: context.logger }) : new MemorySessionStore();
  if (store instanceof KyselySessionStore) await store.open();
  const capabilities = new Map(options.capabilities.map((c) => [c.id, c]));
  const sessions = new NegotiationSessions({
    ...limits,
    store,
    negotiator: new Negotiator(negotiation, capabilities),
    capabilities,
    clock: context.clock,
    ids: context.ids,
    logger: context.logger,
  });
  sessions.start();
  const binding = new AcmpSessionBinding({ sessions, ids: context.ids, ...(uri !== undefined ? { uri } : {}), ...(fallbackReadMs !== undefined ? { fallbackReadMs } : {}) });
  return { sessions, binding };
}
