// The record oracle: tsshogi (the record library of the ShogiHome GUI, from npm, installed
// by scripts/bootstrap.sh into .venv/node) writes and reads KIF, KI2 and CSA, sharing no
// code with crates/rules. The record tests send it one JSON object on stdin:
//
//   {"write": [{"usi": "position ... moves ...", "special": "resign" | null,
//               "format": "ki2" | "kif" | "csa"}, ...],
//    "read":  [{"format": "ki2" | "kif" | "csa", "text": "..."}, ...]}
//
// and get back {"written": [text, ...], "read": [{"usi": ..., "special": ...} |
// {"error": ...}, ...]}: each record written by tsshogi, and each text as tsshogi reads
// it (its main line as a USI position line, and the special move that ends it).
"use strict";
const path = require("path");
const tsshogi = require(path.join(__dirname, "../../.venv/node/node_modules/tsshogi"));

const writers = { ki2: tsshogi.exportKI2, kif: tsshogi.exportKIF, csa: tsshogi.exportCSA };
const readers = { ki2: tsshogi.importKI2, kif: tsshogi.importKIF, csa: tsshogi.importCSA };

function write({ usi, special, format }) {
  const record = tsshogi.Record.newByUSI(usi);
  if (record instanceof Error) throw new Error(`${usi}: ${record.message}`);
  if (special && !record.append(special)) throw new Error(`cannot end with ${special}`);
  return writers[format](record, {});
}

function read({ format, text }) {
  const record = readers[format](text);
  if (record instanceof Error) return { error: record.message };
  record.goto(record.moves.length);
  const last = record.moves[record.moves.length - 1];
  const move = last && last.move;
  const special = move && move.type !== undefined && typeof move.type === "string" ? move.type : null;
  return { usi: record.usi, special };
}

let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const request = JSON.parse(input);
  const reply = {
    written: (request.write || []).map(write),
    read: (request.read || []).map(read),
  };
  process.stdout.write(JSON.stringify(reply));
});
