//! Time management: how long one move may take.
//!
//! - `movetime T`: `T - margin`.
//! - Otherwise, with `R` the side's remaining time, `I` its increment, `B` the byoyomi
//!   and `M` the safety margin (option `ByoyomiMargin`):
//!   target = `R / moves_left + I * 3/4 + (B - M)` where `moves_left` is
//!   `max(40 - ply/8, 15)`; the hard cap is `R + B - M` (byoyomi is spent only after the
//!   main time) and the target never exceeds it. With byoyomi only (`R = 0`) this is
//!   exactly `B - M`: the engine never exceeds the byoyomi minus the margin.
//! - When `B <= M` (a byoyomi shorter than the margin) half the byoyomi is used instead.
//! - Every budget is at least 1 ms.

use std::time::Duration;

/// The clock part of a `go` command (milliseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// Black's remaining time.
    pub btime: Option<u64>,
    /// White's remaining time.
    pub wtime: Option<u64>,
    /// Black's increment.
    pub binc: Option<u64>,
    /// White's increment.
    pub winc: Option<u64>,
    /// Byoyomi.
    pub byoyomi: Option<u64>,
    /// Fixed time for this move.
    pub movetime: Option<u64>,
}

impl Clock {
    /// Whether any clock field was given.
    pub fn is_timed(&self) -> bool {
        self.btime.is_some()
            || self.wtime.is_some()
            || self.byoyomi.is_some()
            || self.movetime.is_some()
            || self.binc.is_some()
            || self.winc.is_some()
    }
}

/// The time budget for the side to move (`black` = Black/sente to move) at `ply`, or
/// `None` when the clock gives no limit.
pub fn budget(clock: &Clock, black: bool, ply: u32, margin_ms: u64) -> Option<Duration> {
    if !clock.is_timed() {
        return None;
    }
    let ms = |x: u64| Some(Duration::from_millis(x.max(1)));
    let after_margin = |t: u64| {
        if t > margin_ms { t - margin_ms } else { t / 2 }
    };
    if let Some(t) = clock.movetime {
        return ms(after_margin(t).min(MAX_BUDGET_MS));
    }
    let (rem, inc) = if black {
        (clock.btime.unwrap_or(0), clock.binc.unwrap_or(0))
    } else {
        (clock.wtime.unwrap_or(0), clock.winc.unwrap_or(0))
    };
    let byo = clock.byoyomi.unwrap_or(0);
    let moves_left = (40u64.saturating_sub(u64::from(ply) / 8)).max(15);
    let byo_part = if byo > 0 { after_margin(byo) } else { 0 };
    // The margin is kept once, from the whole of what is left: main time plus byoyomi.
    let cap = after_margin(rem.saturating_add(byo));
    // Saturating: a client may send absurd numbers (`binc 18446744073709551615`).
    let target = (rem / moves_left)
        .saturating_add(inc / 4 * 3)
        .saturating_add(byo_part);
    ms(target.min(cap).min(MAX_BUDGET_MS))
}

/// No single move is given more than a week, so `now + budget` can never overflow.
pub const MAX_BUDGET_MS: u64 = 7 * 24 * 3600 * 1000;

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(d: Option<Duration>) -> u64 {
        d.unwrap().as_millis() as u64
    }

    #[test]
    fn byoyomi_only_is_byoyomi_minus_margin() {
        let c = Clock {
            btime: Some(0),
            wtime: Some(0),
            byoyomi: Some(1000),
            ..Clock::default()
        };
        assert_eq!(ms(budget(&c, true, 10, 100)), 900);
        let short = Clock {
            byoyomi: Some(60),
            ..c
        };
        assert_eq!(ms(budget(&short, false, 10, 100)), 30);
    }

    #[test]
    fn absurd_clocks_saturate_instead_of_overflowing() {
        let c = Clock {
            btime: Some(u64::MAX),
            binc: Some(u64::MAX),
            byoyomi: Some(u64::MAX),
            ..Clock::default()
        };
        assert_eq!(ms(budget(&c, true, 0, 100)), MAX_BUDGET_MS);
        let m = Clock {
            movetime: Some(u64::MAX),
            ..Clock::default()
        };
        assert_eq!(ms(budget(&m, false, 0, u64::MAX)), MAX_BUDGET_MS);
    }

    #[test]
    fn sudden_death_share_and_cap() {
        let c = Clock {
            btime: Some(60_000),
            wtime: Some(1_000),
            ..Clock::default()
        };
        assert_eq!(ms(budget(&c, true, 0, 100)), 1500);
        assert_eq!(ms(budget(&c, false, 0, 100)), 25);
        let tiny = Clock {
            btime: Some(50),
            ..c
        };
        // Never more than the remaining time (half of it when below the margin).
        assert_eq!(ms(budget(&tiny, true, 0, 100)), 1);
    }

    #[test]
    fn increment_and_movetime() {
        let c = Clock {
            btime: Some(10_000),
            binc: Some(2_000),
            ..Clock::default()
        };
        assert_eq!(ms(budget(&c, true, 0, 100)), 250 + 1500);
        let m = Clock {
            movetime: Some(500),
            ..Clock::default()
        };
        assert_eq!(ms(budget(&m, true, 0, 50)), 450);
        assert_eq!(budget(&Clock::default(), true, 0, 50), None);
    }
}
