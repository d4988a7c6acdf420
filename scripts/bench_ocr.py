#!/usr/bin/env python
"""Character error rate and speed of the offline OCR readers on rendered text.

    .venv/bin/python scripts/bench_ocr.py [--reader rapidocr|tesseract]

Renders sentences (Pillow's built-in font, two sizes, some with accents) to PNGs, reads
them back through memories.extract.ocr, and prints model load time, time per image and the
character error rate (edit distance / reference length, spaces collapsed). Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SENTENCES = [
    "Budget meeting moved to Thursday",
    "Priya owns the billing migration",
    "Invoice 4411: total due 300 EUR",
    "Next check-in is February 3",
    "Call Luis about the vendor sandbox",
    "Platform 9 departs 10:45",
    "Hire two backend engineers by May",
    "Cloud spend capped at $18k a month",
    "José Müller visits Kraków on Monday",
    "Zoë Ångström joins the Oslo team",
]


def distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reader", default="rapidocr")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    os.environ["MEMORY_OCR"] = args.reader
    import django

    django.setup()
    from PIL import Image, ImageDraw, ImageFont

    from memories.extract import ocr

    if ocr.available_reader() != args.reader:
        print(f"{args.reader} is not installed")
        return
    began = time.perf_counter()
    ocr.read_text(Image.new("RGB", (64, 32), "white"))
    print(f"reader: {ocr.reader_label(args.reader)}; first call (model load): {time.perf_counter() - began:.1f} s")
    errors = chars = 0
    times = []
    for size in (40, 24):
        font = ImageFont.load_default(size=size)
        for sentence in SENTENCES:
            im = Image.new("RGB", (int(size * 0.62 * len(sentence)) + 60, size * 3), "white")
            ImageDraw.Draw(im).text((30, size), sentence, fill="black", font=font)
            t = time.perf_counter()
            result = ocr.read_text(im)
            times.append(time.perf_counter() - t)
            got = " ".join((result.text or "").split()) if result else ""
            errors += distance(got, sentence)
            chars += len(sentence)
            if got != sentence:
                print(f"  {size}px: {sentence!r} -> {got!r}")
    times.sort()
    print(
        f"{len(times)} images; median {times[len(times) // 2]:.2f} s, max {times[-1]:.2f} s an image; "
        f"character error rate {errors / chars:.1%}"
    )


if __name__ == "__main__":
    main()
