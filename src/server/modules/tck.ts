import { EchoExecutor } from '../../a2a/host/echo-executor.js';
import { TckExecutor } from '../../a2a/tck/executor.js';
import type { HostModule, ModuleContext, ModuleParts } from '../module.js';

export interface TckModuleOptions {
  /** The TCK's `TCK_STREAMING_TIMEOUT` in milliseconds (default 2000, its own default). */
  streamingTimeoutMs?: number;
}

/** The card's skill for the TCK's messages. */
const TCK_SKILL = {
  id: 'a2a-tck',
  name: 'A2A TCK scenarios',
  description:
    'Answers plain A2A messages whose messageId starts with a TCK prefix (tck-*, test-resubscribe-message-id) ' +
    'as the official A2A TCK expects; any other plain message is echoed.',
  tags: ['tck', 'conformance'],
  examples: [],
  inputModes: [],
  outputModes: [],
  securityRequirements: [],
};

/**
 * The opt-in module for the official A2A TCK (`serve --modules tck,…`; never on by default,
 * docs/conformance.md "The official A2A TCK"): it serves the plain A2A messages no commerce binding
 * claims with the TCK's prefix behaviour. It has no tables and no binding of its own.
 */
export function tckModule(options: TckModuleOptions = {}): HostModule {
  return {
    name: 'tck',
    start(context: ModuleContext): ModuleParts {
      const executor = new TckExecutor({
        fallback: new EchoExecutor(context.ids),
        ids: context.ids,
        clock: context.clock,
        ...(options.streamingTimeoutMs === undefined
          ? {}
          : { streamingTimeoutMs: options.streamingTimeoutMs }),
      });
      return { plainExecutor: { executor, skills: [TCK_SKILL] } };
    },
  };
}
