/** Where frames are written: the response's own `write` (Node's `ServerResponse`, Express's `Response`). */
interface FrameSink {
  write(text: string): unknown;
}

/** Frames held before they are written at once, whatever the turn (64 KiB of text). */
const MAX_HELD = 64 * 1024;

/**
 * The frames of one event stream, written once per turn of the event loop: every frame produced within a
 * turn (a handler's chunks ready at once) goes out in one `write` — one HTTP chunk — instead of one each,
 * and nothing waits longer than the turn it was produced in, nor beyond 64 KiB. The bytes of the stream
 * are the same; only the transfer coding's chunk boundaries move (RFC 9112 §7.1: they carry no meaning).
 */
export class FrameBatch {
  private held: string[] = [];
  private size = 0;
  private scheduled: NodeJS.Immediate | undefined;

  constructor(private readonly sink: FrameSink) {}

  /** Holds a frame, to be written by the end of this turn. */
  push(frame: string): void {
    this.held.push(frame);
    this.size += frame.length;
    if (this.size >= MAX_HELD) this.flush();
    else this.scheduled ??= setImmediate(() => this.flush());
  }

  /** Writes what is held now (before the stream's last frame or its end). */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (this.held.length === 0) return;
    const text = this.held.join('');
    this.held = [];
    this.size = 0;
    this.sink.write(text);
  }

  /** Forgets what is held (the response ended elsewhere: nothing may be written to it). */
  drop(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.held = [];
    this.size = 0;
  }
}
