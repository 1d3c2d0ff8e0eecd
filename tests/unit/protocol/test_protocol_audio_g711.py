"""G.711 µ-law against the ITU-T G.711 table (Table 2a), built here from the standard's
description of its segments, independently of the codec's bit arithmetic:

* magnitudes (14-bit units) are cut into 8 segments of 16 intervals; segment 0's first
  interval is [0, 1) with output 0, its others are 2 wide; segments 1..7 have intervals
  4, 8, ..., 256 wide, starting at decision values 31, 95, 223, 479, 991, 2015, 4063;
* each interval decodes to its midpoint (segment 0, interval 0: zero);
* the character signal is ``sign | segment | interval`` with every bit inverted, positive
  values having the sign bit set (so +max is 0x80, +0 is 0xFF, -0 is 0x7F, -max is 0x00).

Our PCM16 samples are these 14-bit values times four.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from openclaw_desktop.protocol.audio import ulaw_decode, ulaw_encode

#: First decision value (14-bit) of segments 1..7 and their interval widths.
SEGMENT_STARTS = [None, 31, 95, 223, 479, 991, 2015, 4063]
SEGMENT_STEPS = [2, 4, 8, 16, 32, 64, 128, 256]


def itu_intervals() -> list[tuple[int, int, int]]:
    """(low, high, output) of each of the 128 magnitude intervals, 14-bit units, in order
    of the 7-bit ``segment << 4 | interval`` value; ``high`` is exclusive."""
    rows = []
    for segment in range(8):
        step = SEGMENT_STEPS[segment]
        for interval in range(16):
            if segment == 0:
                low = 0 if interval == 0 else 2 * interval - 1
                high = 2 * interval + 1
                output = 2 * interval
            else:
                start = SEGMENT_STARTS[segment]
                assert start is not None
                low = start + step * interval
                high = low + step
                output = low + step // 2
            rows.append((low, high, output))
    return rows


def itu_decode_table() -> dict[int, int]:
    """code -> PCM16 value (14-bit output times four)."""
    table = {}
    for index, (_, _, output) in enumerate(itu_intervals()):
        table[0xFF - index] = 4 * output  # positive: sign bit set before inversion
        table[0x7F - index] = -4 * output
    return table


def test_the_reference_table_itself_is_the_standard_one() -> None:
    """Spot values of Table 2a: the top output is 8031, segment 7 starts at 4063, the
    segments tile 0..8159 with no gap."""
    rows = itu_intervals()
    assert rows[-1] == (8159 - 256, 8159, 8031)
    assert rows[0] == (0, 1, 0)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(rows))
    assert len(itu_decode_table()) == 256


def test_all_256_codes_decode_to_the_itu_values() -> None:
    """Every code decodes exactly to the table's output (times four)."""
    expected = itu_decode_table()
    decoded = np.frombuffer(ulaw_decode(bytes(range(256))), dtype="<i2")
    for code in range(256):
        assert int(decoded[code]) == expected[code], f"code 0x{code:02X}"
    assert int(decoded[0x80]) == 32124
    assert int(decoded[0x00]) == -32124
    assert int(decoded[0xFF]) == 0
    assert int(decoded[0x7F]) == 0


def expected_code(sample: int) -> int:
    """The ITU code of a PCM16 sample: the interval holding |sample| / 4."""
    magnitude = min(abs(sample), 32767) / 4
    rows = itu_intervals()
    index = next((i for i, (_, high, _) in enumerate(rows) if magnitude < high), 127)
    return (0x7F if sample < 0 else 0xFF) - index


def test_every_pcm16_value_encodes_into_its_itu_interval() -> None:
    """All 65536 inputs: the code is the one whose decision interval holds the sample."""
    samples = np.arange(-32768, 32768, dtype=np.int32)
    codes = np.frombuffer(ulaw_encode(samples.astype("<i2").tobytes()), dtype=np.uint8)
    # The expected code, vectorized over the interval edges (4 x 14-bit decision values).
    highs = np.array([4 * high for _, high, _ in itu_intervals()])
    magnitude = np.minimum(np.abs(samples), 32767)
    index = np.minimum(np.searchsorted(highs, magnitude, side="right"), 127)
    expected = np.where(samples < 0, 0x7F, 0xFF) - index
    mismatched = np.nonzero(codes != expected)[0]
    assert mismatched.size == 0, [int(samples[i]) for i in mismatched[:10]]


@pytest.mark.parametrize(
    ("sample", "code"),
    [
        (0, 0xFF),
        (3, 0xFF),
        (4, 0xFE),  # 14-bit decision value 1
        (123, 0xF0),
        (124, 0xEF),  # 14-bit 31: segment 1 starts
        (379, 0xE0),
        (380, 0xDF),  # 95: segment 2
        (16251, 0x90),
        (16252, 0x8F),  # 4063: segment 7
        (32767, 0x80),
        (-1, 0x7F),
        (-4, 0x7E),
        (-16252, 0x0F),
        (-32768, 0x00),
    ],
)
def test_segment_boundaries(sample: int, code: int) -> None:
    """The encoder switches code exactly at the standard's decision values (times four)."""
    assert ulaw_encode(np.array([sample], dtype="<i2").tobytes()) == bytes([code])
    assert expected_code(sample) == code


def test_decode_then_encode_gives_the_code_back() -> None:
    """Every code survives a decode/encode round trip (-0 becomes +0)."""
    codes = bytes(range(256))
    again = ulaw_encode(ulaw_decode(codes))
    assert again == bytes(0xFF if c == 0x7F else c for c in codes)


def test_odd_pcm16_is_refused() -> None:
    """Half a sample is an error, not a silent truncation."""
    with pytest.raises(ValueError, match="even number of bytes"):
        ulaw_encode(b"\x00\x01\x02")
