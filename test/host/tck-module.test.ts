import { afterEach, describe, expect, it } from 'vitest';
import { modulesFromFlags } from '../../src/cli/serve-modules.js';
import { resolveHostConfig } from '../../src/server/config.js';
import { defaultModules } from '../../src/cli/host-modules.js';
import { tckModule } from '../../src/server/modules/tck.js';
import { scenarioFor, TCK_PREFIXES } from '../../src/a2a/tck/scenarios.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';

afterEach(cleanup);

const config = () => resolveHostConfig({ 'no-tls': true, 'data-dir': tempDir() }, {});

describe('the tck module is opt-in', () => {
  it('is not among the default modules, nor the default --modules', () => {
    expect(defaultModules(config()).map((m) => m.name)).not.toContain('tck');
    expect(modulesFromFlags({}, config(), {}).map((m) => m.name)).not.toContain('tck');
  });

  it('runs with --modules tck, beside the modules listed with it', () => {
    const names = modulesFromFlags({ modules: 'acmp,tck' }, config(), {}).map((m) => m.name);
    expect(names).toEqual(['acmp', 'tck']);
  });

  it('reads TCK_STREAMING_TIMEOUT in seconds and refuses one that is not a positive number', () => {
    const flags = { modules: 'tck' };
    expect(() => modulesFromFlags(flags, config(), { TCK_STREAMING_TIMEOUT: '1.5' })).not.toThrow();
    for (const bad of ['abc', '0', '-1'])
      expect(() => modulesFromFlags(flags, config(), { TCK_STREAMING_TIMEOUT: bad })).toThrow(
        /TCK_STREAMING_TIMEOUT must be a positive number of seconds/,
      );
  });

  it('a host refuses two modules that both answer plain A2A messages (CONFIG_INVALID)', async () => {
    await expect(startTestHost({ modules: [tckModule(), tckModule()] })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    });
  });
});

describe('TCK prefixes (SUT_REQUIREMENTS.md "Message ID Patterns")', () => {
  it('are matched longest first', () => {
    const lengths = TCK_PREFIXES.map((p) => p.length);
    expect(lengths).toEqual([...lengths].sort((a, b) => b - a));
    expect(scenarioFor('tck-artifact-file-url-1234')?.prefix).toBe('tck-artifact-file-url');
    expect(scenarioFor('tck-stream-artifact-file-1234')?.prefix).toBe('tck-stream-artifact-file');
    expect(scenarioFor('test-resubscribe-message-id-1')?.prefix).toBe('test-resubscribe-message-id');
  });

  it('leave every other message id to normal processing', () => {
    expect(scenarioFor('tck-send-003-1234')).toBeUndefined();
    expect(scenarioFor('x-tck-complete-task')).toBeUndefined();
  });
});
