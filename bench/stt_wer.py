"""Benchmark: the bundled gateway's offline voice, through the real path.

espeak-ng speaks 20 short English sentences (the en-us voice, a faint seeded noise floor as
a microphone has); each is streamed in 20 ms frames of pcm16 at 24 kHz (or G.711 µ-law at
8 kHz with ``--g711``) through ``talk.session.appendAudio`` over a loopback WebSocket into an
in-process bundled gateway, which recognizes it with pocketsphinx. Reported:

* the word error rate (WER: word-level edit distance / reference words) of the final
  transcripts (``transcript.done``) and of the last live partial before them (the live pass
  alone, without the final second pass), and the sentences recognized exactly;
* with ``--realtime`` (frames paced at 20 ms): end of speech -> ``transcript.done`` latency
  (the 700 ms silence window, then the final pass); without it the audio arrives faster than
  real time and ``talk.session.close`` waits for the recognition backlog (reported too);
* ``talk.speak`` latency with espeak-ng, and the G.711 encoder's real-time factor.

Run: ``.venv/bin/python bench/stt_wer.py [--g711] [--realtime] [--seed N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from openclaw_desktop.protocol.audio import ulaw_encode  # noqa: E402
from tests.helpers.bundled_gateway import RawClient, bundled_gateway, raw_operator  # noqa: E402
from tests.helpers.speech import espeak_pcm16  # noqa: E402

SENTENCES = [
    "hello world",
    "good morning",
    "open the door",
    "what time is it",
    "turn on the lights",
    "the weather is nice today",
    "please call my mother",
    "I would like a cup of coffee",
    "send a message to john",
    "how far is the airport",
    "set an alarm for seven",
    "the quick brown fox jumps over the lazy dog",
    "remind me to buy milk tomorrow",
    "play some music",
    "stop the timer",
    "where is the nearest station",
    "thank you very much",
    "read my new email",
    "close the window please",
    "what is the capital of france",
]
#: The pause after each sentence (the session's 700 ms silence window ends the utterance).
TAIL_MS = 1200
TRANSCRIPTION = {"mode": "transcription", "transport": "gateway-relay", "brain": "none"}


def words(text: str) -> list[str]:
    """Lowercase words without punctuation."""
    return re.findall(r"[a-z0-9']+", text.lower())


def edit_distance(reference: list[str], hypothesis: list[str]) -> int:
    """Word-level Levenshtein distance (substitutions, insertions, deletions)."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, 1):
        current = [i]
        for j, hyp in enumerate(hypothesis, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp)))
        previous = current
    return previous[-1]


def wer(pairs: list[tuple[str, str]]) -> float:
    """Corpus WER: total edits over total reference words."""
    edits = sum(edit_distance(words(r), words(h)) for r, h in pairs)
    return edits / sum(len(words(r)) for r, _ in pairs)


async def transcribe_one(
    op: RawClient,
    clip: bytes,
    frame_bytes: int,
    create: dict[str, Any],
    speech_end: int,
    realtime: bool,
) -> dict[str, Any]:
    """Stream one clip and close: the final text, the last live partial, the close answer's
    latency and (paced in real time) end of speech -> ``transcript.done``. ``speech_end`` is
    the byte offset where the speech stops (the trailing pause follows)."""
    session_id = (await op.ok("talk.session.create", create))["sessionId"]

    def is_done(event: dict[str, Any]) -> bool:
        payload = event["payload"]
        return bool(payload["sessionId"] == session_id and payload["type"] == "transcript.done")

    done_at: list[float] = []
    waiter = asyncio.create_task(op.wait_event("talk.event", is_done, timeout=120))
    waiter.add_done_callback(lambda _: done_at.append(time.perf_counter()))
    pending = []
    loop = asyncio.get_running_loop()
    start = loop.time()
    spoken_until: float | None = None
    for n, offset in enumerate(range(0, len(clip), frame_bytes)):
        if realtime:
            await asyncio.sleep(max(0.0, start + n * 0.02 - loop.time()))
        if spoken_until is None and offset >= speech_end:
            spoken_until = time.perf_counter()
        frame = base64.b64encode(clip[offset : offset + frame_bytes]).decode()
        params = {"sessionId": session_id, "audioBase64": frame}
        pending.append(await op.send_request("talk.session.appendAudio", params))
        if len(pending) >= 4:
            await pending.pop(0)
    await asyncio.gather(*pending)
    started = time.perf_counter()
    await op.ok("talk.session.close", {"sessionId": session_id}, timeout=120)
    closed = time.perf_counter()
    await asyncio.sleep(0.05)
    if not waiter.done():
        waiter.cancel()
    events = [
        e["payload"]
        for e in op.events_named("talk.event")
        if e["payload"]["sessionId"] == session_id
    ]
    partials = [e["payload"]["text"] for e in events if e["type"] == "transcript.delta"]
    end_to_done = None
    if realtime and done_at and spoken_until is not None:
        end_to_done = (done_at[0] - spoken_until) * 1000
    return {
        "final": " ".join(e["payload"]["text"] for e in events if e["type"] == "transcript.done"),
        "live": partials[-1] if partials else "",
        "closeMs": (closed - started) * 1000,
        "speechEndToDoneMs": end_to_done,
    }


async def run(g711: bool, seed: int, realtime: bool) -> dict[str, Any]:
    frame_bytes = 160 if g711 else 960
    rate = 8000 if g711 else 24000
    tail = rate * TAIL_MS // 1000 * (1 if g711 else 2)
    create: dict[str, Any] = dict(TRANSCRIPTION)
    if g711:
        create["audio"] = {"inputEncoding": "g711_ulaw"}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        async with bundled_gateway(Path(tmp) / "state") as gw, raw_operator(gw.url) as op:
            for sentence in SENTENCES:
                pcm = espeak_pcm16(sentence, rate, seed=seed, tail_ms=TAIL_MS)
                clip = ulaw_encode(pcm) if g711 else pcm
                row = await transcribe_one(
                    op, clip, frame_bytes, create, len(clip) - tail, realtime
                )
                rows.append({"reference": sentence, **row})
                print(f"  {sentence!r:48} -> {row['final']!r}", flush=True)
            speak: list[float] = []
            for sentence in SENTENCES:
                started = time.perf_counter()
                params = {"text": sentence, "outputFormat": "pcm_24000"}
                await op.ok("talk.speak", params, timeout=30)
                speak.append(time.perf_counter() - started)
    minute = espeak_pcm16("the quick brown fox jumps over the lazy dog", 8000) * 20
    started = time.perf_counter()
    ulaw_encode(minute)
    encode_s = time.perf_counter() - started
    ends = [r["speechEndToDoneMs"] for r in rows if r["speechEndToDoneMs"] is not None]
    return {
        "input": "g711_ulaw 8 kHz" if g711 else "pcm16 24 kHz",
        "seed": seed,
        "sentences": len(rows),
        "werFinal": wer([(r["reference"], r["final"]) for r in rows]),
        "werLivePass": wer([(r["reference"], r["live"]) for r in rows]),
        "exact": sum(words(r["reference"]) == words(r["final"]) for r in rows),
        "closeMs": {
            "p50": statistics.median(r["closeMs"] for r in rows),
            "max": max(r["closeMs"] for r in rows),
        },
        "speechEndToDoneMs": {
            "p50": statistics.median(ends) if ends else None,
            "max": max(ends) if ends else None,
        },
        "speakMs": {"p50": statistics.median(speak) * 1000, "max": max(speak) * 1000},
        "g711EncodeRealTimeFactor": encode_s / (len(minute) / 2 / 8000),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--g711", action="store_true", help="stream G.711 µ-law at 8 kHz")
    parser.add_argument("--seed", type=int, default=0, help="noise floor seed")
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="pace the frames in real time and measure end of speech -> transcript.done",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    result = asyncio.run(run(args.g711, args.seed, args.realtime))
    print(
        f"{result['input']}: WER {result['werFinal']:.1%} final, "
        f"{result['werLivePass']:.1%} live pass only; "
        f"{result['exact']}/{result['sentences']} sentences exact"
    )
    ends = result["speechEndToDoneMs"]
    if ends["p50"] is not None:
        print(
            f"end of speech -> transcript.done p50 {ends['p50']:.0f} ms (max {ends['max']:.0f};"
            " includes the 700 ms silence window)"
        )
    print(
        f"close -> answer p50 {result['closeMs']['p50']:.0f} ms "
        f"(max {result['closeMs']['max']:.0f}); talk.speak (espeak-ng) p50 "
        f"{result['speakMs']['p50']:.0f} ms; G.711 encode RTF "
        f"{result['g711EncodeRealTimeFactor']:.5f}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
