/**
 * The answer link as a QR code a phone camera reads off the terminal: `qrcode`'s terminal
 * renderer with half-block characters (two modules per character row) on a forced white
 * background, so it scans on dark and light terminals alike.
 *
 * It only draws; it never decides whether a link should be shown.
 */
import QRCode from 'qrcode';

/** The QR code of `text` as terminal lines (ANSI colours, each line complete on its own). */
export async function qrLines(text: string): Promise<string[]> {
  const drawn = await QRCode.toString(text, { type: 'terminal', small: true, errorCorrectionLevel: 'L' });
  // Strip the trailing colour reset left on a line of its own.
  return drawn.split('\n').filter((line) => line.replace(/\x1b\[[0-9;]*m/g, '') !== '');
}
