// Encoders from float rows to ggml tensor types.
import { GgmlType } from "./writer.js";

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE 754 half precision, round to nearest. */
export function toHalf(value: number): number {
  f32[0] = value;
  const x = u32[0] ?? 0;
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  let mant = x & 0x7fffff;
  if (exp >= 31) return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant = (mant | 0x800000) >> (1 - exp);
    return sign | ((mant + 0x1000) >> 13);
  }
  const half = sign | (exp << 10) | (mant >> 13);
  return mant & 0x1000 ? half + 1 : half;
}

/** Encodes `rows` (row-major, each `rowLength` floats) into `type`. */
export function encodeRows(values: Float32Array, type: GgmlType): Uint8Array {
  switch (type) {
    case GgmlType.F32:
      return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    case GgmlType.F16: {
      const out = Buffer.alloc(values.length * 2);
      for (let i = 0; i < values.length; i++) out.writeUInt16LE(toHalf(values[i] ?? 0), i * 2);
      return out;
    }
    case GgmlType.Q8_0: {
      const blocks = values.length / 32;
      const out = new Uint8Array(blocks * 34);
      const q = new Int8Array(out.buffer);
      for (let b = 0; b < blocks; b++) {
        const base = b * 32;
        let max = 0;
        for (let i = 0; i < 32; i++) {
          const a = Math.abs(values[base + i] as number);
          if (a > max) max = a;
        }
        const d = max / 127;
        const h = toHalf(d);
        const o = b * 34;
        out[o] = h & 0xff;
        out[o + 1] = h >> 8;
        const inv = d === 0 ? 0 : 1 / d;
        for (let i = 0; i < 32; i++) q[o + 2 + i] = Math.round((values[base + i] as number) * inv);
      }
      return out;
    }
    default:
      return type satisfies never;
  }
}
