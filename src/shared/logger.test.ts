import { describe, expect, it } from 'vitest';
import { createJsonLogger, errorFields } from './logger.js';

describe('createJsonLogger', () => {
  it('writes one JSON line per record at or above its level', () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ level: 'warn', write: (line) => lines.push(line), now: () => 0 });
    logger.info('dropped');
    logger.warn('kept', { task_id: 't1' });
    logger.error('also.kept');
    expect(lines).toEqual([
      '{"task_id":"t1","time":"1970-01-01T00:00:00.000Z","level":"warn","event":"kept"}\n',
      '{"time":"1970-01-01T00:00:00.000Z","level":"error","event":"also.kept"}\n',
    ]);
  });

  it('lets no field overwrite time, level or event', () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ write: (line) => lines.push(line), now: () => 0 });
    logger.info('real', { event: 'forged', level: 'debug' });
    expect(JSON.parse(lines[0] ?? '')).toEqual({
      time: '1970-01-01T00:00:00.000Z',
      level: 'info',
      event: 'real',
    });
  });

  it('writes nothing when silent', () => {
    const lines: string[] = [];
    createJsonLogger({ level: 'silent', write: (line) => lines.push(line) }).error('x');
    expect(lines).toEqual([]);
  });
});

describe('errorFields', () => {
  it('names the class and code, never the message', () => {
    const error = Object.assign(new Error('secret text'), { code: 'E_X' });
    expect(errorFields(error)).toEqual({ error_name: 'Error', error_code: 'E_X' });
  });
});
