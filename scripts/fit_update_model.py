"""An experiment: can a learned pair model (statistics, not phrasings) find the fact
updates the offline rules miss? Fitted and validated leave-one-file-out; it did not gain
(CHANGELOG, round 15), so nothing it fits is shipped: the script stays to re-run it.

    MEMORY_EMBEDDINGS=local .venv/bin/python scripts/fit_update_model.py [--cache FILE] [--only-open] [--extra FILE ...]

The features (scripts/update_pair_features.py) are general evidence: closeness in meaning,
values and their kinds, whose fact, closed-class cues, shared words, time gap, language,
and the offline judges' verdicts; the model is a ridge logistic regression (numpy).

Training pairs come from every scenario file tests/data/updates*.json (each ordered pair
of memories within a scenario: an update when the scenario lists it, or a chain implies
it; plus, for each memory, the two background notes closest to it in meaning, as
non-updates) and tests/data/update_pairs.json. Each file was written by another session,
so leaving one file out estimates how the model transfers to a new writer. For each file
left out, the model is fitted on the others and its threshold chosen on the others'
out-of-fold probabilities (the lowest that adds no false update over the rules there);
the rules alone and the rules OR the model are then counted on the file left out.
Then, over every file's out-of-fold probabilities, the open region (pairs the engine does
not mark): AUC, and what the model would find at thresholds letting k false updates in
non-update scenarios through. --extra scores other scenario files (never fitted on) with
the model fitted on every repo file.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchlib import fresh_django  # noqa: E402

# Ridge strength of the logistic regression (on standardised features): strong, because
# the files are few and each fits its writer's phrasing.
L2 = 3.0


def closure(pairs: set[tuple[int, int]]) -> set[tuple[int, int]]:
    out = set(pairs)
    while True:
        more = {(a, d) for a, b in out for c, d in out if b == c} - out
        if not more:
            return out
        out |= more


def days(a: str | None, b: str | None) -> float:
    try:
        return float((date.fromisoformat(b[:10]) - date.fromisoformat(a[:10])).days)
    except (TypeError, ValueError):
        return 0.0


def build_pairs(files: list[Path]) -> list[dict]:
    from memories.llm.extractive import similarity

    rows = []
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        if "pairs" in data:
            for p in data["pairs"]:
                rows.append(
                    {
                        "file": path.name,
                        "old": p["old"],
                        "new": p["new"],
                        "gap": 0.0,
                        "label": bool(p["update"]),
                        "non_update_scenario": not p["update"],
                        "bg": False,
                    }
                )
            continue
        background = data.get("background", [])
        bg_texts = [b["text"] for b in background]
        for s in data["scenarios"]:
            mems = s["memories"]
            positive = closure({tuple(p) for p in s.get("updates", [])})
            for j in range(len(mems)):
                for i in range(j):
                    rows.append(
                        {
                            "file": path.name,
                            "old": mems[i]["text"],
                            "new": mems[j]["text"],
                            "gap": days(mems[i].get("occurred_at"), mems[j].get("occurred_at")),
                            "label": (i, j) in positive,
                            "non_update_scenario": not s.get("updates"),
                            "bg": False,
                        }
                    )
            if bg_texts:
                vectors = similarity.meaning_vectors(bg_texts + [m["text"] for m in mems])
                close = vectors[len(bg_texts) :] @ vectors[: len(bg_texts)].T
                for j, m in enumerate(mems):
                    for i in np.argsort(-close[j])[:2]:
                        rows.append(
                            {
                                "file": path.name,
                                "old": bg_texts[i],
                                "new": m["text"],
                                "gap": days(background[i].get("occurred_at"), m.get("occurred_at")),
                                "label": False,
                                "non_update_scenario": False,
                                "bg": True,
                            }
                        )
    return rows


def verdicts(old: str, new: str) -> dict[str, bool]:
    from memories.llm.extractive import changes, update_rules

    rules = bool(update_rules.judge_pair(old, new)) and not changes.said_not_as_a_change(old, new)
    return {
        "rules": rules,
        "judge": changes.judge(old, new) is not None,
        "plain": changes.plain_state(old, new) is not None,
        "swap": changes.swapped(old, new) is not None,
        "other_thing": changes.other_thing_of_slot(old, new),
        "not_a_change": changes.said_not_as_a_change(old, new),
    }


def engine_says(old: str, new: str) -> bool:
    """The offline engine's verdict as deployed (update_rules.judge on the pair)."""
    from memories.llm.base import MemoryNote
    from memories.llm.extractive import update_rules

    return bool(update_rules.judge(MemoryNote(id=2, summary=new, text=new), [MemoryNote(id=1, summary=old, text=old)]))


def featurise(rows: list[dict]) -> None:
    import update_pair_features

    for n, r in enumerate(rows):
        v = verdicts(r["old"], r["new"])
        r["features"] = update_pair_features.features(r["old"], r["new"], gap_days=r["gap"], verdicts=v)
        r["engine"] = engine_says(r["old"], r["new"])
        r["other_thing"] = v["other_thing"]
        if n % 200 == 0:
            print(f"  {n}/{len(rows)}", file=sys.stderr, flush=True)


def fit(X: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """Ridge logistic regression by Newton's method on standardised features; the classes
    weighted to equal total weight."""
    mean, scale = X.mean(0), X.std(0)
    scale[scale < 1e-9] = 1.0
    Z = np.hstack([(X - mean) / scale, np.ones((len(X), 1))])
    sw = np.where(y, 0.5 / max(y.sum(), 1), 0.5 / max((~y).sum(), 1)) * len(y)
    w = np.zeros(Z.shape[1])
    penalty = np.full(Z.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(Z @ w)))
        grad = Z.T @ (sw * (p - y)) + penalty * w
        hess = (Z * (sw * p * (1 - p))[:, None]).T @ Z + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1]), mean, scale


def predict(model, X: np.ndarray) -> np.ndarray:
    w, b, mean, scale = model
    return 1.0 / (1.0 + np.exp(-(((X - mean) / scale) @ w + b)))


def choose_threshold(p: np.ndarray, rows: list[dict]) -> float:
    """The lowest threshold at which the model, where the rules say no, adds no false
    update in a non-update scenario and at most one in a hundred of the other false pairs."""
    open_ = np.array([not r["engine"] and not r["other_thing"] for r in rows])
    y = np.array([r["label"] for r in rows])
    strict = np.array([r["non_update_scenario"] and not r["label"] for r in rows])
    negatives = max((~y).sum(), 1)
    best = 1.0
    for t in sorted(set(np.round(p[open_], 4)), reverse=True):
        hit = open_ & (p >= t)
        if (hit & strict).any() or (hit & ~y).sum() > 0.01 * negatives:
            break
        best = t
    return float(best)


def matrix(rows: list[dict], names: tuple[str, ...]) -> np.ndarray:
    return np.array([[r["features"][n] for n in names] for r in rows], dtype=np.float64)


def out_of_fold(rows: list[dict], names: tuple[str, ...], only_open: bool) -> np.ndarray:
    files = sorted({r["file"] for r in rows})
    p = np.zeros(len(rows))
    for f in files:
        train = [r for r in rows if r["file"] != f and (not only_open or (not r["engine"] and not r["other_thing"]))]
        model = fit(matrix(train, names), np.array([r["label"] for r in train]))
        idx = [i for i, r in enumerate(rows) if r["file"] == f]
        p[idx] = predict(model, matrix([rows[i] for i in idx], names))
    return p


def counts(rows: list[dict], marked: np.ndarray) -> str:
    y = np.array([r["label"] for r in rows])
    strict = np.array([r["non_update_scenario"] and not r["label"] for r in rows])
    return f"found {int((marked & y).sum())}/{int(y.sum())}, false {int((marked & ~y).sum())} (in non-update scenarios {int((marked & strict).sum())})"


def open_region(rows: list[dict]) -> np.ndarray:
    """The pairs the engine leaves open: where a model after the rules would decide."""
    return np.array([not r["engine"] and not r["other_thing"] for r in rows])


def tail(p: np.ndarray, rows: list[dict]) -> str:
    """In the open region: how well the model ranks (AUC), and what it would find if as
    many as k false updates in non-update scenarios were let through."""
    open_ = open_region(rows)
    y = np.array([r["label"] for r in rows])[open_]
    strict = np.array([r["non_update_scenario"] and not r["label"] for r in rows])[open_]
    q = p[open_]
    auc = float((q[y][:, None] > q[~y][None, :]).mean()) if y.any() and (~y).any() else float("nan")
    ranked = np.sort(q[strict])[::-1]
    out = [f"open pairs {len(q)} ({int(y.sum())} updates), AUC {auc:.3f}"]
    for k in (0, 2, 5, 10):
        if k < len(ranked):
            hit = q > ranked[k] + 1e-9
            out.append(f"k={k}: found {int((hit & y).sum())}, false {int((hit & ~y).sum())}")
    return "; ".join(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path, default=None, help="Features read from / written to this JSON file.")
    parser.add_argument("--only-open", action="store_true", help="Fit only on the pairs the rules leave open.")
    parser.add_argument("--drop", default="", help="Comma-separated features left out.")
    parser.add_argument(
        "--extra",
        type=Path,
        nargs="*",
        default=[],
        help="Scenario files scored by the model fitted on every repo file (never fitted on).",
    )
    args = parser.parse_args()
    fresh_django("fit-update-model-", LOG_LEVEL="WARNING", MEMORY_EMBEDDINGS="local")
    import update_pair_features

    files = sorted((ROOT / "tests/data").glob("updates*.json")) + [ROOT / "tests/data/update_pairs.json"]
    if args.cache and args.cache.exists():
        rows = json.loads(args.cache.read_text())
    else:
        rows = build_pairs(files)
        featurise(rows)
        if args.cache:
            args.cache.write_text(json.dumps(rows))
    names = tuple(n for n in update_pair_features.FEATURES if n not in args.drop.split(","))
    if args.only_open:
        names = tuple(n for n in names if n not in ("rules", "judge", "plain", "swap", "other_thing"))
    print(f"{len(rows)} pairs, {sum(r['label'] for r in rows)} updates; features: {', '.join(names)}")
    total_rules, total_both = np.zeros(3, int), np.zeros(3, int)
    for f in sorted({r["file"] for r in rows}):
        others = [r for r in rows if r["file"] != f]
        held = [r for r in rows if r["file"] == f]
        t = choose_threshold(out_of_fold(others, names, args.only_open), others)
        train = [r for r in others if not args.only_open or (not r["engine"] and not r["other_thing"])]
        model = fit(matrix(train, names), np.array([r["label"] for r in train]))
        p = predict(model, matrix(held, names))
        rules = np.array([r["engine"] for r in held])
        both = rules | (p >= t) & ~np.array([r["other_thing"] for r in held])
        print(f"{f:26} t={t:.3f}  rules: {counts(held, rules)}  |  rules OR model: {counts(held, both)}")
        y = np.array([r["label"] for r in held])
        strict = np.array([r["non_update_scenario"] and not r["label"] for r in held])
        for acc, marked in ((total_rules, rules), (total_both, both)):
            acc += [(marked & y).sum(), (marked & ~y).sum(), (marked & strict).sum()]
    print(
        f"{'every file left out':26}          rules: found {total_rules[0]}, false {total_rules[1]} ({total_rules[2]})"
        f"  |  rules OR model: found {total_both[0]}, false {total_both[1]} ({total_both[2]})"
    )
    print("out of fold, " + tail(out_of_fold(rows, names, args.only_open), rows))
    train = [r for r in rows if not args.only_open or (not r["engine"] and not r["other_thing"])]
    model = fit(matrix(train, names), np.array([r["label"] for r in train]))
    t = choose_threshold(out_of_fold(rows, names, args.only_open), rows)
    print(f"fitted on every file; threshold {t:.3f}; weights (standardised features):")
    for n, weight in sorted(zip(names, model[0]), key=lambda x: -abs(x[1])):
        print(f"  {n:20} {weight:+.3f}")
    for path in args.extra:
        extra = build_pairs([path])
        featurise(extra)
        p = predict(model, matrix(extra, names))
        rules = np.array([r["engine"] for r in extra])
        both = rules | (p >= t) & ~np.array([r["other_thing"] for r in extra])
        print(f"{path.name}: rules: {counts(extra, rules)}  |  rules OR model: {counts(extra, both)}")
        print(f"  {tail(p, extra)}")
        for i in np.argsort(-p):
            if open_region([extra[i]])[0] and p[i] >= 0.5:
                r = extra[i]
                print(f"  {p[i]:.3f} {'update' if r['label'] else 'NOT'}: {r['old'][:50]!r} -> {r['new'][:60]!r}")


if __name__ == "__main__":
    main()
