/**
 * Reads a QR code back off terminal text, as a phone camera would off the screen: the half-block
 * characters (`▀ ▄ █` and space) in their ANSI colours become a pixel matrix, two pixels per
 * character cell, and jsQR decodes it. Text with no QR code decodes to `undefined`.
 */
import jsQRModule from 'jsqr';

// jsQR is CommonJS with its function on `default`; under Node's ESM interop that is one level down.
const jsQR = ((jsQRModule as unknown as { default?: typeof jsQRModule }).default ??
  jsQRModule) as unknown as (
  data: Uint8ClampedArray,
  width: number,
  height: number,
) => { data: string } | null;

const DARK = 0;
const LIGHT = 255;

/** Foreground and background luminance after one SGR escape (`\x1b[…m`). */
function applySgr(codes: string, colour: { fg: number; bg: number }): void {
  for (const code of codes === '' ? ['0'] : codes.split(';')) {
    const n = Number(code);
    if (n === 0) {
      // The terminal's own colours: dark, the harder case (only the code's white border separates it).
      colour.fg = DARK;
      colour.bg = DARK;
    } else if (n >= 30 && n <= 37) colour.fg = n === 37 ? LIGHT : DARK;
    else if (n >= 40 && n <= 47) colour.bg = n === 47 ? LIGHT : DARK;
  }
}

/** One row of characters as two rows of module luminances (top half, bottom half). */
function rowPixels(line: string): [number[], number[]] {
  const colour = { fg: DARK, bg: DARK };
  const top: number[] = [];
  const bottom: number[] = [];
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\x1b') {
      const end = line.indexOf('m', i);
      applySgr(line.slice(i + 2, end), colour);
      i = end;
      continue;
    }
    const ch = line[i];
    const [t, b] =
      ch === '█'
        ? [colour.fg, colour.fg]
        : ch === '▀'
          ? [colour.fg, colour.bg]
          : ch === '▄'
            ? [colour.bg, colour.fg]
            : [colour.bg, colour.bg];
    top.push(t);
    bottom.push(b);
  }
  return [top, bottom];
}

/**
 * Decode the QR code drawn in `lines`, each module scaled to `scale` pixels, on a dark screen
 * around it (the harder case for a camera: only the code's own white border sets it off).
 */
export function decodeTerminalQr(lines: string[], scale = 4): string | undefined {
  const rows = lines.flatMap((line) => rowPixels(line));
  if (rows.length === 0) return undefined;
  const margin = 8;
  const modules = Math.max(...rows.map((r) => r.length));
  const width = (modules + 2 * margin) * scale;
  const height = (rows.length + 2 * margin) * scale;
  const data = new Uint8ClampedArray(width * height * 4).fill(DARK);
  for (let at = 3; at < data.length; at += 4) data[at] = 255;
  rows.forEach((row, y) => {
    row.forEach((value, x) => {
      for (let dy = 0; dy < scale; dy++) {
        for (let dx = 0; dx < scale; dx++) {
          const at = (((y + margin) * scale + dy) * width + (x + margin) * scale + dx) * 4;
          data[at] = data[at + 1] = data[at + 2] = value;
        }
      }
    });
  });
  return jsQR(data, width, height)?.data;
}
