"""The offline engine's reading skills, one small module each (offline.py wires them up).

- entities.py: names, places, organisations, money, dates, emails; topics.
- similarity.py: how close two texts are -- THE seam where the embedding layer plugs in.
- answers.py: the extractive answerer (picks and quotes sentences, cites [Memory N]); its parts:
  sentences.py (the context cut into sentences), asked_about.py (whom a question names),
  asked_for.py (the kind of thing it asks for), quote_order.py (now before then),
  quoting.py (one quote's line), relative_dates.py ("yesterday" as a date).
- insights.py: grouping memories by closeness, links that say what two share, insights.
- changes/: does a newer note give another value for an older note's fact (by meaning).
- language.py: a note's language and its stopwords (py3langid, stopwords-iso).

Every regex here is linear in its input (bounded repetitions, no nested quantifiers over
the same characters): texts are user input and can be large.
"""
