//! How a recorded game ended: the CSA end markers (`%TORYO`, ...), KIF's words for them
//! (投了, ...) and the game outcome each stands for. One table decides all three, so a
//! record read in one format and written in another keeps its result.

use shogi_game::{EndReason, Outcome};

use crate::types::Color;

/// How a recorded game ended, as the record says it (not as the rules would judge the
/// final position).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ending {
    /// `%TORYO`, 投了: the side to move resigned.
    Resignation,
    /// `%TSUMI`, 詰み: the side to move is mated (also a record that stops at a mate).
    Checkmate,
    /// `%KACHI`, 入玉勝ち: the side to move declared a win by impasse.
    Declaration,
    /// `%SENNICHITE`, 千日手: fourfold repetition, a draw.
    Repetition,
    /// `%JISHOGI`, 持将棋: a draw by impasse (the 24-point rule or agreement).
    Impasse,
    /// `%MAX_MOVES`: the move limit, a draw.
    MaxMoves,
    /// `%HIKIWAKE`, 引き分け: a draw by agreement or the organiser.
    Draw,
    /// `%TIME_UP`, 切れ負け: the side to move ran out of time.
    TimeUp,
    /// `%ILLEGAL_MOVE`, 反則負け: the side to move played an illegal move.
    IllegalMove,
    /// `%+ILLEGAL_ACTION` / `%-ILLEGAL_ACTION`: that side forfeited (an illegal action,
    /// a perpetual check on floodgate).
    IllegalAction(Color),
    /// `%CHUDAN`, 中断: the game was abandoned, no result.
    Aborted,
    /// No end marker: the record stops (a game in progress, or a fragment).
    Unfinished,
}

/// Every ending with its CSA marker, its KIF word and its name on the command line and
/// in reports. (KIF says 反則勝ち / 反則負け relative to the side to move, so
/// `IllegalAction` has no fixed word: the KIF reader and writer decide it.)
const ENDINGS: [(Ending, &str, &str, &str); 13] = [
    (Ending::Resignation, "TORYO", "投了", "resign"),
    (Ending::Checkmate, "TSUMI", "詰み", "mate"),
    (Ending::Declaration, "KACHI", "入玉勝ち", "declaration"),
    (Ending::Repetition, "SENNICHITE", "千日手", "repetition"),
    (Ending::Impasse, "JISHOGI", "持将棋", "impasse"),
    (Ending::MaxMoves, "MAX_MOVES", "最大手数", "max-moves"),
    (Ending::Draw, "HIKIWAKE", "引き分け", "draw"),
    (Ending::TimeUp, "TIME_UP", "切れ負け", "time-up"),
    (Ending::IllegalMove, "ILLEGAL_MOVE", "反則負け", "illegal"),
    (
        Ending::IllegalAction(Color::Black),
        "+ILLEGAL_ACTION",
        "",
        "illegal",
    ),
    (
        Ending::IllegalAction(Color::White),
        "-ILLEGAL_ACTION",
        "",
        "illegal",
    ),
    (Ending::Aborted, "CHUDAN", "中断", "aborted"),
    (Ending::Unfinished, "", "", "unfinished"),
];

impl Ending {
    /// Every ending a record can state with a result (not [`Ending::Aborted`] or
    /// [`Ending::Unfinished`]): what a filter may keep.
    pub const WITH_RESULT: [Ending; 11] = [
        Ending::Resignation,
        Ending::Checkmate,
        Ending::Declaration,
        Ending::Repetition,
        Ending::Impasse,
        Ending::MaxMoves,
        Ending::Draw,
        Ending::TimeUp,
        Ending::IllegalMove,
        Ending::IllegalAction(Color::Black),
        Ending::IllegalAction(Color::White),
    ];

    /// The ending a CSA marker (without `%`) stands for; unknown markers (`%ERROR`,
    /// `%FUZUMI`, ...) are `None`.
    pub fn from_csa_marker(marker: &str) -> Option<Ending> {
        ENDINGS
            .iter()
            .find(|(_, m, _, _)| !m.is_empty() && *m == marker)
            .map(|(e, _, _, _)| *e)
    }

    /// The CSA marker without `%` (`None` for [`Ending::Unfinished`]).
    pub fn csa_marker(self) -> Option<&'static str> {
        ENDINGS
            .iter()
            .find(|(e, _, _, _)| *e == self)
            .map(|(_, m, _, _)| *m)
            .filter(|m| !m.is_empty())
    }

    /// The ending a KIF word stands for (投了, 詰み, ...; also 切れ勝ち's mirror
    /// 時間切れ, and 81Dojo's `Time-up`). 反則勝ち and 反則負け depend on the side to move, `to_move`.
    pub fn from_kif_word(word: &str, to_move: Color) -> Option<Ending> {
        match word {
            "反則勝ち" => return Some(Ending::IllegalAction(to_move.flip())),
            "反則負け" => return Some(Ending::IllegalAction(to_move)),
            // 81Dojo's KIF writes its time-up in English.
            "時間切れ" | "Time-up" => return Some(Ending::TimeUp),
            "封じ手" => return Some(Ending::Unfinished),
            _ => {}
        }
        ENDINGS
            .iter()
            .find(|(_, _, k, _)| !k.is_empty() && *k == word)
            .map(|(e, _, _, _)| *e)
    }

    /// The KIF word for this ending when `to_move` is the side to move (`None` for an
    /// unfinished record).
    pub fn kif_word(self, to_move: Color) -> Option<&'static str> {
        match self {
            Ending::IllegalAction(loser) if loser == to_move => Some("反則負け"),
            Ending::IllegalAction(_) => Some("反則勝ち"),
            _ => ENDINGS
                .iter()
                .find(|(e, _, _, _)| *e == self)
                .map(|(_, _, k, _)| *k)
                .filter(|k| !k.is_empty()),
        }
    }

    /// Its short name (`resign`, `time-up`, ...), as filters and reports spell it.
    pub fn name(self) -> &'static str {
        ENDINGS
            .iter()
            .find(|(e, _, _, _)| *e == self)
            .map_or("unfinished", |(_, _, _, n)| *n)
    }

    /// The ending that records `outcome` (the export direction). A game the rules
    /// stopped at the ply limit is `MaxMoves`; a forfeit with a winner is the loser's
    /// `IllegalAction` (`%+ILLEGAL_ACTION` / `%-ILLEGAL_ACTION`, KIF 反則負け/反則勝ち),
    /// so an exported forfeit reads back with its result (an illegal move and a foul
    /// alike: the outcome keeps no more); a record's time-up is `TimeUp` again (read
    /// back right when the loser is the side to move, as a time-up's is); a draw by adjudication
    /// is `Draw`; an adjudicated win and a game without a result, which CSA has no
    /// marker for, are `Aborted`.
    pub fn of_outcome(outcome: &Outcome) -> Ending {
        match outcome.reason {
            EndReason::Checkmate | EndReason::NoLegalMoves => Ending::Checkmate,
            EndReason::Repetition => Ending::Repetition,
            EndReason::PerpetualCheck => match outcome.winner {
                Some(w) => Ending::IllegalAction(w.flip()),
                None => Ending::Repetition,
            },
            EndReason::ImpasseDeclaration => Ending::Declaration,
            EndReason::Impasse24 => Ending::Impasse,
            EndReason::Resignation => Ending::Resignation,
            EndReason::MaxPlies => Ending::MaxMoves,
            EndReason::Forfeit => match outcome.winner {
                Some(w) => Ending::IllegalAction(w.flip()),
                None => Ending::Aborted,
            },
            EndReason::TimeUp if outcome.winner.is_some() => Ending::TimeUp,
            EndReason::TimeUp => Ending::Aborted,
            EndReason::Adjudication if outcome.winner.is_none() => Ending::Draw,
            EndReason::RoyalsCaptured | EndReason::Adjudication => Ending::Aborted,
        }
    }

    /// The outcome this ending gives when `to_move` is the side to move after the last
    /// recorded move, and `no_legal_move` says whether that side has none (a record that
    /// stops at a mate without a marker). `None` where the record has no result: an
    /// abandoned or unfinished game.
    pub fn outcome(self, to_move: Color, no_legal_move: bool) -> Option<Outcome> {
        let other = to_move.flip();
        Some(match self {
            Ending::Resignation => Outcome::win(other, EndReason::Resignation),
            Ending::Checkmate => Outcome::win(other, EndReason::Checkmate),
            Ending::Declaration => Outcome::win(to_move, EndReason::ImpasseDeclaration),
            Ending::Repetition => Outcome::draw(EndReason::Repetition),
            Ending::Impasse => Outcome::draw(EndReason::Impasse24),
            Ending::MaxMoves => Outcome::draw(EndReason::MaxPlies),
            Ending::Draw => Outcome::draw(EndReason::Adjudication),
            Ending::TimeUp => Outcome::win(other, EndReason::TimeUp),
            Ending::IllegalMove => Outcome::win(other, EndReason::Forfeit),
            Ending::IllegalAction(loser) => Outcome::win(loser.flip(), EndReason::Forfeit),
            Ending::Aborted | Ending::Unfinished if no_legal_move => {
                Outcome::win(other, EndReason::Checkmate)
            }
            Ending::Aborted | Ending::Unfinished => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every outcome a game can have is exported as an ending that reads back to the
    /// same result (winner and draw), or as `Aborted` where no format has a marker.
    #[test]
    fn an_exported_outcome_reads_back_with_its_result() {
        let (wins, draws, either) = (
            [Some(Color::Black), Some(Color::White)].as_slice(),
            [None].as_slice(),
            [Some(Color::Black), Some(Color::White), None].as_slice(),
        );
        let outcomes = [
            (EndReason::Checkmate, wins),
            (EndReason::Resignation, wins),
            (EndReason::ImpasseDeclaration, wins),
            (EndReason::Forfeit, either),
            (EndReason::TimeUp, either),
            (EndReason::PerpetualCheck, wins),
            (EndReason::Repetition, draws),
            (EndReason::Impasse24, draws),
            (EndReason::MaxPlies, draws),
            (EndReason::Adjudication, either),
        ];
        for (reason, winners) in outcomes {
            for &winner in winners {
                let outcome = match winner {
                    Some(w) => Outcome::win(w, reason),
                    None => Outcome::draw(reason),
                };
                let ending = Ending::of_outcome(&outcome);
                if ending == Ending::Aborted {
                    assert!(
                        reason == EndReason::Adjudication && winner.is_some()
                            || matches!(reason, EndReason::Forfeit | EndReason::TimeUp)
                                && winner.is_none(),
                        "{outcome:?}"
                    );
                    continue;
                }
                // Read back with either side to move (the record's last mover decides).
                for to_move in Color::ALL {
                    let Some(back) = ending.outcome(to_move, false) else {
                        panic!("{outcome:?} -> {ending:?} has no result");
                    };
                    let fixed_by_side = matches!(
                        ending,
                        Ending::Resignation
                            | Ending::Checkmate
                            | Ending::Declaration
                            | Ending::TimeUp
                    );
                    if !fixed_by_side {
                        assert_eq!(back.winner, winner, "{outcome:?} -> {ending:?}");
                    }
                }
            }
        }
    }

    /// A time-up keeps its kind through export and import: the import's filters tell it
    /// from a foul.
    #[test]
    fn a_time_up_exports_as_one() {
        let lost_on_time = Outcome::win(Color::Black, EndReason::TimeUp);
        assert_eq!(Ending::of_outcome(&lost_on_time), Ending::TimeUp);
        assert_eq!(
            Ending::TimeUp.outcome(Color::White, false),
            Some(lost_on_time)
        );
        assert_eq!(
            Ending::IllegalMove.outcome(Color::White, false),
            Some(Outcome::win(Color::Black, EndReason::Forfeit))
        );
    }

    #[test]
    fn every_marker_reads_back_and_every_name_is_listed() {
        for (ending, marker, _, name) in ENDINGS {
            if !marker.is_empty() {
                assert_eq!(Ending::from_csa_marker(marker), Some(ending));
                assert_eq!(ending.csa_marker(), Some(marker));
            }
            for to_move in Color::ALL {
                if let Some(word) = ending.kif_word(to_move) {
                    // 反則負け reads back as the side to move's forfeit: the same result.
                    let back = Ending::from_kif_word(word, to_move).unwrap();
                    assert_eq!(back.outcome(to_move, false), ending.outcome(to_move, false));
                }
            }
            assert_eq!(ending.name(), name);
            assert_eq!(
                Ending::WITH_RESULT.contains(&ending),
                ending.outcome(Color::Black, false).is_some(),
                "{name}"
            );
        }
        assert_eq!(Ending::from_csa_marker("ERROR"), None);
    }

    #[test]
    fn outcomes_follow_the_side_to_move() {
        let b = Color::Black;
        let w = Color::White;
        assert_eq!(
            Ending::Resignation.outcome(b, false).unwrap().winner,
            Some(w)
        );
        assert_eq!(
            Ending::Declaration.outcome(b, false).unwrap().winner,
            Some(b)
        );
        assert_eq!(Ending::TimeUp.outcome(w, false).unwrap().winner, Some(b));
        assert_eq!(
            Ending::IllegalAction(b).outcome(b, false).unwrap().winner,
            Some(w)
        );
        assert_eq!(Ending::Repetition.outcome(b, false).unwrap().winner, None);
        assert_eq!(Ending::Aborted.outcome(b, false), None);
        assert_eq!(Ending::Unfinished.outcome(w, true).unwrap().winner, Some(b));
    }

    #[test]
    fn an_outcome_written_and_read_back_keeps_its_winner() {
        for reason in [
            EndReason::Checkmate,
            EndReason::Resignation,
            EndReason::ImpasseDeclaration,
        ] {
            for winner in Color::ALL {
                let o = Outcome::win(winner, reason);
                // The loser is to move after a mate or a resignation; the declarer after a
                // declaration.
                let to_move = if reason == EndReason::ImpasseDeclaration {
                    winner
                } else {
                    winner.flip()
                };
                let back = Ending::of_outcome(&o).outcome(to_move, false).unwrap();
                assert_eq!(back.winner, Some(winner), "{reason:?}");
            }
        }
        let perpetual = Outcome::win(Color::White, EndReason::PerpetualCheck);
        let back = Ending::of_outcome(&perpetual)
            .outcome(Color::Black, false)
            .unwrap();
        assert_eq!(back.winner, Some(Color::White));
    }
}
