import { AcmpSessionBinding } from '../../a2a/acmp/negotiation-session.js';
import { createAcmpBinding } from '../../a2a/acmp/provider-binding.js';
import { createProviderEscrow, type ProviderEscrowOptions } from '../../a2a/escrow/provider-escrow.js';
import { createAcmpProvider, type AcmpCapability, type AcmpProviderOptions } from '../../acmp/provider.js';
import { MemoryAcmpTaskStore } from '../../acmp/memory-task-store.js';
import { mountAcmpMcp, type AcmpMcpEndpoint } from '../../mcp/http-endpoint.js';
import { serveAcmpStdio } from '../../mcp/stdio-server.js';
import {
  ACMP_OWNER_COLUMNS,
  acmpMigrations,
  KyselyAcmpTaskStore,
} from '../../storage/acmp-task-store-kysely.js';
import { MemoryAgreementStore } from '../../acmp/negotiation/memory-agreement-store.js';
import { MemorySessionStore } from '../../acmp/negotiation/memory-session-store.js';
import { Negotiator, type NegotiationOptions } from '../../acmp/negotiation/negotiator.js';
import {
  NegotiationSessions,
  sessionReferences,
  type SessionOptions,
} from '../../acmp/negotiation/sessions.js';
import { KyselyAgreementStore } from '../../storage/acmp-agreement-store-kysely.js';
import { KyselySessionStore } from '../../storage/acmp-session-store-kysely.js';
import {
  acmpEscrowMigrations,
  KyselyReservationStore,
  MemoryReservationStore,
} from '../../storage/escrow-reservations.js';
import type { HostModule, ModuleContext } from '../module.js';

/** Options of the ACMP module: the provider definition, minus what the host supplies (store, clock, ids). */
const SHUTDOWN_GRACE_MS = 5_000;
const FINAL_SAVE_MS = 2_000;
const MCP_SERVER_INFO = { name: 'a2a-commerce', version: '0.1.0' };

/** The origin of the host's base URL (browsers calling /mcp must come from it); none before it listens. */
function originsOf(baseUrl: string): string[] {
  return URL.canParse(baseUrl) ? [new URL(baseUrl).origin] : [];
}

/** Session mode (our extension, docs/acmp-negotiation.md "Session mode"): its limits, policy and URI. */
export type SessionModuleOptions = SessionOptions & {
  /** The extension URI (default `urn:a2a-commerce:acmp:negotiation-session:v0`). */
  uri?: string;
  /** How often a subscriber re-reads its session when no signal came (default 1 s). */
  fallbackReadMs?: number;
};

/** Layer 6 negotiation as the module takes it: the negotiator's options, and session mode when wanted. */
export type NegotiationModuleOptions = Omit<NegotiationOptions, 'store' | 'clock' | 'references'> & {
  sessions?: boolean | SessionModuleOptions;
};

export type AcmpModuleOptions = Omit<
  AcmpProviderOptions,
  'store' | 'clock' | 'ids' | 'logger' | 'negotiation'
> & {
  /** The card extension's `required` flag (default false). */
  required?: boolean;
  /**
   * Serve Layer 6 negotiation (offerRequest / accept); agreements live in the host database. `sessions`
   * adds session mode (counter-offers in one A2A task) next to the flat mode.
   */
  negotiation?: boolean | NegotiationModuleOptions;
  /** Check every `escrow_id` at this escrow agent and claim unreleased costs (docs/acmp-escrow.md). */
  escrowAgent?: ProviderEscrowOptions;
};

/**
 * ACMP as a host module: the provider core over the host's database (idempotency survives restarts and is
 * shared by every host on one PostgreSQL), exposed through the A2A binding and, from the same provider and
 * records, MCP (Streamable HTTP at /mcp, and stdio; docs/acmp-mcp-binding.md).
 */
export function acmpModule(options: AcmpModuleOptions): HostModule {
  return {
    name: 'acmp',
    migrations: [acmpMigrations, ...(options.escrowAgent ? [acmpEscrowMigrations] : [])],
    ownerColumns: ACMP_OWNER_COLUMNS,
    async start(context) {
      const { required, negotiation, escrowAgent, ...providerOptions } = options;
      const store = context.database
        ? new KyselyAcmpTaskStore(context.database, { logger: context.logger })
        : new MemoryAcmpTaskStore();
      // Signals must flow before the first task is followed (PostgreSQL LISTEN).
      if (store instanceof KyselyAcmpTaskStore) await store.open();
      const reservations = context.database
        ? new KyselyReservationStore(context.database)
        : new MemoryReservationStore();
      const escrow =
        escrowAgent &&
        createProviderEscrow(escrowAgent, {
          reservations,
          capabilities: options.capabilities,
          task: (id) => store.get(id),
          clock: context.clock,
          logger: context.logger,
        });
      const negotiating = negotiation
        ? negotiationOf(context, negotiation === true ? {} : negotiation)
        : undefined;
      const provider = createAcmpProvider({
        ...providerOptions,
        ...(escrow ? { escrow: escrow.verifier } : {}),
        store,
        ...(negotiating ? { negotiation: negotiating.options } : {}),
        clock: context.clock,
        ids: context.ids,
        logger: context.logger,
      });
      const sessions = await negotiating?.startSessions(options.capabilities);
      const extensions = escrow ? [escrow.extension] : [];
      const binding = createAcmpBinding({
        provider,
        required,
        extensions,
        sessions: sessions?.binding,
        ids: context.ids,
        clock: context.clock,
        logger: context.logger,
      });
      const mcp = {
        provider,
        serverInfo: MCP_SERVER_INFO,
        stopping: context.stopping,
        ids: context.ids,
        logger: context.logger,
      };
      let endpoint: AcmpMcpEndpoint | undefined;
      return {
        binding,
        mountHttp: (app, guards) => {
          endpoint = mountAcmpMcp(app, {
            ...mcp,
            guards,
            allowedOrigins: () => originsOf(context.baseUrl()),
          });
        },
        serveStdio: ({ stdin, stdout, caller }) =>
          serveAcmpStdio({ ...mcp, scope: { tenant: '', agent: caller }, stdin, stdout }),
        // Graceful stop: running invokes get a grace period to finish (their results are stored and
        // replayed to retries); what still runs then ends as -33099 and is saved before the database closes.
        close: async () => {
          await endpoint?.close();
          await escrow?.stop();
          await provider.drain(SHUTDOWN_GRACE_MS);
          await provider.close();
          await binding.drain(FINAL_SAVE_MS);
          await sessions?.service.close();
          await store.close?.();
        },
      };
    },
  };
}

/**
 * The negotiator's options over the host database, and the start of session mode when it is configured:
 * the session service (the same agreement store as flat mode, so an acceptance writes the same agreement)
 * and its A2A side. The negotiator resolves an invoke's `referenceTaskIds` through the sessions.
 */
function negotiationOf(
  context: ModuleContext,
  negotiation: NegotiationModuleOptions,
): {
  options: NegotiationOptions;
  startSessions(
    capabilities: readonly AcmpCapability[],
  ): Promise<{ service: NegotiationSessions; binding: AcmpSessionBinding } | undefined>;
} {
  const { sessions: sessionOptions, ...negotiatorOptions } = negotiation;
  const sessionStore = sessionOptions
    ? context.database
      ? new KyselySessionStore(context.database, { logger: context.logger })
      : new MemorySessionStore()
    : undefined;
  const options: NegotiationOptions = {
    ...negotiatorOptions,
    store: context.database ? new KyselyAgreementStore(context.database) : new MemoryAgreementStore(),
    clock: context.clock,
    ...(sessionStore ? { references: sessionReferences(sessionStore) } : {}),
  };
  return {
    options,
    async startSessions(capabilities) {
      if (!sessionStore || !sessionOptions) return undefined;
      const { uri, fallbackReadMs, ...limits } = sessionOptions === true ? {} : sessionOptions;
      if (sessionStore instanceof KyselySessionStore) await sessionStore.open();
      const byId = new Map(capabilities.map((c) => [c.id, c]));
      const service = new NegotiationSessions({
        ...limits,
        store: sessionStore,
        negotiator: new Negotiator(options, byId),
        capabilities: byId,
        clock: context.clock,
        ids: context.ids,
        logger: context.logger,
      });
      service.start();
      const binding = new AcmpSessionBinding({
        sessions: service,
        ids: context.ids,
        ...(uri !== undefined ? { uri } : {}),
        ...(fallbackReadMs !== undefined ? { fallbackReadMs } : {}),
      });
      return { service, binding };
    },
  };
}
