/**
 * The demo's QR code of a link reads back to exactly that link, and text that only looks like a
 * code does not decode: the decoder the demo tests rely on can fail.
 */
import { describe, expect, it } from 'vitest';
import { qrLines } from '../../examples/demo/qr.js';
import { decodeTerminalQr } from './terminal-qr.js';

describe('the terminal QR code', () => {
  it.each([
    'http://192.0.2.2:41234/s/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_',
    'http://[2001:db8::1]:8080/s/x?y=1',
  ])('decodes back to %s', async (link) => {
    const lines = await qrLines(link);
    expect(lines.length).toBeGreaterThan(10);
    expect(decodeTerminalQr(lines)).toBe(link);
  });

  it('decodes nothing from a broken code', async () => {
    const lines = await qrLines('http://192.0.2.2:41234/s/abc');
    // Blank the top third: the finder patterns are gone.
    const broken = lines.map((line, i) => (i < lines.length / 3 ? '\x1b[47m'.padEnd(40, ' ') : line));
    expect(decodeTerminalQr(broken)).toBeUndefined();
    expect(decodeTerminalQr([])).toBeUndefined();
  });
});
