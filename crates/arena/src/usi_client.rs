//! The client side of USI: drive an external engine process (`usi`, `isready`,
//! `usinewgame`, `position`, `go`, `bestmove`, `gameover`, `quit`) with a timeout on every
//! answer, so a hung, crashed or confused engine costs a forfeit, never a hang.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use shogi_rules::{Move, ShogiGame, Variant};

/// Time control and timeouts for an external engine.
#[derive(Clone, Debug, PartialEq)]
pub struct UsiTimeControl {
    /// Byoyomi per move, milliseconds (`go btime B wtime W byoyomi N`).
    pub byoyomi_ms: u64,
    /// Increment per move, milliseconds (sent as `binc`/`winc` when non-zero; then the
    /// main time below is used as the bank).
    pub increment_ms: u64,
    /// Main time per side for the whole game, milliseconds (0 = byoyomi only).
    pub main_time_ms: u64,
    /// Extra wall time granted beyond the engine's allowance before it forfeits on time
    /// (process start-up, pipes, scheduling). Milliseconds.
    pub margin_ms: u64,
    /// Longest wait for `usiok` / `readyok`, milliseconds.
    pub handshake_ms: u64,
    /// Fixed work per move: `go nodes N` (no clock is sent; the byoyomi, main time and
    /// margin above still bound the wall time a move may take before it forfeits).
    pub nodes: Option<u64>,
    /// Fixed work per move: `go depth N` (with `nodes`, both are sent).
    pub depth: Option<u32>,
    /// `setoption name NAME value VALUE` lines sent after `usiok` and before `isready`,
    /// in this order. For a minishogi game the engine's variant option
    /// ([`VARIANT_OPTIONS`]) is sent first, automatically, unless it is in this list.
    pub options: Vec<(String, String)>,
}

/// Parses `NAME=VALUE` (the value may be empty; the name may not).
pub fn parse_usi_option(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!("USI option `{text}`: expected NAME=VALUE"));
    };
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!(
            "USI option `{text}`: the name must be one word without spaces"
        ));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

impl Default for UsiTimeControl {
    fn default() -> Self {
        UsiTimeControl {
            byoyomi_ms: 1000,
            increment_ms: 0,
            main_time_ms: 0,
            margin_ms: 3000,
            handshake_ms: 10_000,
            nodes: None,
            depth: None,
            options: Vec::new(),
        }
    }
}

/// What the engine answered to `go`.
#[derive(Clone, Debug, PartialEq)]
pub enum UsiAnswer<M = Move> {
    /// A legal move.
    Move(M),
    /// `bestmove resign`.
    Resign,
    /// `bestmove win` (an impasse declaration; the caller checks it).
    DeclareWin,
    /// The engine forfeits: timeout, crash, illegal or unparsable move. The reason is
    /// recorded with the game.
    Forfeit(String),
}

/// The names engines give the option that selects the game played: Fairy-Stockfish
/// calls it `USI_Variant` in USI mode, this project's engine and others `UCI_Variant`.
pub const VARIANT_OPTIONS: [&str; 2] = ["USI_Variant", "UCI_Variant"];

/// The `setoption` line that selects the game for an engine that advertised
/// `advertised`: none for standard shogi or when `tc.options` sets a variant option by
/// hand; for minishogi the first of [`VARIANT_OPTIONS`] the engine offers. An engine
/// that offers neither would read every minishogi position as standard shogi and
/// forfeit every game: that is an error naming the options looked for.
pub fn variant_setoption(
    advertised: &[String],
    tc: &UsiTimeControl,
    variant: Variant,
) -> Result<Option<String>, String> {
    let by_hand = |n: &str| tc.options.iter().any(|(o, _)| o.eq_ignore_ascii_case(n));
    if variant != Variant::Minishogi || VARIANT_OPTIONS.iter().any(|o| by_hand(o)) {
        return Ok(None);
    }
    let offered = VARIANT_OPTIONS
        .iter()
        .find(|o| advertised.iter().any(|a| a == *o));
    match offered {
        Some(option) => Ok(Some(format!("setoption name {option} value minishogi"))),
        None => Err(format!(
            "the engine cannot be told to play minishogi: it advertises neither {} \
             (its options: {}); if another of its options selects the game, set it \
             (--a-option / --b-option NAME=VALUE)",
            VARIANT_OPTIONS.join(" nor "),
            if advertised.is_empty() {
                "none".to_string()
            } else {
                advertised.join(", ")
            }
        )),
    }
}

/// The `setoption` lines for an engine that advertised `advertised`: the game's
/// ([`variant_setoption`]), then `tc.options` in order.
pub fn setoption_lines(
    advertised: &[String],
    tc: &UsiTimeControl,
    variant: Variant,
) -> Result<Vec<String>, String> {
    let mut lines: Vec<String> = variant_setoption(advertised, tc, variant)?
        .into_iter()
        .collect();
    for (name, value) in &tc.options {
        lines.push(format!("setoption name {name} value {value}"));
    }
    Ok(lines)
}

/// The `go` command: fixed work (`go nodes N`, `go depth N`) when set, else the clock
/// (`btime`/`wtime` with `binc`/`winc` or `byoyomi`). `clock` is the remaining main time
/// of (Black, White) in milliseconds.
pub fn go_line(tc: &UsiTimeControl, clock: [u64; 2]) -> String {
    if tc.nodes.is_some() || tc.depth.is_some() {
        let mut go = String::from("go");
        if let Some(d) = tc.depth {
            go.push_str(&format!(" depth {d}"));
        }
        if let Some(n) = tc.nodes {
            go.push_str(&format!(" nodes {n}"));
        }
        return go;
    }
    let mut go = format!("go btime {} wtime {}", clock[0], clock[1]);
    if tc.increment_ms > 0 {
        go.push_str(&format!(" binc {0} winc {0}", tc.increment_ms));
    } else {
        go.push_str(&format!(" byoyomi {}", tc.byoyomi_ms));
    }
    go
}

/// A running USI engine.
#[derive(Debug)]
pub struct UsiEngine {
    command: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// `id name` from the handshake, else the command.
    pub name: String,
    /// The option names the engine advertised (`option name X ...`).
    pub advertised: Vec<String>,
    dead: bool,
    /// Nodes the last `go` searched, as its last `info` line said ([`searched_nodes`]).
    last_nodes: Option<u64>,
}

/// The nodes an engine's `info` line says its search has searched: `nps` times `time`
/// where it gives both (the search's own count, without a tree kept from earlier moves
/// that some engines include in `nodes`), else `nodes`; `None` for a line without them.
pub fn searched_nodes(info: &str) -> Option<u64> {
    let mut words = info.split_whitespace();
    if words.next() != Some("info") {
        return None;
    }
    let (mut nodes, mut nps, mut time) = (None, None, None);
    while let Some(word) = words.next() {
        match word {
            "nodes" => nodes = words.next().and_then(|v| v.parse::<u64>().ok()),
            "nps" => nps = words.next().and_then(|v| v.parse::<u64>().ok()),
            "time" => time = words.next().and_then(|v| v.parse::<u64>().ok()),
            // The rest of the line is the principal variation or a message.
            "pv" | "string" => break,
            _ => {}
        }
    }
    match (nps, time) {
        (Some(nps), Some(time)) if time > 0 => Some(nps * time / 1000),
        _ => nodes,
    }
}

impl UsiEngine {
    /// Starts `command` (run by `sh -c`, so it may carry arguments) and completes the
    /// `usi` / `isready` handshake, sending [`setoption_lines`] in between (an engine
    /// that cannot be told to play minishogi is refused there).
    pub fn start(
        command: &str,
        tc: &UsiTimeControl,
        variant: Variant,
    ) -> Result<UsiEngine, String> {
        let mut engine = UsiEngine::launch(command, tc)?;
        let setoptions = setoption_lines(&engine.advertised, tc, variant)
            .map_err(|e| format!("`{}` ({}): {e}", engine.command, engine.name))?;
        for line in setoptions {
            engine.send(&line)?;
        }
        engine.send("isready")?;
        let handshake = Duration::from_millis(tc.handshake_ms);
        engine.wait_for(handshake, |line| line.trim() == "readyok")?;
        Ok(engine)
    }

    /// Starts `command` and reads its answer to `usi` up to `usiok`: its name and the
    /// options it advertises (what a match checks before its first game).
    pub fn launch(command: &str, tc: &UsiTimeControl) -> Result<UsiEngine, String> {
        let mut launch = Command::new("sh");
        launch
            .arg("-c")
            // `exec` so the engine is the child itself and killing it leaves no orphan.
            .arg(format!("exec {command}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // Its own process group: a Ctrl-C at the terminal reaches the match, which stops
        // between moves and then quits its engines, and not the engines mid-game (a
        // killed engine would forfeit a game the match then counts).
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut launch, 0);
        let mut child = launch
            .spawn()
            .map_err(|e| format!("cannot start `{command}`: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin pipe")?;
        let stdout = child.stdout.take().ok_or("no stdout pipe")?;
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("usi-reader".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| format!("cannot start reader thread: {e}"))?;
        let mut engine = UsiEngine {
            command: command.to_string(),
            child,
            stdin,
            lines: rx,
            last_nodes: None,
            name: command.to_string(),
            advertised: Vec::new(),
            dead: false,
        };
        let handshake = Duration::from_millis(tc.handshake_ms);
        engine.send("usi")?;
        let mut name = None;
        let mut advertised = Vec::new();
        engine.wait_for(handshake, |line| {
            if let Some(n) = line.strip_prefix("id name ") {
                name = Some(n.trim().to_string());
            }
            if let Some(rest) = line.trim().strip_prefix("option name ") {
                // The name runs up to ` type ` (names are single words in practice).
                let n = rest.split(" type ").next().unwrap_or(rest).trim();
                advertised.push(n.to_string());
            }
            line.trim() == "usiok"
        })?;
        if let Some(n) = name {
            engine.name = n;
        }
        engine.advertised = advertised;
        Ok(engine)
    }

    /// Whether the process is still usable.
    pub fn is_alive(&mut self) -> bool {
        !self.dead && matches!(self.child.try_wait(), Ok(None))
    }

    /// The command line.
    pub fn command(&self) -> &str {
        &self.command
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        let result = writeln!(self.stdin, "{line}").and_then(|_| self.stdin.flush());
        result.map_err(|e| {
            self.dead = true;
            format!("engine crashed (write failed: {e})")
        })
    }

    /// Reads lines until `done` accepts one or `timeout` passes.
    fn wait_for(
        &mut self,
        timeout: Duration,
        mut done: impl FnMut(&str) -> bool,
    ) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if done(&line) {
                        return Ok(line);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.dead = true;
                    return Err(format!(
                        "timeout: no answer within {} ms",
                        timeout.as_millis()
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.dead = true;
                    let status = self
                        .child
                        .wait()
                        .map(|s| s.to_string())
                        .unwrap_or_else(|e| e.to_string());
                    return Err(format!("engine crashed (exited: {status})"));
                }
            }
        }
    }

    /// `usinewgame` (and an `isready` round trip so the engine is ready to think).
    pub fn new_game(&mut self, tc: &UsiTimeControl) -> Result<(), String> {
        self.send("usinewgame")?;
        self.send("isready")?;
        self.wait_for(Duration::from_millis(tc.handshake_ms), |l| {
            l.trim() == "readyok"
        })?;
        Ok(())
    }

    /// Sends the game so far and `go`, and waits for `bestmove`. `clock` is the
    /// remaining main time of (Black, White) in milliseconds.
    pub fn go(&mut self, game: &ShogiGame, tc: &UsiTimeControl, clock: [u64; 2]) -> UsiAnswer {
        let mut position = format!("position sfen {}", game.start_position().to_sfen());
        if !game.moves().is_empty() {
            position.push_str(" moves");
            for mv in game.moves() {
                position.push(' ');
                position.push_str(&mv.to_string());
            }
        }
        let go = go_line(tc, clock);
        if let Err(e) = self.send(&position).and_then(|_| self.send(&go)) {
            return UsiAnswer::Forfeit(e);
        }
        let side = game.position().side_to_move().index();
        let allowance = clock[side] + tc.byoyomi_ms + tc.increment_ms + tc.margin_ms;
        let mut nodes = None;
        let answer = self.wait_for(Duration::from_millis(allowance), |l| {
            nodes = searched_nodes(l).or(nodes);
            l.starts_with("bestmove")
        });
        self.last_nodes = nodes;
        let line = match answer {
            Ok(line) => line,
            Err(e) => return UsiAnswer::Forfeit(e),
        };
        let text = line.split_whitespace().nth(1).unwrap_or("");
        match text {
            "resign" => UsiAnswer::Resign,
            "win" => UsiAnswer::DeclareWin,
            "" => UsiAnswer::Forfeit("empty bestmove".into()),
            _ => match game.position().parse_usi_move(text) {
                Ok(mv) => UsiAnswer::Move(mv),
                Err(e) => UsiAnswer::Forfeit(format!("illegal move `{text}`: {e}")),
            },
        }
    }

    /// Nodes the last [`UsiEngine::go`] searched, if its `info` lines said.
    pub fn last_nodes(&self) -> Option<u64> {
        self.last_nodes
    }

    /// `gameover win|lose|draw` (best effort).
    pub fn game_over(&mut self, score: f64) {
        let word = if score > 0.75 {
            "win"
        } else if score < 0.25 {
            "lose"
        } else {
            "draw"
        };
        let _ = self.send(&format!("gameover {word}"));
    }
}

impl Drop for UsiEngine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit").and_then(|_| self.stdin.flush());
        let deadline = Instant::now() + Duration::from_millis(300);
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::searched_nodes;

    #[test]
    fn an_info_line_says_the_nodes_its_search_searched() {
        // nps x time where both are given: this search's nodes, not a kept tree's.
        let ours = "info depth 8 seldepth 14 nodes 7043 nps 4038 time 900 hashfull 76 score cp -5 pv 7g7f 3c3d";
        assert_eq!(searched_nodes(ours), Some(3634));
        assert_eq!(
            searched_nodes("info depth 3 nodes 1200 score cp 10 pv 7g7f"),
            Some(1200)
        );
        assert_eq!(searched_nodes("info nodes 50 nps 100 time 0"), Some(50));
        // A message or a move named "nodes" in a PV is not a count.
        assert_eq!(searched_nodes("info string nodes 5"), None);
        assert_eq!(searched_nodes("info depth 2 pv nodes 9"), None);
        assert_eq!(searched_nodes("bestmove 7g7f"), None);
        assert_eq!(searched_nodes("info depth 1 nodes lots"), None);
    }
}
