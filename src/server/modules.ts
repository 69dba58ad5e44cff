import { demoCapabilities } from '../acmp/demo-capabilities.js';
import type { HostConfig } from './config.js';
import type { HostModule } from './module.js';
import { acmpModule } from './modules/acmp.js';

/** The modules `serve` and the demo run by default: the bindings with their demo definitions. */
export function defaultModules(_config: HostConfig): HostModule[] {
  return [acmpModule({ capabilities: demoCapabilities(), providerId: 'agent:a2a-commerce-demo:local' })];
}
