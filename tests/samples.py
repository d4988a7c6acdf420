"""Small real files made in memory for tests: a PNG with Pillow, a WAV with the stdlib."""

import io
import wave

from PIL import Image


def png_bytes(size=(8, 6), color=(200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def wav_bytes(seconds: float = 0.5, rate: int = 8000) -> bytes:
    """Mono 16-bit PCM of a quiet ramp."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        frames = int(seconds * rate)
        out.writeframes(bytes(range(256)) * (frames * 2 // 256) + b"\x00" * (frames * 2 % 256))
    return buffer.getvalue()
