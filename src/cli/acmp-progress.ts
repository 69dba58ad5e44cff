import type { BuyerEvent } from '../acmp/buyer/buyer.js';
import type { CliIo } from './io.js';

/** A live progress line fed by the buyer's heartbeats and chunks. */
export interface ProgressLine {
  update(event: BuyerEvent): void;
  /** Ends the line (a TTY line gets its newline). */
  done(): void;
}

/**
 * Whether progress may be drawn as one `\r`-updated line: only for the process's own streams (`io.env` is
 * `process.env`) when stderr is a terminal. Captured IO (tests, embedding) always gets plain lines.
 */
export function progressIsTty(io: CliIo): boolean {
  return io.env === process.env && process.stderr.isTTY === true;
}

/** The text of one progress update: `task… 42% counted 4 of 10` or `task… 3 chunk(s), 120 chars`. */
export function describeProgress(
  event: BuyerEvent,
  state: { chunks: number; chars: number },
): string | undefined {
  switch (event.kind) {
    case 'heartbeat': {
      const { progress, detail } = event.params;
      const percent = progress === undefined ? 'working' : `${Math.round(progress * 100)}%`;
      return `${event.params.task_id} ${percent}${detail ? ` ${detail}` : ''}`;
    }
    case 'chunk': {
      state.chunks += 1;
      const data = event.params.chunk.data;
      state.chars += typeof data === 'string' ? data.length : JSON.stringify(data).length;
      return `${event.params.task_id} ${state.chunks} chunk(s), ${state.chars} chars${event.params.final === true ? ' (final)' : ''}`;
    }
    case 'result':
      return undefined;
  }
}

/**
 * Writes progress to stderr: a `\r`-updated line on a terminal, one plain line per update otherwise.
 * @param tty draw on a terminal (see {@link progressIsTty}); `write` is then used without newlines.
 */
export function createProgressLine(
  io: CliIo,
  tty: boolean,
  write: (text: string) => void = (t) => process.stderr.write(t),
): ProgressLine {
  return tty ? new TerminalProgressLine(write) : new PlainProgressLine(io);
}

/** Counts of the chunks seen so far, for {@link describeProgress}. */
type ProgressCounts = { chunks: number; chars: number };

/** One line redrawn in place (`\r`, clear to end of line); ended with a newline once something was drawn. */
class TerminalProgressLine implements ProgressLine {
  private readonly counts: ProgressCounts = { chunks: 0, chars: 0 };
  private drawn = false;

  constructor(private readonly write: (text: string) => void) {}

  update(event: BuyerEvent): void {
    const text = describeProgress(event, this.counts);
    if (text === undefined) return;
    this.write(`\r\x1b[K… ${text}`);
    this.drawn = true;
  }

  done(): void {
    if (this.drawn) this.write('\n');
    this.drawn = false;
  }
}

/** One `progress: …` line on the CLI's error stream per update. */
class PlainProgressLine implements ProgressLine {
  private readonly counts: ProgressCounts = { chunks: 0, chars: 0 };

  constructor(private readonly io: CliIo) {}

  update(event: BuyerEvent): void {
    const text = describeProgress(event, this.counts);
    if (text !== undefined) this.io.err(`progress: ${text}`);
  }

  done(): void {
    // Every update was a line of its own: nothing to end.
  }
}
