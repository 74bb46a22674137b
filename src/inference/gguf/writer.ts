// A minimal GGUF v3 writer: header, metadata, tensor infos, aligned tensor data.
// Format: GGUF v3, as ggml specifies it: header, key-value metadata, tensor infos, aligned tensor data.
import { closeSync, openSync, renameSync, writeSync } from "node:fs";

export const GgmlType = { F32: 0, F16: 1, Q8_0: 8 } as const;
export type GgmlType = (typeof GgmlType)[keyof typeof GgmlType];

const ValueType = {
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
} as const;

export type MetadataValue =
  | { type: "u32"; value: number }
  | { type: "f32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "string[]"; value: readonly string[] }
  | { type: "f32[]"; value: ArrayLike<number> }
  | { type: "i32[]"; value: ArrayLike<number> };

export interface TensorSpec {
  name: string;
  /** ggml order: dims[0] is the row length (inputs), dims[1] the number of rows. */
  dims: readonly number[];
  type: GgmlType;
  /** Returns the tensor's bytes, already encoded in `type`. Called once, in order. */
  data: () => Uint8Array;
}

const ALIGNMENT = 32;

export function tensorByteSize(dims: readonly number[], type: GgmlType): number {
  const elements = dims.reduce((a, b) => a * b, 1);
  switch (type) {
    case GgmlType.F32:
      return elements * 4;
    case GgmlType.F16:
      return elements * 2;
    case GgmlType.Q8_0:
      if ((dims[0] ?? 0) % 32 !== 0) throw new Error(`Q8_0 needs rows that are a multiple of 32, got ${dims[0]}`);
      return (elements / 32) * 34;
    default:
      return type satisfies never;
  }
}

class ByteSink {
  private chunks: Buffer[] = [];
  length = 0;
  push(buf: Buffer): void {
    this.chunks.push(buf);
    this.length += buf.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  str(s: string): void {
    const bytes = Buffer.from(s, "utf8");
    this.u64(bytes.length);
    this.push(bytes);
  }
  concat(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function writeValue(sink: ByteSink, v: MetadataValue): void {
  switch (v.type) {
    case "u32":
      sink.u32(ValueType.UINT32);
      sink.u32(v.value);
      return;
    case "f32":
      sink.u32(ValueType.FLOAT32);
      sink.f32(v.value);
      return;
    case "bool":
      sink.u32(ValueType.BOOL);
      sink.push(Buffer.from([v.value ? 1 : 0]));
      return;
    case "string":
      sink.u32(ValueType.STRING);
      sink.str(v.value);
      return;
    case "string[]":
      sink.u32(ValueType.ARRAY);
      sink.u32(ValueType.STRING);
      sink.u64(v.value.length);
      for (const s of v.value) sink.str(s);
      return;
    case "f32[]":
      sink.u32(ValueType.ARRAY);
      sink.u32(ValueType.FLOAT32);
      sink.u64(v.value.length);
      for (let i = 0; i < v.value.length; i++) sink.f32(v.value[i] ?? 0);
      return;
    case "i32[]":
      sink.u32(ValueType.ARRAY);
      sink.u32(ValueType.INT32);
      sink.u64(v.value.length);
      for (let i = 0; i < v.value.length; i++) sink.i32(v.value[i] ?? 0);
      return;
    default:
      return v satisfies never;
  }
}

const pad = (n: number) => (ALIGNMENT - (n % ALIGNMENT)) % ALIGNMENT;

/**
 * Writes a GGUF file. Tensor data is produced one tensor at a time, so a model of
 * hundreds of MB never sits in memory whole. Writes to `path + ".partial"` and renames
 * at the end, so a crash never leaves a truncated model under the real name.
 */
export function writeGguf(path: string, metadata: Record<string, MetadataValue>, tensors: readonly TensorSpec[]): void {
  const head = new ByteSink();
  head.push(Buffer.from("GGUF", "ascii"));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(Object.keys(metadata).length);
  for (const [key, value] of Object.entries(metadata)) {
    head.str(key);
    writeValue(head, value);
  }
  let offset = 0;
  for (const t of tensors) {
    head.str(t.name);
    head.u32(t.dims.length);
    for (const d of t.dims) head.u64(d);
    head.u32(t.type);
    head.u64(offset);
    offset += tensorByteSize(t.dims, t.type);
    offset += pad(offset);
  }
  head.push(Buffer.alloc(pad(head.length)));

  const partial = `${path}.${process.pid}.partial`;
  const fd = openSync(partial, "w");
  try {
    writeSync(fd, head.concat());
    for (const t of tensors) {
      const bytes = t.data();
      const expected = tensorByteSize(t.dims, t.type);
      if (bytes.length !== expected) throw new Error(`tensor ${t.name}: ${bytes.length} bytes, expected ${expected}`);
      writeSync(fd, bytes);
      const p = pad(bytes.length);
      if (p > 0) writeSync(fd, Buffer.alloc(p));
    }
  } finally {
    closeSync(fd);
  }
  renameSync(partial, path);
}
