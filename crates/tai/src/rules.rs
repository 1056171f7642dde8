//! The rule options: the seed's reading by default, the contested readings switchable.
//! Each option reads from a run config as its snake_case name (`undefended_royals`, `q3`).

use serde::{Deserialize, Serialize};

/// What the emperor (自在天王) may capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmperorCaptures {
    /// The seed: any non-royal piece anywhere, and a royal only if the opponent could not
    /// recapture on its square («только если эта фигура не защищена»).
    #[default]
    UndefendedRoyals,
    /// Only pieces, royal or not, that the opponent could not recapture.
    UndefendedPieces,
    /// The emperor never captures; it only jumps to empty squares.
    Never,
}

/// When a piece that can promote does so.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromotionTrigger {
    /// The seed: at the end of its first capturing move («должны продвигаться в конце
    /// своего первого захватного хода»).
    #[default]
    FirstCapture,
    /// The Chess Variant Pages' maka dai dai reading: only when it captures a promoted
    /// piece.
    CapturingPromoted,
}

/// How the lion dog (狛犬) moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LionDog {
    /// The seed: three lion steps along one line, capturing on each, jumping what it does
    /// not capture, with igui and pass (`KavKafavK`).
    #[default]
    ThreeStep,
    /// A plain rider up to three squares in the eight directions (`Q3`), as some sources
    /// have it.
    Q3,
}

/// What repeating a position does. The seed quotes two rules and prefers neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repetition {
    /// The same position with the same side to move for the fourth time is a draw
    /// (千日手, as in shogi and the JCSA's fallback: «Если ни одно из них не применимо,
    /// повторение является ничьей»). Default: it needs no notion of check or attack,
    /// which tai shogi does not define.
    #[default]
    FourfoldDraw,
    /// The strict historical rule: a move may not recreate any earlier position with the
    /// same side to move («Игрок не может сделать ход, если полученная позиция является
    /// той, которая ранее встречалась»).
    Forbidden,
}

/// Every rule option of a tai shogi game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TaiRules {
    /// The game is drawn once this many plies are played (0 = no cap).
    pub max_plies: u32,
    /// The emperor's captures.
    pub emperor: EmperorCaptures,
    /// The promotion trigger.
    pub promotion: PromotionTrigger,
    /// The lion dog's move.
    pub lion_dog: LionDog,
    /// Whether the great elephant exists. Without it the lion dog does not promote
    /// («В правилах, не использующих большого слона, собака-лев не может превратиться»).
    pub great_elephant: bool,
    /// Repetition.
    pub repetition: Repetition,
}

impl Default for TaiRules {
    fn default() -> Self {
        TaiRules {
            max_plies: 3000,
            emperor: EmperorCaptures::default(),
            promotion: PromotionTrigger::default(),
            lion_dog: LionDog::default(),
            great_elephant: true,
            repetition: Repetition::default(),
        }
    }
}

impl TaiRules {
    /// The rule options (all but the ply cap) as one byte for game records: bits 0-1
    /// the emperor, bit 2 the promotion trigger, bit 3 the lion dog, bit 4 set when the
    /// great elephant is absent, bit 5 the strict repetition rule. The seed's defaults
    /// are 0.
    pub fn options_code(&self) -> u8 {
        let emperor = match self.emperor {
            EmperorCaptures::UndefendedRoyals => 0,
            EmperorCaptures::UndefendedPieces => 1,
            EmperorCaptures::Never => 2,
        };
        emperor
            | u8::from(self.promotion == PromotionTrigger::CapturingPromoted) << 2
            | u8::from(self.lion_dog == LionDog::Q3) << 3
            | u8::from(!self.great_elephant) << 4
            | u8::from(self.repetition == Repetition::Forbidden) << 5
    }

    /// The rules of an [`TaiRules::options_code`] byte with `max_plies`; `None` for a
    /// byte no rules produce.
    pub fn from_options_code(code: u8, max_plies: u32) -> Option<TaiRules> {
        let emperor = match code & 3 {
            0 => EmperorCaptures::UndefendedRoyals,
            1 => EmperorCaptures::UndefendedPieces,
            2 => EmperorCaptures::Never,
            _ => return None,
        };
        if code >> 6 != 0 {
            return None;
        }
        let bit = |n: u8| code >> n & 1 == 1;
        Some(TaiRules {
            max_plies,
            emperor,
            promotion: if bit(2) {
                PromotionTrigger::CapturingPromoted
            } else {
                PromotionTrigger::FirstCapture
            },
            lion_dog: if bit(3) {
                LionDog::Q3
            } else {
                LionDog::ThreeStep
            },
            great_elephant: !bit(4),
            repetition: if bit(5) {
                Repetition::Forbidden
            } else {
                Repetition::FourfoldDraw
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_code_round_trips() {
        assert_eq!(TaiRules::default().options_code(), 0);
        for code in 0..=u8::MAX {
            match TaiRules::from_options_code(code, 7) {
                Some(rules) => assert_eq!(rules.options_code(), code),
                None => assert!(code & 3 == 3 || code >> 6 != 0),
            }
        }
    }
}
