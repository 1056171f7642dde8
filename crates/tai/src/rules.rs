//! The rule options: the seed's reading by default, the contested readings switchable.

/// What the emperor (自在天王) may capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
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
