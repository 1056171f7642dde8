"""Reads a directory of record files people have (KIF, KIFU, KI2, KI2U, CSA, in any
encoding) with `shogi-zero import`, and compares every game it keeps, start position and
moves, with two independent readers: tsshogi (scripts/oracle/tsshogi_records.cjs, every
format) and cshogi (KIF and CSA). Prints the counts as JSON, and each disagreement.

  .venv/bin/python scripts/oracle/records_crosscheck.py DIR [--binary target/release/shogi-zero]

Not part of the test suite: the directory is the user's (the figures in the records issue
came from the record files of ShogiHome's, tsshogi's and python-shogi's repositories).
"""

import argparse
import codecs
import json
import re
import pathlib
import shutil
import subprocess
import tempfile

import cshogi
import cshogi.CSA
import cshogi.KIF

ROOT = pathlib.Path(__file__).resolve().parents[2]
FORMATS = {".kif": "kif", ".kifu": "kif", ".ki2": "ki2", ".ki2u": "ki2", ".csa": "csa"}
EVEN = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"


def ours(binary, path, work):
    """(the first game shogi-zero keeps from `path` as a USI position line, or None; why
    the import left it out, as its summary line says)."""
    out, games = work / "chunks", work / "games"
    for d in (out, games):
        shutil.rmtree(d, ignore_errors=True)
    run = subprocess.run([binary, "import", str(path), "--out", str(out), "--endings", "all",
                          "--keep-duplicates", "--min-moves", "0"], capture_output=True,
                         text=True, check=False)
    report = run.stdout + run.stderr
    why = re.search(r"left out: (.*?) \d+(,| in )", report)
    if "could be read" in report or "unreadable" in report:
        why_text = "unreadable"
    else:
        why_text = why.group(1) if why else "no game"
    if not any(out.glob("*.szgr")):
        return None, why_text
    subprocess.run([binary, "export", str(out), "--out", str(games)], capture_output=True,
                   check=True)
    lines = sorted(games.glob("*.usi"))
    return (lines[0].read_text().strip() if lines else None), None


def decode(data: bytes) -> str:
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode()
    for encoding in ("utf-8", "cp932", "euc_jp"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", errors="replace")


def start_and_moves(usi: str):
    """(board, side and hands of the start; the moves) of a USI position line."""
    body = usi.removeprefix("position ").strip()
    head, _, moves = body.partition(" moves ")
    start = EVEN if head.startswith("startpos") else head.removeprefix("sfen ")
    return " ".join(start.split()[:3]), moves.split()


def cshogi_game(path: pathlib.Path, fmt: str):
    if fmt == "kif":
        k = cshogi.KIF.Parser.parse_file(str(path))
        sfen, moves = k.sfen, k.moves
    else:
        c = cshogi.CSA.Parser.parse_file(str(path))[0]
        sfen, moves = c.sfen, c.moves
    return " ".join(sfen.split()[:3]), [cshogi.move_to_usi(m) for m in moves]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=pathlib.Path)
    parser.add_argument("--binary", default=str(ROOT / "target/release/shogi-zero"))
    args = parser.parse_args()
    files = sorted(p for p in args.dir.rglob("*") if p.is_file() and p.suffix.lower() in FORMATS)
    work = pathlib.Path(tempfile.mkdtemp(prefix="records-crosscheck-"))
    mine = {f: ours(args.binary, f, work) for f in files}
    request = {"read": [{"format": FORMATS[f.suffix.lower()], "text": decode(f.read_bytes())}
                        for f in files]}
    reply = json.loads(subprocess.run(
        ["node", str(ROOT / "scripts/oracle/tsshogi_records.cjs")],
        input=json.dumps(request), capture_output=True, text=True, check=True).stdout)
    counts = {"files": len(files), "kept": 0, "tsshogi agrees": 0, "cshogi read": 0,
              "cshogi agrees": 0, "left out": {}}
    differ = []
    for f, theirs in zip(files, reply["read"]):
        usi, why = mine[f]
        if usi is None:
            counts["left out"][why] = counts["left out"].get(why, 0) + 1
            if why == "malformed":
                differ.append(f"malformed for us: {f.relative_to(args.dir)} (tsshogi: "
                              f"{'reads ' + str(len(start_and_moves(theirs['usi'])[1])) + ' moves' if 'usi' in theirs else theirs})")
            continue
        mine[f] = usi
        counts["kept"] += 1
        game = start_and_moves(mine[f])
        if "usi" in theirs and start_and_moves(theirs["usi"]) == game:
            counts["tsshogi agrees"] += 1
        else:
            differ.append(f"tsshogi: {f.relative_to(args.dir)}: {theirs}")
        fmt = FORMATS[f.suffix.lower()]
        if fmt in ("kif", "csa"):
            try:
                other = cshogi_game(f, fmt)
            except Exception as e:  # noqa: BLE001 - cshogi raises several kinds
                differ.append(f"cshogi cannot read {f.name}: {e}")
                continue
            counts["cshogi read"] += 1
            if other == game:
                counts["cshogi agrees"] += 1
            else:
                differ.append(f"cshogi: {f.name}: start {other[0]} ({len(other[1])} moves), "
                              f"ours {game[0]} ({len(game[1])} moves)")
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(counts, ensure_ascii=False))
    for line in differ:
        print(line)


if __name__ == "__main__":
    main()
