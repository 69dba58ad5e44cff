import type { HostConfig } from './config.js';
import type { HostModule } from './module.js';

/** The modules `serve` runs by default (the bindings this package ships). */
export function defaultModules(_config: HostConfig): HostModule[] {
  return [];
}
