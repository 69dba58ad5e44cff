import { createAcpBinding } from '../../a2a/acp/receiver-binding.js';
import type { Kind } from '../../acpspec/constants.js';
import { createAcpReceiver } from '../../acpspec/receiver.js';
import type { Producer } from '../../acpspec/envelope.js';
import { LocalError } from '../../shared/errors.js';
import type { IdSource } from '../../shared/ids.js';
import { mountAcpRoutes } from '../../http/acp-routes.js';
import { MemoryTransactionStore } from '../../storage/acp-transaction-store-memory.js';
import {
  ACP_OWNER_COLUMNS,
  acpMigrations,
  createKyselyTransactionStore,
} from '../../storage/acp-transaction-store-kysely.js';
import type { HostModule } from '../module.js';

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
 * ACPspec as a host module: the receiver over the host's database, served over A2A (the binding) and
 * over plain HTTPS (the routes), so both bindings share one store and one pipeline.
 */
export function acpModule(options: AcpModuleOptions): HostModule {
  const accepts = options.accepts ?? ['snapshot', 'delta'];
  const emits = options.emits ?? ['snapshot'];
  return {
    name: 'acpspec',
    migrations: [acpMigrations],
    ownerColumns: ACP_OWNER_COLUMNS,
    check({ secure, noPersonalData }) {
      // Seed "The Conformance Rule": a card advertising ACPspec over a non-TLS endpoint is non-conformant,
      // unless this host handles no personal data at all.
      if (!secure && !noPersonalData) {
        throw new LocalError(
          'CONFIG_INVALID',
          'ACPspec carries personal data and must be served over TLS: use TLS, or declare --no-personal-data',
        );
      }
    },
    start(context) {
      const store = context.database
        ? createKyselyTransactionStore(context.database)
        : new MemoryTransactionStore();
      const receiver = createAcpReceiver({
        store,
        accepts,
        receiverAgentId: options.producer.agent_id,
        producer: options.producer,
        clock: context.clock,
        logger: context.logger,
        ...(options.stateIds ? { ids: options.stateIds } : {}),
      });
      const binding = createAcpBinding({
        receiver,
        accepts,
        emits,
        secure: context.secure,
        baseUrl: context.baseUrl,
        ids: context.ids,
        logger: context.logger,
      });
      return {
        binding,
        mountHttp: (app, guards) =>
          mountAcpRoutes(app, {
            receiver,
            secure: context.secure,
            auth: guards.auth,
            callerOf: guards.callerOf,
            bodyLimitBytes: guards.bodyLimitBytes,
            logger: context.logger,
          }),
      };
    },
  };
}
