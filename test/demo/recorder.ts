/**
 * The demo's output, recorded: its lines, their text, and promises of lines still to come. The
 * demo tests that run `runDemo` in this process share it.
 */
import { EventEmitter, once } from 'node:events';
import type { DemoOutput } from '../../examples/demo/demo.js';

/** A {@link DemoOutput} that keeps every line. */
export interface DemoRecorder extends DemoOutput {
  lines: string[];
  /** Every line so far, joined by newlines. */
  text(): string;
  /** Resolves once a line matches `pattern`. */
  seen(pattern: RegExp): Promise<void>;
  /** The match of the first line that matches `pattern`, once there is one. */
  first(pattern: RegExp): Promise<RegExpMatchArray>;
}

export function recorder(): DemoRecorder {
  const lines: string[] = [];
  const events = new EventEmitter();
  const first = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    for (;;) {
      for (const line of lines) {
        const match = line.match(pattern);
        if (match !== null) return match;
      }
      await once(events, 'line');
    }
  };
  return {
    lines,
    line(text = '') {
      lines.push(text);
      events.emit('line', text);
    },
    text: () => lines.join('\n'),
    seen: async (pattern) => {
      await first(pattern);
    },
    first,
  };
}
