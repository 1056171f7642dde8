//! The progress of long commands (`match`, `curve`, `gate`, `export`): a bar redrawn in
//! place on a terminal, a plain line every so often when stderr is a file, so a match
//! of hours is never silent; and Ctrl-C, which stops between moves and keeps the games
//! played.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use shogi_arena::MatchProgress;

/// Reports how far a long command is (`12/100 games, ...`): a bar redrawn in place on
/// a terminal, else a plain line on stderr every twentieth of the work (and at its end).
pub(crate) struct Reporter {
    label: String,
    unit: &'static str,
    bar: Option<ProgressBar>,
    /// Without a terminal: a line every this many units.
    every: u64,
    /// Without a terminal: the count at the last line.
    last_line: Mutex<Option<u64>>,
}

impl Reporter {
    /// A reporter for `planned` units of work (`unit`: "games", "chunks"), its lines
    /// headed `label`.
    pub(crate) fn new(label: &str, planned: u64, unit: &'static str) -> Reporter {
        let bar = std::io::stderr().is_terminal().then(|| {
            let template = format!("{{prefix}} [{{bar:30}}] {{pos}}/{{len}} {unit}, {{msg}}");
            let style = ProgressStyle::with_template(&template)
                .expect("a valid template")
                .progress_chars("=> ");
            let bar = ProgressBar::new(planned).with_style(style);
            bar.set_prefix(label.to_string());
            bar
        });
        Reporter {
            label: label.to_string(),
            unit,
            bar,
            every: (planned / 20).max(1),
            last_line: Mutex::new(None),
        }
    }

    /// Shows `done` of `planned` with `message`: on the bar, or as a line when `every`
    /// units have passed since the last (and at the start of resumed work, and at its
    /// end).
    pub(crate) fn report(&self, done: u64, planned: u64, message: &str) {
        if let Some(bar) = &self.bar {
            bar.set_length(planned);
            bar.set_position(done);
            bar.set_message(message.to_string());
            return;
        }
        let mut last = self.last_line.lock().unwrap_or_else(|e| e.into_inner());
        let due = match *last {
            None => done > 0,
            Some(at) => done >= at + self.every || done == planned,
        };
        if due {
            eprintln!("{}: {done}/{planned} {}, {message}", self.label, self.unit);
            *last = Some(done);
        } else if last.is_none() {
            *last = Some(done);
        }
    }

    /// Clears the bar (the summary follows).
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Reports a match's standing ([`MatchProgress`]) as it goes.
pub(crate) struct MatchReporter(Reporter);

impl MatchReporter {
    /// A reporter for a match of `planned` games, its lines headed `label`.
    pub(crate) fn new(label: &str, planned: u32) -> MatchReporter {
        MatchReporter(Reporter::new(label, u64::from(planned), "games"))
    }

    /// Shows `p` ([`Reporter::report`]).
    pub(crate) fn report(&self, p: &MatchProgress) {
        self.0
            .report(u64::from(p.games), u64::from(p.planned), &standing(p));
    }

    /// Clears the bar (the summary follows).
    pub(crate) fn finish(&self) {
        self.0.finish();
    }
}

/// `A 7-0-5 (58.3%, Elo +58 [-140, +270]), 14 min, about 1 h 40 min left`.
fn standing(p: &MatchProgress) -> String {
    let t = &p.total;
    let mut s = format!("A {}-{}-{}", t.wins, t.draws, t.losses);
    if t.games() > 0 {
        let e = t.elo();
        s.push_str(&format!(
            " ({:.1}%, Elo {:+.0} [{:+.0}, {:+.0}])",
            100.0 * t.score(),
            e.elo,
            e.low,
            e.high
        ));
    }
    s.push_str(&format!(", {}", span(p.elapsed)));
    if let Some(left) = p.time_left().filter(|_| p.games < p.planned) {
        s.push_str(&format!(", about {} left", span(left)));
    }
    s
}

/// `45 s`, `14 min`, `1 h 40 min`.
fn span(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        _ => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
    }
}

/// What a long command says when interrupted: on the first Ctrl-C (or SIGTERM), what it
/// finishes before it stops; on the second, which exits at once, what is kept.
pub(crate) struct InterruptMessages {
    pub first: &'static str,
    pub second: &'static str,
}

/// The flag a long command stops on: raised by the first Ctrl-C (or SIGTERM), which lets
/// the command finish its work in progress and keep everything done; a second one exits
/// at once with status 130.
pub(crate) fn stop_on_interrupt(messages: InterruptMessages) -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            eprintln!(
                "shogi-zero: second interrupt, exiting now ({})",
                messages.second
            );
            // `_exit`, not `process::exit`: the latter runs libtorch's static destructors
            // while search, self-play and learner threads may still use them (a segmentation
            // fault at exit). What a command publishes is written aside and renamed, so it
            // is whole on disk already.
            // SAFETY: `_exit` ends the process without touching shared state.
            unsafe { libc::_exit(130) };
        }
        eprintln!(
            "shogi-zero: stopping: {} (Ctrl-C again to quit at once)",
            messages.first
        );
    })
    .context("installing the Ctrl-C / SIGTERM handler")?;
    Ok(stop)
}

/// The messages of a match or a curve: the moves in progress are finished, the games
/// played are kept in its output directory.
pub(crate) fn match_interrupt_messages() -> InterruptMessages {
    InterruptMessages {
        first: "finishing the moves in progress",
        second: "the games already written to --out are kept, and the same command resumes",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shogi_ratings::Tally;

    #[test]
    fn the_standing_says_the_score_and_the_time_left() {
        let p = MatchProgress {
            games: 12,
            planned: 100,
            resumed: 2,
            total: Tally::new(7, 0, 5),
            elapsed: Duration::from_secs(600),
        };
        let s = standing(&p);
        // Ten games in ten minutes, 88 to go.
        assert!(s.starts_with("A 7-0-5 (58.3%, Elo +58 ["), "{s}");
        assert!(s.ends_with(", 10 min, about 1 h 28 min left"), "{s}");
        let start = MatchProgress {
            games: 0,
            resumed: 0,
            total: Tally::default(),
            elapsed: Duration::from_secs(3),
            ..p
        };
        assert_eq!(standing(&start), "A 0-0-0, 3 s");
    }
}
