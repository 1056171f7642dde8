//! The USI protocol's text: each command line parsed into a [`Command`] value, and the
//! text helpers the engine answers with. Nothing here holds engine state (as lc0 keeps
//! its uci loop apart from the engine): [`Engine`](crate::Engine) decides what each
//! command does.

use crate::game::sanitize;

use crate::time::Clock;

/// One command line, parsed. Malformed arguments are carried as the message the engine
/// answers with (`info string ...`), never a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command<'a> {
    /// A blank line.
    Empty,
    /// `usi`.
    Usi,
    /// `isready`.
    IsReady,
    /// `setoption name <id> [value <x>]`: the name and the value (`<empty>` and a missing
    /// value are the empty string), or what was wrong with the line.
    SetOption(Result<(String, String), &'static str>),
    /// `usinewgame`.
    UsiNewGame,
    /// `position (startpos | sfen ...) [moves ...]`: the part before `moves` and the
    /// moves.
    Position {
        /// `startpos` or `sfen` and its fields.
        head: Vec<&'a str>,
        /// The moves after `moves`.
        moves: Vec<&'a str>,
    },
    /// `go ...`.
    Go(GoRequest),
    /// `stop`.
    Stop,
    /// `ponderhit`.
    PonderHit,
    /// `gameover ...`.
    GameOver,
    /// `quit`.
    Quit,
    /// Anything else: the command word.
    Unknown(&'a str),
}

impl<'a> Command<'a> {
    /// Parses one line (leading and trailing white space ignored).
    pub fn parse(line: &'a str) -> Command<'a> {
        let tokens: Vec<&'a str> = line.split_whitespace().collect();
        let Some((&cmd, args)) = tokens.split_first() else {
            return Command::Empty;
        };
        match cmd {
            "usi" => Command::Usi,
            "isready" => Command::IsReady,
            "setoption" => Command::SetOption(parse_setoption(args)),
            "usinewgame" => Command::UsiNewGame,
            "position" => {
                let at = args.iter().position(|&t| t == "moves");
                let head = args[..at.unwrap_or(args.len())].to_vec();
                let moves = at.map_or(Vec::new(), |i| args[i + 1..].to_vec());
                Command::Position { head, moves }
            }
            "go" => Command::Go(GoRequest::parse(args)),
            "stop" => Command::Stop,
            "ponderhit" => Command::PonderHit,
            "gameover" => Command::GameOver,
            "quit" => Command::Quit,
            other => Command::Unknown(other),
        }
    }
}

/// `setoption` arguments: `name <id> [value <x>]` (both may contain spaces).
fn parse_setoption(args: &[&str]) -> Result<(String, String), &'static str> {
    if args.first() != Some(&"name") || args.len() < 2 {
        return Err("setoption: expected 'setoption name <id> [value <x>]'");
    }
    let at = args.iter().position(|&t| t == "value");
    let name = args[1..at.unwrap_or(args.len())].join(" ");
    let value = at.map(|i| args[i + 1..].join(" ")).unwrap_or_default();
    let value = if value == "<empty>" {
        String::new()
    } else {
        value
    };
    Ok((name, value))
}

/// A `go` command's limits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoRequest {
    /// The clock fields (ms).
    pub clock: Clock,
    /// `infinite`: search until `stop`.
    pub infinite: bool,
    /// `ponder`: search on the opponent's time until `ponderhit` or `stop`.
    pub ponder: bool,
    /// `nodes N`.
    pub nodes: Option<u64>,
    /// `mate [ms | infinite]`: a mate search instead of a move (`Some(None)`: no limit).
    pub mate: Option<Option<u64>>,
    /// What the engine should say about the line (bad values, unsupported keywords), in
    /// the order met.
    pub notes: Vec<String>,
    /// The line must not start a search (a `go mate` value that is neither milliseconds
    /// nor `infinite`): the error to answer with.
    pub refused: Option<String>,
}

impl GoRequest {
    /// Parses `go` arguments. Unknown tokens and bad values become notes and are
    /// otherwise ignored; numbers saturate and negative clocks count as 0.
    pub fn parse(args: &[&str]) -> GoRequest {
        let mut go = GoRequest::default();
        let mut i = 0;
        while i < args.len() {
            let key = args[i];
            if takes_value(key) {
                let v = number(args.get(i + 1).copied());
                if v.is_none() {
                    go.notes.push(format!("go: bad value for {key}"));
                }
                let clock = &mut go.clock;
                match key {
                    "btime" => clock.btime = v,
                    "wtime" => clock.wtime = v,
                    "binc" => clock.binc = v,
                    "winc" => clock.winc = v,
                    "byoyomi" => clock.byoyomi = v,
                    "movetime" => clock.movetime = v,
                    "nodes" => go.nodes = v,
                    _ => go.notes.push(
                        "go depth is not supported (ignored); MCTS has no fixed depth".into(),
                    ),
                }
                i += 2;
                continue;
            }
            match key {
                "infinite" => go.infinite = true,
                "ponder" => go.ponder = true,
                "mate" => {
                    // `go mate` alone and `go mate infinite` have no limit; any other
                    // value that is not milliseconds (a keyword included) is refused.
                    match args.get(i + 1).copied() {
                        None | Some("infinite") => go.mate = Some(None),
                        Some(v) => match number(Some(v)) {
                            Some(ms) => go.mate = Some(Some(ms)),
                            None => {
                                go.refused = Some(format!(
                                    "go mate: bad value {} (expected milliseconds or infinite); no search",
                                    sanitize(v)
                                ));
                                return go;
                            }
                        },
                    }
                    i += 2;
                    continue;
                }
                "searchmoves" => {
                    go.notes
                        .push("go searchmoves is not supported (ignored)".into());
                    // Skip the move list.
                    i += 1;
                    while i < args.len() && !is_go_keyword(args[i]) {
                        i += 1;
                    }
                    continue;
                }
                other => go
                    .notes
                    .push(format!("go: unknown token {}", sanitize(other))),
            }
            i += 1;
        }
        go
    }
}

/// A `go` number: huge numbers saturate, negative ones count as 0; `None` if it is not
/// a number.
fn number(s: Option<&str>) -> Option<u64> {
    let s = s?;
    if let Ok(v) = s.parse::<u64>() {
        Some(v)
    } else if let Ok(v) = s.parse::<i128>() {
        Some(if v < 0 { 0 } else { u64::MAX })
    } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        Some(u64::MAX)
    } else {
        None
    }
}

fn takes_value(key: &str) -> bool {
    matches!(
        key,
        "btime" | "wtime" | "binc" | "winc" | "byoyomi" | "movetime" | "nodes" | "depth"
    )
}

fn is_go_keyword(t: &str) -> bool {
    takes_value(t) || matches!(t, "infinite" | "ponder" | "mate" | "searchmoves")
}

/// Whether `position` arguments are an SFEN whose side to move has no king on the board
/// (`K` for black, `k` for white): how GUIs send tsume problems.
pub fn side_to_move_has_no_king(head: &[&str]) -> bool {
    match head {
        ["sfen", board, side, ..] => match *side {
            "b" => !board.contains('K'),
            "w" => !board.contains('k'),
            _ => false,
        },
        _ => false,
    }
}

/// `score cp` from an expected score `s` (win 1, draw 0.5, loss 0) for the side to move:
/// `cp = 600 * ln(s / (1 - s))`, with `s` clamped to `[0.0001, 0.9999]` (so |cp| <= 5526).
pub fn score_to_cp(s: f32) -> i32 {
    let s = f64::from(s).clamp(1e-4, 1.0 - 1e-4);
    (600.0 * (s / (1.0 - s)).ln()).round() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_into_values() {
        assert_eq!(Command::parse("  \n"), Command::Empty);
        assert_eq!(Command::parse("isready\r\n"), Command::IsReady);
        assert_eq!(Command::parse("foo bar"), Command::Unknown("foo"));
        assert_eq!(
            Command::parse("setoption name USI Hash value 1 2"),
            Command::SetOption(Ok(("USI Hash".into(), "1 2".into())))
        );
        assert_eq!(
            Command::parse("setoption name ModelPath value <empty>"),
            Command::SetOption(Ok(("ModelPath".into(), String::new())))
        );
        assert!(matches!(
            Command::parse("setoption value 3"),
            Command::SetOption(Err(_))
        ));
        assert_eq!(
            Command::parse("position startpos moves 7g7f 3c3d"),
            Command::Position {
                head: vec!["startpos"],
                moves: vec!["7g7f", "3c3d"]
            }
        );
    }

    #[test]
    fn go_collects_limits_notes_and_refusals() {
        let go = GoRequest::parse(&[
            "btime",
            "-5",
            "byoyomi",
            "99999999999999999999999",
            "nodes",
            "40",
        ]);
        assert_eq!(go.clock.btime, Some(0));
        assert_eq!(go.clock.byoyomi, Some(u64::MAX));
        assert_eq!(go.nodes, Some(40));
        assert!(go.notes.is_empty() && go.refused.is_none());
        let go = GoRequest::parse(&["depth", "3", "searchmoves", "7g7f", "2g2f", "ponder", "x"]);
        assert!(go.ponder);
        assert_eq!(go.notes.len(), 3, "{:?}", go.notes);
        assert_eq!(GoRequest::parse(&["mate"]).mate, Some(None));
        assert_eq!(GoRequest::parse(&["mate", "infinite"]).mate, Some(None));
        assert_eq!(GoRequest::parse(&["mate", "500"]).mate, Some(Some(500)));
        let go = GoRequest::parse(&["mate", "abc"]);
        assert!(go.refused.unwrap().contains("abc"));
        assert!(side_to_move_has_no_king(&[
            "sfen",
            "7k1/9/9/9/9/9/9/9/9",
            "b",
            "G",
            "1"
        ]));
        assert!(!side_to_move_has_no_king(&["startpos"]));
    }
}
