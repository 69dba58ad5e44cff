import type express from 'express';
import { createAcpBinding } from '../../a2a/acp/receiver-binding.js';
import type { A2ABinding } from '../../a2a/binding.js';
import type { Kind } from '../../acpspec/constants.js';
import { createAcpReceiver, type AcpReceiver } from '../../acpspec/receiver.js';
import type { TransactionStore } from '../../acpspec/transaction-store.js';
import type { Producer } from '../../acpspec/envelope.js';
import { LocalError } from '../../shared/errors.js';
import type { IdSource } from '../../shared/ids.js';
import { mountAcpRoutes } from '../../http/acp-routes.js';
import { createAcpMcpContribution } from '../../mcp/acp/acp-contribution.js';
import { MemoryTransactionStore } from '../../storage/memory/acp-transaction-store-memory.js';
import {
  ACP_OWNER_COLUMNS,
  acpMigrations,
  createKyselyTransactionStore,
  KyselyTransactionStore,
} from '../../storage/acpspec/acp-transaction-store-kysely.js';
import type { HostModule, HttpGuards, ModuleContext, ModuleParts } from '../module.js';

export interface AcpModuleOptions {
  /** This agent's id (matched against consent `granted_to`) and role on the snapshots it writes. */
  producer: Producer;
  accepts?: readonly Kind[];
  emits?: readonly Kind[];
  /**
   * Ids of the receiver's state snapshots and own events; `newId()` MUST return a UUIDv7. Default: a
   * UUIDv7 from the host clock. Tests inject a deterministic source to compare state bytes across hosts.
   */
  stateIds?: IdSource;
}

/**
 * ACPspec as a host module: the receiver over the host's database, served over A2A (the binding), over
 * plain HTTPS (the routes) and, on the host's MCP server, as resources and tools (docs/acpspec-mcp.md), so
 * every binding shares one store and one pipeline.
 */
export function acpModule(options: AcpModuleOptions): HostModule {
  return new AcpModule({
    ...options,
    accepts: options.accepts ?? ['snapshot', 'delta'],
    emits: options.emits ?? ['snapshot'],
  });
}

/** The module's options with their defaults applied. */
type AcpModuleSettings = AcpModuleOptions & Required<Pick<AcpModuleOptions, 'accepts' | 'emits'>>;

/** The transaction store for the host's dialect: over the host database when there is one, in memory otherwise. */
function acpTransactionStoreOf(
  context: Pick<ModuleContext, 'database' | 'metrics' | 'logger'>,
): TransactionStore {
  return context.database
    ? createKyselyTransactionStore(context.database, { metrics: context.metrics, logger: context.logger })
    : new MemoryTransactionStore();
}

/** The ACPspec module: its tables, the TLS check, and the receiver and binding each start builds. */
class AcpModule implements HostModule {
  readonly name = 'acpspec';
  readonly migrations = [acpMigrations];
  readonly ownerColumns = ACP_OWNER_COLUMNS;

  constructor(private readonly options: AcpModuleSettings) {}

  check({ secure, noPersonalData }: { secure: boolean; noPersonalData: boolean }): void {
    // Seed "The Conformance Rule": a card advertising ACPspec over a non-TLS endpoint is non-conformant,
    // unless this host handles no personal data at all.
    if (!secure && !noPersonalData) {
      throw new LocalError(
        'CONFIG_INVALID',
        'ACPspec carries personal data and must be served over TLS: use TLS, or declare --no-personal-data',
      );
    }
  }

  async start(context: ModuleContext): Promise<ModuleParts> {
    const store = acpTransactionStoreOf(context);
    // On PostgreSQL the store hears every host's commits (LISTEN/NOTIFY): open it before serving.
    if (store instanceof KyselyTransactionStore) await store.open();
    // One receiver for every binding; the store's commits tell MCP subscribers of each accepted envelope.
    const receiver = this.receiver(context, store);
    context.mcp?.add(
      createAcpMcpContribution({
        receiver,
        commits: store,
        accepts: this.options.accepts,
        emits: this.options.emits,
        secure: context.secure,
        baseUrl: context.baseUrl,
        clock: context.clock,
        logger: context.logger,
      }),
    );
    return new RunningAcpModule(context, { receiver, binding: this.binding(context, receiver), store });
  }

  /** The receiver pipeline over the store for the host's dialect. */
  private receiver(context: ModuleContext, store: TransactionStore): AcpReceiver {
    const { options } = this;
    return createAcpReceiver({
      store,
      accepts: options.accepts,
      receiverAgentId: options.producer.agent_id,
      producer: options.producer,
      clock: context.clock,
      logger: context.logger,
      ...(context.metrics ? { metrics: context.metrics } : {}),
      ...(options.stateIds ? { ids: options.stateIds } : {}),
    });
  }

  /** The A2A binding of the receiver. */
  private binding(context: ModuleContext, receiver: AcpReceiver): A2ABinding {
    return createAcpBinding({
      receiver,
      accepts: this.options.accepts,
      emits: this.options.emits,
      secure: context.secure,
      baseUrl: context.baseUrl,
      ids: context.ids,
      logger: context.logger,
    });
  }
}

/** A started ACPspec module: one receiver served over A2A (the binding) and plain HTTPS (the routes). */
class RunningAcpModule implements ModuleParts {
  readonly binding: A2ABinding;
  private readonly receiver: AcpReceiver;
  private readonly store: TransactionStore;

  constructor(
    private readonly context: ModuleContext,
    parts: { receiver: AcpReceiver; binding: A2ABinding; store: TransactionStore },
  ) {
    this.binding = parts.binding;
    this.receiver = parts.receiver;
    this.store = parts.store;
  }

  /** Closes the store's LISTEN connection (PostgreSQL). */
  async close(): Promise<void> {
    if (this.store instanceof KyselyTransactionStore) await this.store.close();
  }

  /** ACPspec over plain HTTPS, behind the host's bearer authentication and body limit. */
  mountHttp(app: express.Express, guards: HttpGuards): void {
    mountAcpRoutes(app, {
      receiver: this.receiver,
      secure: this.context.secure,
      auth: guards.auth,
      callerOf: guards.callerOf,
      bodyLimitBytes: guards.bodyLimitBytes,
      logger: this.context.logger,
    });
  }
}
