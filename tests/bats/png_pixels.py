"""png_pixels.py PNG [R,G,B ...]: what a screenshot shows, for the bats tests.

Prints "WIDTH HEIGHT COLOURS" (the number of distinct colours), then for
each R,G,B given the number of pixels of that colour, give or take 8 in
each channel, one per line.  Exits 1 with a message when the file is not
an 8-bit RGB or RGBA PNG.  The standard library only: it decodes what
Chromium writes, not every PNG.
"""

from __future__ import annotations

import struct
import sys
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {2: 3, 6: 4}  # colour type: RGB, RGBA


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read(path: str) -> tuple[int, int, int, list[bytes]]:
    """The width, the height, the bytes a pixel and the rows of pixels."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG")
    pos, idat, header = len(SIGNATURE), [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"not 8-bit RGB(A) without interlace (depth {depth}, type {colour})")
    bpp = CHANNELS[colour]
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 2:
            line = bytearray((x + p) & 0xFF for x, p in zip(line, prev, strict=True))
        elif kind:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                c = prev[i - bpp] if i >= bpp else 0
                add = (0, a, prev[i], (a + prev[i]) // 2, _paeth(a, prev[i], c))[kind]
                line[i] = (line[i] + add) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main(argv: list[str]) -> int:
    try:
        width, height, bpp, rows = read(argv[1])
    except (OSError, ValueError, zlib.error, struct.error, IndexError) as exc:
        print(f"png_pixels.py: cannot read '{argv[1]}': {exc}", file=sys.stderr)
        return 1
    pixels = [row[i : i + 3] for row in rows for i in range(0, len(row), bpp)]
    print(width, height, len(set(pixels)))
    for spec in argv[2:]:
        want = [int(v) for v in spec.split(",")]
        print(sum(all(abs(p[k] - want[k]) <= 8 for k in range(3)) for p in pixels))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
