//! `shogi-zero view RECORD`: one game as a self-contained HTML page (the board as SVG,
//! hands, the last move highlighted, buttons and arrow keys to step, the result; for
//! self-play records each move's root value and most visited moves). Any game the
//! project writes: self-play chunks (`*.szgr`) and match or gate games (a games
//! directory or its `summary.json`), of shogi, minishogi and tai shogi; and any single
//! record file the import reads (`.csa`, `.kif`, `.ki2`, `.usi`, `.hcpe`, `.hcpe3`, and a tai
//! game's `.txt`). For tai shogi no GUI exists: this page is how a person sees what the
//! network plays.
//!
//! The page draws from SFENs, which every game of the project writes in one grammar
//! (ranks split by `/`, runs of empty squares as numbers, `+` for promoted, a piece as
//! one letter or a bracketed abbreviation, upper case Black), so no game needs a drawing
//! adapter: the rules replay every move and hand over the SFEN after it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::Serialize;
use shogi_arena::MatchSummary;
use shogi_game::{Color, Game, GameKind, Outcome};
use shogi_records::import::{RecordFormat, game_record};
use shogi_records::record::{GameRecord, MoveRecord, read_chunk};
use shogi_registry::RecordGame;
use shogi_registry::with_game_type;

const TEMPLATE: &str = include_str!("view.html");

#[derive(Debug, Args)]
pub struct ViewArgs {
    /// A self-play chunk (`*.szgr`), a match or gate games directory (with
    /// `summary.json`), a `summary.json`, or one record file (`.csa`, `.kif`, `.ki2`, `.usi`,
    /// `.hcpe`, `.hcpe3`, a tai game's `.txt`).
    record: PathBuf,
    /// Which game of the file, from 1 (a games directory's `game-0003.*` is game 3).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    game: u64,
    /// The page to write (default: beside the record, `NAME-gameN.html`).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// One game to draw: its record (moves as codes; search figures where it has them) and
/// how it ended, in words.
struct Source {
    record: GameRecord,
    /// Self-play records carry each move's search; match records do not.
    searched: bool,
    result: String,
    meta: String,
    of: usize,
}

pub fn run(args: &ViewArgs) -> Result<()> {
    let index = args.game as usize - 1;
    let ext = args
        .record
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let source = match ext.as_deref() {
        Some("szgr") => from_chunk(&args.record, index)?,
        Some("txt") => from_tai_text(&args.record)?,
        _ if RecordFormat::of_path(&args.record).is_some() => {
            from_record_file(&args.record, index)?
        }
        _ => from_summary(&args.record, index)?,
    };
    let page = page(
        &source,
        &format!(
            "{}, game {} of {}",
            args.record.display(),
            args.game,
            source.of
        ),
    )?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&args.record, args.game));
    shogi_rundir::write_atomic(&out, page.as_bytes())
        .with_context(|| format!("writing {}", out.display()))?;
    println!("{}", out.display());
    Ok(())
}

fn default_out(record: &Path, game: u64) -> PathBuf {
    let stem = if record.is_dir() {
        record.file_name()
    } else {
        record.file_stem()
    }
    .map(|s| s.to_string_lossy().into_owned())
    .unwrap_or_else(|| "game".into());
    let dir = record.parent().unwrap_or(Path::new("."));
    dir.join(format!("{stem}-game{game}.html"))
}

fn from_chunk(path: &Path, index: usize) -> Result<Source> {
    let games = read_chunk(path).with_context(|| format!("reading {}", path.display()))?;
    let of = games.len();
    let Some(record) = games.into_iter().nth(index) else {
        bail!(
            "{} holds {of} games; there is no game {}",
            path.display(),
            index + 1
        );
    };
    let result = outcome_text(&record.outcome, record.moves.len());
    let meta = format!(
        "{} self-play game, {} plies{}",
        record.variant,
        record.moves.len(),
        if record.resignation_disabled {
            " (resignation disabled)"
        } else {
            ""
        }
    );
    Ok(Source {
        record,
        searched: true,
        result,
        meta,
        of,
    })
}

fn from_summary(path: &Path, index: usize) -> Result<Source> {
    let file = if path.is_dir() {
        path.join("summary.json")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file).with_context(|| {
        format!(
            "reading {} (view takes a *.szgr chunk, a match or gate games directory or its summary.json, or a record file: {}, a tai game's .txt)",
            file.display(),
            RecordFormat::EXTENSIONS
        )
    })?;
    let summary: MatchSummary = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a match summary", file.display()))?;
    let of = summary.games.len();
    let Some(game) = summary.games.get(index) else {
        bail!(
            "{} holds {of} games; there is no game {}",
            file.display(),
            index + 1
        );
    };
    let kind: GameKind = summary
        .variant
        .parse()
        .map_err(|e| anyhow::anyhow!("{}: variant {:?}: {e}", file.display(), summary.variant))?;
    // Match records hold moves as text: turn them into codes on a replay.
    let moves = game.moves.iter().map(String::as_str);
    let record = with_game_type!(kind, G => G::record_from_texts(kind, &game.start_sfen, moves))
        .map_err(|e| anyhow::anyhow!("{}: game {}: {e}", file.display(), index + 1))?;
    let (black, white) = if game.a_black {
        (&summary.a, &summary.b)
    } else {
        (&summary.b, &summary.a)
    };
    let result = match (game.winner.as_str(), &game.forfeit) {
        (_, Some(why)) => format!(
            "{} ({} after {} plies): {why}",
            winner_text(&game.winner),
            game.reason,
            game.plies
        ),
        _ => format!(
            "{} by {} after {} plies",
            winner_text(&game.winner),
            game.reason,
            game.plies
        ),
    };
    Ok(Source {
        record,
        searched: false,
        result,
        meta: format!("{kind}: Black {black} vs White {white}"),
        of,
    })
}

/// The variant a match's files were played in, from the `summary.json` beside them
/// (a USI line does not say); `None` where there is none.
fn sibling_variant(path: &Path) -> Option<GameKind> {
    let summary = path.parent()?.join("summary.json");
    let text = std::fs::read_to_string(summary).ok()?;
    let summary: MatchSummary = serde_json::from_str(&text).ok()?;
    summary.variant.parse().ok()
}

/// A tsume problem of a record file (one king, no moves): a position to solve.
fn problem_source(format: RecordFormat, sfen: String, of: usize) -> Source {
    let record = GameRecord {
        variant: GameKind::Shogi.name().to_string(),
        start_sfen: sfen,
        max_plies: 0,
        impasse: 0,
        outcome: Outcome::draw(shogi_game::EndReason::MaxPlies),
        resignation_disabled: false,
        moves: Vec::new(),
    };
    Source {
        meta: format!("shogi {} tsume problem (one king)", format.name()),
        record,
        searched: false,
        result: "a position to solve, not a game".into(),
        of,
    }
}

/// One game of a record file the import reads (CSA, KIF, KI2, USI, hcpe, hcpe3).
fn from_record_file(path: &Path, index: usize) -> Result<Source> {
    use shogi_records::import::{ReadRecord, read_records};
    use shogi_rules::Variant;
    use shogi_rules::kifu::Record;
    let format = RecordFormat::of_path(path).context("not a record file")?;
    let name = path.display();
    // A USI line does not name its variant: the match's summary beside it does; without
    // one, a SFEN that is not a 9x9 board is minishogi's.
    let usi_variants = match sibling_variant(path) {
        Some(GameKind::Minishogi) => vec![Variant::Minishogi],
        Some(GameKind::Tai) => bail!("{name}: tai shogi games are read from their .txt file"),
        _ => vec![Variant::Shogi, Variant::Minishogi],
    };
    let mut records = read_records(path, format, &usi_variants, Default::default())
        .with_context(|| format!("reading {name}"))?;
    let unit = format.unit();
    // Text files are parsed whole, so their count is known; a binary file streams and is
    // not read to its end for a count.
    let count = records.size_hint().1;
    let Some(read) = records.nth(index) else {
        match count {
            Some(n) => bail!("{name} holds {n} {unit}s; there is no {unit} {}", index + 1),
            None => bail!("{name} has no {unit} {}", index + 1),
        }
    };
    let read = read.map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    // A binary file's count: hcpe entries are 38 bytes each; hcpe3 games are counted by
    // reading the rest of the file (streamed).
    let of = match (count, format) {
        (Some(n), _) => n,
        (None, RecordFormat::Hcpe) => {
            let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            (size / shogi_records::hcpe::HCPE_SIZE as u64) as usize
        }
        (None, _) => index + 1 + records.count(),
    };
    let (record, outcome) = match read {
        ReadRecord::Game { record, .. } => {
            let outcome = record.outcome();
            (record, outcome)
        }
        ReadRecord::Problem { sfen } => return Ok(problem_source(format, sfen, of)),
        ReadRecord::Position(entry) => {
            // One position of a game: the entry keeps the game's result.
            let outcome = match entry.winner {
                Some(w) => Outcome::win(w, shogi_game::EndReason::Adjudication),
                None => Outcome::draw(shogi_game::EndReason::Adjudication),
            };
            let mut record = Record::new(entry.position, vec![entry.best_move]);
            record.end = None;
            (record, Some(outcome))
        }
    };
    let result = match outcome {
        Some(o) => outcome_text(&o, record.moves.len()),
        None => format!(
            "no result ({}) after {} plies",
            record.ending().name(),
            record.moves.len()
        ),
    };
    let players = match &record.names {
        [None, None] => String::new(),
        [b, w] => format!(
            ": Black {} vs White {}",
            b.as_deref().unwrap_or("?"),
            w.as_deref().unwrap_or("?")
        ),
    };
    let start = &record.start;
    // The page replays the moves again; the reader already checked them.
    let mut record = game_record(
        start,
        &record.moves,
        None,
        outcome.unwrap_or(Outcome::draw(shogi_game::EndReason::MaxPlies)),
    );
    // A record holds moves, not searches: the page shows no search figures.
    for m in &mut record.moves {
        *m = MoveRecord::unsearched(m.mv);
    }
    Ok(Source {
        meta: format!("{} {} {unit}{players}", record.variant, format.name()),
        record,
        searched: false,
        result,
        of,
    })
}

/// A tai shogi game's `.txt` (what matches write; its reader is the game's adapter).
fn from_tai_text(path: &Path) -> Result<Source> {
    let name = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {name}"))?;
    let (record, result) =
        shogi_registry::tai::read_text_game(&text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    Ok(Source {
        meta: format!("tai game, {} plies", record.moves.len()),
        record,
        searched: false,
        result,
        of: 1,
    })
}

fn winner_text(winner: &str) -> &'static str {
    match winner {
        "black" => "Black wins",
        "white" => "White wins",
        _ => "Draw",
    }
}

fn outcome_text(outcome: &Outcome, plies: usize) -> String {
    let who = match outcome.winner {
        Some(Color::Black) => "Black wins",
        Some(Color::White) => "White wins",
        None => "Draw",
    };
    format!("{who} by {:?} after {plies} plies", outcome.reason)
}

/// What the page's script reads (see view.html).
#[derive(Serialize)]
struct PageData {
    title: String,
    meta: String,
    result: String,
    width: usize,
    height: usize,
    has_hands: bool,
    rank_names: Vec<String>,
    first_side: &'static str,
    start_sfen: String,
    start: Vec<String>,
    start_hands: [Vec<(String, u32)>; 2],
    plies: Vec<PlyData>,
}

#[derive(Serialize)]
struct PlyData {
    side: &'static str,
    #[serde(rename = "move")]
    mv: String,
    /// The position after the move.
    sfen: String,
    changes: Vec<(usize, String)>,
    hands: [Vec<(String, u32)>; 2],
    from: Option<usize>,
    to: Option<usize>,
    check: bool,
    /// The search's expected score for the mover (self-play records).
    value: Option<f32>,
    full: bool,
    /// The most visited moves of that search, with visits.
    top: Vec<(String, u32)>,
}

fn page(source: &Source, title: &str) -> Result<String> {
    let kind = source.record.game()?;
    let data = with_game_type!(kind, G => page_data::<G>(source, title))?;
    // `</` would end the script element early; JSON allows `\/` for `/`.
    let json = serde_json::to_string(&data)?.replace("</", "<\\/");
    Ok(TEMPLATE
        .replace("__TITLE__", &html_escape(title))
        .replace("__DATA__", &json))
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn page_data<G: Game + RecordGame>(source: &Source, title: &str) -> Result<PageData> {
    let record = &source.record;
    // A position alone is drawn, not replayed: a tsume problem has one king, which the
    // rules would not set up.
    let mut game = match record.moves.is_empty() {
        true => None,
        false => Some(G::replay_start(record)?),
    };
    let start = Diagram::parse(&record.start_sfen)?;
    let first_side = match &game {
        Some(game) => side_letter(game.side_to_move()),
        None if record.start_sfen.split_whitespace().nth(1) == Some("w") => "w",
        None => "b",
    };
    let mut before = start.clone();
    let mut plies = Vec::with_capacity(record.moves.len());
    for (ply, m) in record.moves.iter().enumerate() {
        let game = game.as_mut().expect("replayed: the record has moves");
        let side = game.side_to_move();
        let Some(mv) = G::move_from_code(m.mv) else {
            bail!("move {} has an unknown code {}", ply + 1, m.mv);
        };
        let text = mv.to_string();
        game.play(mv)
            .map_err(|e| anyhow::anyhow!("move {} {text}: {e}", ply + 1))?;
        let sfen = game.record_start().start_sfen;
        let after = Diagram::parse(&sfen)?;
        let changes: Vec<(usize, String)> = (0..after.squares.len())
            .filter(|&sq| after.squares[sq] != before.squares[sq])
            .map(|sq| (sq, after.squares[sq].clone()))
            .collect();
        let mover = format!("{}:", side_letter(side));
        let to = changes
            .iter()
            .find(|(_, label)| label.starts_with(&mover))
            .map(|&(sq, _)| sq);
        let from = changes
            .iter()
            .find(|(_, label)| label.is_empty())
            .map(|&(sq, _)| sq);
        let mut top: Vec<(String, u32)> = m
            .searched
            .iter()
            .filter(|s| s.visits > 0)
            .map(|s| {
                let name = G::move_from_code(s.mv).map_or_else(|| "?".into(), |mv| mv.to_string());
                (name, s.visits)
            })
            .collect();
        top.sort_by_key(|t| std::cmp::Reverse(t.1));
        top.truncate(5);
        plies.push(PlyData {
            side: side_letter(side),
            mv: text,
            sfen,
            changes,
            hands: after.hands.clone(),
            from,
            to,
            check: game.in_check(),
            value: (source.searched && !m.searched.is_empty()).then_some(m.root_value),
            full: m.full_search,
            top,
        });
        before = after;
    }
    let rank_names = (0..start.height)
        .map(|r| {
            if start.height <= 9 {
                ["一", "二", "三", "四", "五", "六", "七", "八", "九"][r].to_string()
            } else {
                ((b'a' + r as u8) as char).to_string()
            }
        })
        .collect();
    Ok(PageData {
        title: title.to_string(),
        meta: source.meta.clone(),
        result: source.result.clone(),
        width: start.width,
        height: start.height,
        has_hands: start.has_hands,
        rank_names,
        first_side,
        start_sfen: record.start_sfen.clone(),
        start: start.squares,
        start_hands: start.hands,
        plies,
    })
}

fn side_letter(c: Color) -> &'static str {
    match c {
        Color::Black => "b",
        Color::White => "w",
    }
}

/// A position as the page draws it: one label per square, row by row from the top
/// (`""` empty, `b:TEXT` or `w:TEXT`, `+` before TEXT when promoted), and both hands.
#[derive(Clone, Debug, PartialEq)]
struct Diagram {
    width: usize,
    height: usize,
    squares: Vec<String>,
    hands: [Vec<(String, u32)>; 2],
    has_hands: bool,
}

impl Diagram {
    /// Reads the board and hand fields of an SFEN (standard, minishogi or tai shogi).
    fn parse(sfen: &str) -> Result<Diagram> {
        let fields: Vec<&str> = sfen.split_whitespace().collect();
        let (Some(board), Some(hand)) = (fields.first(), fields.get(2)) else {
            bail!("not an SFEN (board, side, hand, move number): {sfen:?}");
        };
        let mut rows: Vec<Vec<String>> = Vec::new();
        for rank in board.split('/') {
            let mut row = Vec::new();
            let mut chars = rank.chars().peekable();
            while let Some(c) = chars.next() {
                if let Some(d) = c.to_digit(10) {
                    let mut run = d as usize;
                    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                        run = run * 10 + d as usize;
                        chars.next();
                    }
                    row.extend(std::iter::repeat_n(String::new(), run));
                    continue;
                }
                let promoted = c == '+';
                let c = if promoted {
                    chars
                        .next()
                        .with_context(|| format!("a '+' ends a rank: {sfen:?}"))?
                } else {
                    c
                };
                let abbr: String = if c == '[' {
                    let inner: String = chars.by_ref().take_while(|&c| c != ']').collect();
                    inner
                } else {
                    c.to_string()
                };
                if abbr.is_empty() || !abbr.chars().any(|c| c.is_ascii_alphabetic()) {
                    bail!("unreadable piece in {sfen:?}");
                }
                let black = abbr.chars().any(|c| c.is_ascii_uppercase());
                let mut label = String::from(if black { "b:" } else { "w:" });
                if promoted {
                    label.push('+');
                }
                label.push_str(&piece_text(&abbr));
                row.push(label);
            }
            rows.push(row);
        }
        let height = rows.len();
        let width = rows.first().map_or(0, Vec::len);
        if width == 0 || rows.iter().any(|r| r.len() != width) {
            bail!("ranks of different lengths in {sfen:?}");
        }
        let has_hands = height <= 9;
        let mut hands: [Vec<(String, u32)>; 2] = [Vec::new(), Vec::new()];
        if *hand != "-" {
            let mut count = 0u32;
            for c in hand.chars() {
                if let Some(d) = c.to_digit(10) {
                    count = count * 10 + d;
                    continue;
                }
                let side = usize::from(c.is_ascii_lowercase());
                hands[side].push((piece_text(&c.to_string()), count.max(1)));
                count = 0;
            }
        }
        Ok(Diagram {
            width,
            height,
            squares: rows.into_iter().flatten().collect(),
            hands,
            has_hands,
        })
    }
}

/// A piece's letters as the page shows them: upper case (the colour is in the label's
/// prefix). The page turns shogi's one-letter pieces into kanji when asked (its 漢字
/// button; the default where the browser has a CJK font).
fn piece_text(abbr: &str) -> String {
    abbr.to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::Diagram;

    #[test]
    fn diagrams_of_each_sfen_grammar() {
        let d = Diagram::parse("rbsgk/4p/5/P4/KGSBR b 2P3s 1").unwrap();
        assert_eq!((d.width, d.height, d.has_hands), (5, 5, true));
        assert_eq!(d.squares[0], "w:R");
        assert_eq!(d.squares[9], "w:P");
        assert_eq!(d.squares[20], "b:K");
        assert_eq!(d.hands[0], vec![("P".to_string(), 2)]);
        assert_eq!(d.hands[1], vec![("S".to_string(), 3)]);
        let d = Diagram::parse("4k/5/2+p2/2+R2/K4 w - 1").unwrap();
        assert_eq!(d.squares[12], "w:+P");
        assert_eq!(d.squares[17], "b:+R");
        let tai = format!("[fl]+[dk]23/{} b - 1", vec!["25"; 24].join("/"));
        let d = Diagram::parse(&tai).unwrap();
        assert_eq!((d.width, d.height, d.has_hands), (25, 25, false));
        assert_eq!(&d.squares[..3], &["w:FL", "w:+DK", ""]);
        assert!(Diagram::parse("4k/5 b").is_err());
        assert!(Diagram::parse("4k/3 b - 1").is_err());
    }
}
