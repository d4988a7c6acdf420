#!/usr/bin/env python
"""Write tests/data/dated_notes_dev.json and dated_notes_heldout.json: a year of one
person's short notes each, dated in many ways, with questions that only a date tells
apart, in LoCoMo's format (one session a day, one turn a note) so `manage.py evaluate
--as-notes` and scripts/eval_recall_arms.py read them.

    .venv/bin/python scripts/make_dated_notes.py

Several of the same kind of thing happen in a year (dinners, runs, visits to the
dentist), each dated in the note in its own way: said the same day with no date, or
later as "yesterday", "last night", "last Friday", "on 3/4", "on 2025-03-04", "two weeks
ago", "last week", "last month"; and notes of plans ("next month", "next Tuesday").
Questions ask by a date written in another way than the note's ("Who did I have dinner
with on 1 February?" of a note "... last night" written on 2 February), by a date
relative to when they are asked (each question carries an `asked_at`, not a LoCoMo
field), or when something happened ("When did I ...?", "In which month ...?"). Around
them, everyday notes with no date in their words.

The held-out person (dated_notes_heldout.json) has other kinds of events, other
people and places and other question wording; it is not read while choosing anything.
Deterministic: the same files every run.
"""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "data"
WEEKDAY = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def month_day(day: date) -> str:
    return f"{day:%B} {day.day}"


def day_month(day: date) -> str:
    return f"{day.day} {day:%B}"


# How a note dates its event: (name, days from the event to the note, the phrase).
def styles(event: date):
    return {
        "same_day": (0, ""),
        "yesterday": (1, "yesterday"),
        "last_night": (1, "last night"),
        "last_weekday": (3 + (event.weekday() == 6), f"last {WEEKDAY[event.weekday()]}"),
        "slash": (5, f"on {event.month}/{event.day}"),
        "iso": (4, f"on {event.isoformat()}"),
        "two_weeks_ago": (14, "two weeks ago"),
        "last_week": (7, "last week"),
    }


def note_day(event: date, style: str) -> tuple[date, str]:
    offset, phrase = styles(event)[style]
    said = event + timedelta(days=offset)
    if style == "last_weekday":
        # "last Friday" said within the next week (never the same weekday).
        said = event + timedelta(days=2 if event.weekday() < 5 else 3)
    if style == "last_week":
        # Said in the week after the event's week.
        said = event - timedelta(days=event.weekday()) + timedelta(days=9)
    return said, phrase


def question_date(day: date, how: str) -> str:
    return {
        "month_day": month_day(day),
        "day_month": day_month(day),
        "iso": day.isoformat(),
        "slash": f"{day.month}/{day.day}/{day.year}",
        "month_day_year": f"{month_day(day)}, {day.year}",
    }[how]


def build(person: dict, seed: int) -> dict:
    rng = random.Random(seed)
    notes: dict[date, list[str]] = {}
    qa = []
    ids: dict[tuple[date, int], str] = {}

    def add(day: date, text: str) -> tuple[date, int]:
        notes.setdefault(day, []).append(text)
        return day, len(notes[day]) - 1

    events = []
    for kind in person["kinds"]:
        for i, (event, detail, style) in enumerate(kind["events"]):
            said, phrase = note_day(event, style)
            text = kind["note"](detail, phrase)
            key = add(said, text)
            events.append((kind, i, event, detail, style, key))
    # Plans: "next month", "next Tuesday", told ahead.
    for event, text, told_days_before, phrase in person["plans"]:
        key = add(event - timedelta(days=told_days_before), text.format(when=phrase))
        events.append(({"name": "plan"}, 0, event, phrase, "plan", key))
    # Everyday notes with no date in their words, on most days of the year.
    day = person["start"]
    while day <= person["end"]:
        if rng.random() < 0.55:
            add(day, rng.choice(person["filler"]))
        day += timedelta(days=1)

    sessions = sorted(notes)
    conversation = {"speaker_a": person["name"], "speaker_b": person["name"]}
    for n, day in enumerate(sessions, 1):
        conversation[f"session_{n}_date_time"] = f"9:00 am on {day.day} {day:%B}, {day.year}"
        conversation[f"session_{n}"] = [
            {"speaker": person["name"], "dia_id": f"D{n}:{j + 1}", "text": text} for j, text in enumerate(notes[day])
        ]
        for j in range(len(notes[day])):
            ids[(day, j)] = f"D{n}:{j + 1}"

    for kind, i, event, detail, style, key in events:
        for make in person["questions"].get(kind["name"], []):
            item = make(event, detail, style, i)
            if item:
                question, asked_at, category = item
                qa.append(
                    {
                        "question": question,
                        "answer": event.isoformat(),
                        "evidence": [ids[key]],
                        "category": category,
                        "asked_at": (asked_at or person["asked"]).isoformat(),
                    }
                )
    return {"sample_id": person["id"], "conversation": conversation, "qa": qa}


D = date

PRIYA = {
    "id": "notes-priya",
    "name": "Priya",
    "start": D(2025, 1, 1),
    "end": D(2025, 11, 30),
    "asked": D(2025, 12, 1),
    "kinds": [
        {
            "name": "dinner",
            "note": lambda who, when: f"Had dinner with {who} {when} at the Thai place, lovely evening.".replace("  ", " "),
            "events": [
                (D(2025, 2, 1), "Mum", "last_night"),
                (D(2025, 2, 4), "Leo", "same_day"),
                (D(2025, 3, 14), "Ana", "slash"),
                (D(2025, 3, 19), "my brother", "yesterday"),
                (D(2025, 5, 9), "Farah", "last_weekday"),
                (D(2025, 5, 12), "the team", "same_day"),
                (D(2025, 8, 22), "Jonas", "iso"),
                (D(2025, 8, 26), "Mum", "same_day"),
            ],
        },
        {
            "name": "run",
            "note": lambda where, when: f"Ran {where} {when}, legs felt heavy near the end.".replace("  ", " "),
            "events": [
                (D(2025, 3, 4), "the harbour 10k", "slash"),
                (D(2025, 3, 8), "along the canal", "same_day"),
                (D(2025, 4, 19), "the hill loop", "two_weeks_ago"),
                (D(2025, 4, 27), "around the lake", "yesterday"),
                (D(2025, 6, 15), "the park half marathon", "last_week"),
                (D(2025, 6, 18), "to the bridge and back", "same_day"),
            ],
        },
        {
            "name": "dentist",
            "note": lambda what, when: f"Dentist {when}: {what}.".replace("  ", " ").replace("Dentist :", "Dentist:"),
            "events": [
                (D(2025, 1, 13), "no cavities, just a clean", "same_day"),
                (D(2025, 2, 20), "a small filling on the left molar", "iso"),
                (D(2025, 7, 7), "the filling was checked and is fine", "last_weekday"),
                (D(2025, 10, 2), "they recommended a night guard", "yesterday"),
            ],
        },
        {
            "name": "climb",
            "note": lambda who, when: f"Climbing with {who} {when}, finally sent the orange route.".replace("  ", " "),
            "events": [
                (D(2025, 1, 10), "Leo", "yesterday"),
                (D(2025, 1, 17), "Ana", "same_day"),
                (D(2025, 9, 6), "Farah", "two_weeks_ago"),
                (D(2025, 9, 13), "Leo", "last_weekday"),
            ],
        },
    ],
    "plans": [
        (D(2025, 4, 10), "Booked the flights to Lisbon for {when}.", 30, "next month"),
        (D(2025, 6, 3), "Haircut booked for {when}.", 5, "next Tuesday"),
    ],
    "filler": [
        "Worked from home, mostly emails.",
        "Cooked lentil soup and froze half of it.",
        "Walked to the park at lunch.",
        "Long meeting about the quarterly plan.",
        "Watered the plants and cleaned the balcony.",
        "Read a few chapters before bed.",
        "Bought groceries for the week.",
        "Tired today, early night.",
        "Fixed the squeaky door hinge.",
        "Called the bank about the card.",
        "Tried a new pasta recipe, too salty.",
        "Rain all day, stayed in.",
        "Sorted out the receipts for taxes.",
        "Video call with the design team.",
        "Did laundry and ironed shirts.",
    ],
    "questions": {
        "dinner": [
            lambda e, who, s, i: (
                f"Who did I have dinner with on {question_date(e, ['month_day', 'day_month'][i % 2])}?",
                None,
                2,
            ),
            lambda e, who, s, i: (f"When did I have dinner with {who}?", None, 2) if who not in ("Mum", "Leo") else None,
        ],
        "run": [
            lambda e, where, s, i: (f"Where did I run on {question_date(e, ['iso', 'month_day'][i % 2])}?", None, 2),
        ],
        "dentist": [
            lambda e, what, s, i: (f"What did the dentist say on {question_date(e, 'month_day_year')}?", None, 2),
            lambda e, what, s, i: ("What did the dentist say two weeks ago?", e + timedelta(days=14), 2) if i == 2 else None,
        ],
        "climb": [
            lambda e, who, s, i: (f"Who did I go climbing with last {WEEKDAY[e.weekday()]}?", e + timedelta(days=3), 2),
        ],
        "plan": [
            # A plan "for next month" tells of the month, not of a day in it.
            lambda e, text, s, i: (
                f"What was I doing in {e:%B}?" if "month" in text else f"What was I doing on {question_date(e, 'day_month')}?",
                None,
                2,
            ),
        ],
    },
}

TOMAS = {
    "id": "notes-tomas",
    "name": "Tomas",
    "start": D(2024, 2, 1),
    "end": D(2024, 12, 20),
    "asked": D(2024, 12, 22),
    "kinds": [
        {
            "name": "lunch",
            "note": lambda who, when: f"Lunch with {who} {when} by the river, we talked for hours.".replace("  ", " "),
            "events": [
                (D(2024, 3, 6), "Greta", "yesterday"),
                (D(2024, 3, 9), "Omar", "same_day"),
                (D(2024, 5, 21), "my aunt", "iso"),
                (D(2024, 5, 24), "Greta", "last_night"),
                (D(2024, 9, 3), "Ines", "slash"),
                (D(2024, 9, 10), "Omar", "last_weekday"),
            ],
        },
        {
            "name": "swim",
            "note": lambda where, when: f"Swam {where} {when}, the water was cold.".replace("  ", " "),
            "events": [
                (D(2024, 6, 2), "in the lake at Tegel", "last_week"),
                (D(2024, 6, 6), "at the city pool", "same_day"),
                (D(2024, 7, 20), "in the sea at Warnemunde", "two_weeks_ago"),
                (D(2024, 7, 27), "in the quarry pond", "yesterday"),
            ],
        },
        {
            "name": "doctor",
            "note": lambda what, when: f"Saw the doctor {when}, {what}.".replace("  ", " "),
            "events": [
                (D(2024, 2, 15), "blood pressure is normal", "same_day"),
                (D(2024, 4, 11), "she sent me for an x-ray of the knee", "slash"),
                (D(2024, 10, 8), "the knee is healing", "iso"),
                (D(2024, 10, 17), "flu jab done", "last_weekday"),
            ],
        },
        {
            "name": "concert",
            "note": lambda band, when: f"Went to see {band} {when}, the crowd was wild.".replace("  ", " "),
            "events": [
                (D(2024, 4, 26), "the jazz trio at the Kesselhaus", "last_night"),
                (D(2024, 8, 16), "the folk band at the open air stage", "two_weeks_ago"),
                (D(2024, 11, 29), "the orchestra play Mahler", "last_weekday"),
            ],
        },
    ],
    "plans": [
        (D(2024, 8, 5), "Train tickets to Vienna bought for {when}.", 28, "next month"),
        (D(2024, 11, 14), "Dentist moved to {when}.", 6, "next Thursday"),
    ],
    "filler": [
        "Spent the morning on the grant report.",
        "Baked bread, the crust came out well.",
        "Cycled to the office.",
        "Answered a pile of messages.",
        "Cleaned out the cellar.",
        "Evening of chess online.",
        "Picked up a parcel from the post office.",
        "Repaired the bike's back light.",
        "Painted the hallway.",
        "Slow day, a short walk.",
        "Ordered a new desk lamp.",
        "Made a big pot of chili.",
    ],
    "questions": {
        "lunch": [
            lambda e, who, s, i: (f"With whom did I eat lunch on {question_date(e, ['day_month', 'slash'][i % 2])}?", None, 2),
        ],
        "swim": [
            lambda e, where, s, i: (f"Where did I go swimming on {question_date(e, 'month_day')}?", None, 2),
            lambda e, where, s, i: (f"In which month did I swim {where}?", None, 2) if i in (0, 2) else None,
        ],
        "doctor": [
            lambda e, what, s, i: (f"What did the doctor tell me on {question_date(e, 'iso')}?", None, 2),
        ],
        "concert": [
            lambda e, band, s, i: ("Which concert did I go to two weeks ago?", e + timedelta(days=14), 2),
        ],
        "plan": [
            lambda e, text, s, i: (
                f"What did I have planned for {e:%B %Y}?"
                if "month" in text
                else f"What did I have planned for {question_date(e, 'month_day_year')}?",
                None,
                2,
            ),
        ],
    },
}


def main() -> None:
    for person, name, seed in ((PRIYA, "dated_notes_dev.json", 1), (TOMAS, "dated_notes_heldout.json", 2)):
        sample = build(person, seed)
        (OUT / name).write_text(json.dumps([sample], indent=1) + "\n", encoding="utf-8")
        turns = sum(len(v) for k, v in sample["conversation"].items() if k.startswith("session_") and isinstance(v, list))
        print(f"{name}: {turns} notes, {len(sample['qa'])} questions")


if __name__ == "__main__":
    main()
