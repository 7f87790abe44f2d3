import { encodePng, type Rgba } from '../../src/modules/assets/pixels'

/** A photo-like test picture: smooth gradients, a soft pattern and a little noise (deterministic). */
export function photo(width: number, height: number, seed = 1): Rgba {
  const data = new Uint8Array(width * height * 4)
  let s = seed
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4
      s = (s * 1103515245 + 12345) & 0x7fffffff
      const n = ((s >> 16) % 9) - 4
      data[i] = clamp(128 + 90 * Math.sin(x / 41) * Math.cos(y / 57) + n)
      data[i + 1] = clamp((x * 200) / width + 30 + n)
      data[i + 2] = clamp((y * 200) / height + 30 - n)
      data[i + 3] = 255
    }
  }
  return { data, width, height }
}

const clamp = (v: number) => Math.max(0, Math.min(255, Math.round(v)))

export const pngOf = (img: Rgba) => encodePng(img, 6)
export const jpegOf = (img: Rgba, quality = 92) => new Bun.Image(encodePng(img)).jpeg({ quality }).bytes()
export const webpOf = (img: Rgba, quality = 90) => new Bun.Image(encodePng(img)).webp({ quality }).bytes()

/** A 1×1 GIF with two frames: white, then black. */
export function animatedGif(): Uint8Array {
  // prettier-ignore
  return new Uint8Array([
    0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0x80, 0, 0, // header, 1×1, global palette of 2
    0xff, 0xff, 0xff, 0, 0, 0, // white, black
    0x21, 0xff, 0x0b, ...new TextEncoder().encode('NETSCAPE2.0'), 3, 1, 0, 0, 0, // loop forever
    0x21, 0xf9, 4, 0, 10, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0, // frame 1: index 0
    0x21, 0xf9, 4, 0, 10, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4c, 0x01, 0, // frame 2: index 1
    0x3b,
  ])
}

/** A PNG header claiming `width`×`height` with almost no data: a decompression bomb's front. */
export function bombPng(width: number, height: number): Uint8Array {
  const real = encodePng({ data: new Uint8Array(4), width: 1, height: 1 })
  const out = real.slice()
  const dv = new DataView(out.buffer)
  dv.setUint32(16, width)
  dv.setUint32(20, height)
  dv.setUint32(29, Bun.hash.crc32(out.subarray(12, 29)) >>> 0)
  return out
}

/** A JPEG with an EXIF APP1 segment (Orientation = 6: rotate 90° clockwise to display), inserted after SOI. */
export function withExifOrientation(jpeg: Uint8Array, orientation: number): Uint8Array {
  // TIFF header (big endian), IFD0 with one entry: 0x0112 SHORT 1 = orientation; plus a GPS-looking marker string.
  const tiff = new Uint8Array([
    0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8, // MM, 42, IFD at 8
    0, 1, // one entry
    0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0, // Orientation
    0, 0, 0, 0, // no next IFD
  ])
  const body = new Uint8Array([...new TextEncoder().encode('Exif\0\0'), ...tiff])
  const seg = new Uint8Array([0xff, 0xe1, (body.length + 2) >> 8, (body.length + 2) & 255, ...body])
  return new Uint8Array([...jpeg.subarray(0, 2), ...seg, ...jpeg.subarray(2)])
}
