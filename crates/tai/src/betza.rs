//! Compiles the seed's Betza strings into move tables ([`MoveSpec`]), in Black's frame.
//!
//! The grammar covers exactly what the seed writes:
//!
//! - atoms `W F D A N K Q R B U`, a range digit after a rider (`R2`, `B5`);
//! - direction modifiers `f b l r v s` and compound directions in brackets (`[br]F`).
//!   On orthogonal atoms each letter is one direction. On diagonal atoms `f`/`b`/`l`/`r`
//!   mean both diagonals on that side. On `K`/`Q`, `f`/`b` mean the three directions of
//!   that half and `l`/`r` the straight sideways step: the evil wolf's `frlK` is «вбок или
//!   вперед; или по диагонали вперед», five directions. `ffN` is the shogi knight.
//! - the seed's multi-leg forms, read as its words describe them (see the crate docs):
//!   `NADaK` the lion, `KavKafavK` (and `avKafavK` after `Q`, `afavK` after `NADaK`) the
//!   lion dog's three steps along a line, `f[avW]`/`f[avF]` the two-step lion power
//!   along the forward lines (horned falcon, soaring eagle), and `RmaR`, `BmaB`, `mBaB`,
//!   `fmasB` the hook movers (a slide, then optionally one 90° turn).
//!
//! Anything else is an error naming the text, so a typo in `data/pieces.toml` fails the
//! catalogue's tests rather than producing a silently wrong piece.

/// A direction or leap offset `(rows, cols)` in Black's frame: forward is `-1` rows,
/// Black's left is `-1` cols.
pub type Offset = (i8, i8);

/// The knight's eight leaps, in the order the policy index numbers them (`net`).
pub(crate) const KNIGHT_LEAPS: [Offset; 8] = [
    (-2, -1),
    (-2, 1),
    (2, -1),
    (2, 1),
    (-1, -2),
    (-1, 2),
    (1, -2),
    (1, 2),
];

/// The eight unit directions.
pub const KING_DIRECTIONS: [Offset; 8] = [
    (-1, 0),
    (1, 0),
    (0, -1),
    (0, 1),
    (-1, -1),
    (-1, 1),
    (1, -1),
    (1, 1),
];

/// A slide along `dir` of at most `max` squares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Slide {
    /// Unit direction.
    pub dir: Offset,
    /// Longest slide (24 = unlimited on a 25x25 board).
    pub max: u8,
}

/// Longest slide on the board.
pub const UNLIMITED: u8 = 24;

/// A compiled move description in Black's frame. White uses the same with every offset
/// negated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MoveSpec {
    /// Single steps and jumps (`W F K D A N`): the target may be empty or an enemy.
    pub leaps: Vec<Offset>,
    /// Slides through empty squares, ending on an empty square or an enemy.
    pub slides: Vec<Slide>,
    /// First-leg directions of hook moves (鉤行): slide through empty squares, turn 90°
    /// once on any of them, slide on. The unturned slide is in `slides`.
    pub hooks: Vec<Offset>,
    /// The lion's double step (獅子): a king step onto an enemy, which is captured, then a
    /// second king step anywhere (back to the start is 居喰い igui). The lion's single
    /// jumps are in `leaps`.
    pub area_lion: bool,
    /// Multi-step lion power along single lines: `(direction, steps)`, 3 for the lion dog
    /// (狛犬), 2 for the horned falcon and soaring eagle.
    pub lines: Vec<(Offset, u8)>,
    /// The emperor's universal leap (自在天王).
    pub universal: bool,
    /// Whether two of these powers can reach the same effect (then moves are deduplicated).
    pub overlapping: bool,
    /// The farthest square (Chebyshev distance) any move reaches.
    pub reach: u8,
    /// Whether the piece can pass (step out and back through an empty square).
    pub can_pass: bool,
}

fn push_unique<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) {
        v.push(x);
    }
}

/// Direction letters and compound directions before an atom.
#[derive(Clone, Debug, Default)]
struct Modifiers {
    singles: Vec<char>,
    compounds: Vec<Offset>,
}

impl Modifiers {
    fn is_empty(&self) -> bool {
        self.singles.is_empty() && self.compounds.is_empty()
    }
}

fn letter_offset(c: char) -> Option<Offset> {
    Some(match c {
        'f' => (-1, 0),
        'b' => (1, 0),
        'l' => (0, -1),
        'r' => (0, 1),
        _ => return None,
    })
}

fn compound(text: &str) -> Option<Offset> {
    let mut chars = text.chars();
    let (a, b) = (chars.next()?, chars.next()?);
    if chars.next().is_some() {
        return None;
    }
    let (v, h) = (letter_offset(a)?, letter_offset(b)?);
    (v.1 == 0 && h.0 == 0 && v.0 != 0 && h.1 != 0).then_some((v.0, h.1))
}

/// The unit directions an atom family selects under `mods`.
fn directions(family: char, mods: &Modifiers) -> Result<Vec<Offset>, String> {
    let orth: Vec<Offset> = KING_DIRECTIONS[..4].to_vec();
    let diag: Vec<Offset> = KING_DIRECTIONS[4..].to_vec();
    let all = match family {
        'W' => orth.clone(),
        'F' => diag.clone(),
        _ => KING_DIRECTIONS.to_vec(),
    };
    if mods.is_empty() {
        return Ok(all);
    }
    let mut out = Vec::new();
    for &c in &mods.singles {
        let letters: &[char] = match c {
            'v' => &['f', 'b'],
            's' => &['l', 'r'],
            _ => std::slice::from_ref(&c),
        };
        for &l in letters {
            let (dr, dc) = letter_offset(l).ok_or_else(|| format!("unknown modifier {l}"))?;
            let picked: Vec<Offset> = match family {
                'W' => vec![(dr, dc)],
                'F' => diag
                    .iter()
                    .copied()
                    .filter(|&(r, cc)| (dr != 0 && r == dr) || (dc != 0 && cc == dc))
                    .collect(),
                _ if dr != 0 => all.iter().copied().filter(|&(r, _)| r == dr).collect(),
                _ => vec![(dr, dc)],
            };
            for o in picked {
                push_unique(&mut out, o);
            }
        }
    }
    for &o in &mods.compounds {
        if family == 'W' {
            return Err("a compound diagonal direction on an orthogonal atom".into());
        }
        push_unique(&mut out, o);
    }
    Ok(out)
}

/// Compiles one Betza string.
pub fn compile(betza: &str) -> Result<MoveSpec, String> {
    let mut spec = MoveSpec::default();
    let bytes: Vec<char> = betza.chars().collect();
    let text = |i: usize| bytes[i..].iter().collect::<String>();
    let mut i = 0;
    let mut mods = Modifiers::default();
    while i < bytes.len() {
        let rest = text(i);
        if mods.is_empty()
            && let Some(len) = multi_leg(&mut spec, &rest)?
        {
            i += len;
            continue;
        }
        if rest.starts_with("masB") {
            // fmasB: hooks from the modified diagonals, turning sideways.
            diagonal_hooks(&mut spec, &mods)?;
            mods = Modifiers::default();
            i += 4;
            continue;
        }
        let c = bytes[i];
        if c == '[' {
            let close = rest
                .find(']')
                .ok_or_else(|| format!("unclosed bracket in {betza:?}"))?;
            let inner = &rest[1..close];
            if inner == "avW" || inner == "avF" {
                // f[avW]: two steps with lion power along the modified lines.
                let family = if inner == "avW" { 'W' } else { 'F' };
                for d in directions(family, &mods)? {
                    push_unique(&mut spec.lines, (d, 2));
                }
                mods = Modifiers::default();
            } else {
                mods.compounds.push(
                    compound(inner)
                        .ok_or_else(|| format!("bad direction [{inner}] in {betza:?}"))?,
                );
            }
            i += close + 1;
            continue;
        }
        if "fblrvs".contains(c) {
            mods.singles.push(c);
            i += 1;
            continue;
        }
        if !"WFDANKQRBU".contains(c) {
            return Err(format!("unexpected {c:?} in {betza:?}"));
        }
        i += 1;
        let mut range = 0u8;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            range = range * 10 + bytes[i].to_digit(10).unwrap_or(0) as u8;
            i += 1;
        }
        let max = if range == 0 { UNLIMITED } else { range };
        atom(&mut spec, c, max, &mods)?;
        mods = Modifiers::default();
    }
    if !mods.is_empty() {
        return Err(format!("{betza:?} ends with a modifier"));
    }
    finish(&mut spec);
    Ok(spec)
}

/// The seed's multi-leg forms at the start of `rest` (no modifiers before them): adds
/// their moves to `spec` and returns their length, or `None` when `rest` starts with
/// none of them.
fn multi_leg(spec: &mut MoveSpec, rest: &str) -> Result<Option<usize>, String> {
    if let Some(len) = ["KavKafavK", "avKafavK", "afavK"]
        .iter()
        .find(|p| rest.starts_with(*p))
        .map(|p| p.len())
    {
        for d in KING_DIRECTIONS {
            push_unique(&mut spec.lines, (d, 3));
        }
        return Ok(Some(len));
    }
    if rest.starts_with("NADaK") {
        spec.area_lion = true;
        for dr in -2i8..=2 {
            for dc in -2i8..=2 {
                if (dr, dc) != (0, 0) {
                    push_unique(&mut spec.leaps, (dr, dc));
                }
            }
        }
        return Ok(Some(5));
    }
    if rest.starts_with("maR") || rest.starts_with("maB") {
        // RmaR / BmaB: the preceding rider's directions start hooks.
        let family = if rest.starts_with("maR") { 'W' } else { 'F' };
        for d in directions(family, &Modifiers::default())? {
            push_unique(&mut spec.hooks, d);
        }
        return Ok(Some(3));
    }
    if rest.starts_with("mBaB") {
        diagonal_hooks(spec, &Modifiers::default())?;
        return Ok(Some(4));
    }
    Ok(None)
}

/// Hook moves starting along the diagonals `mods` select, with those diagonals as
/// unlimited slides too (`mBaB`, `fmasB`).
fn diagonal_hooks(spec: &mut MoveSpec, mods: &Modifiers) -> Result<(), String> {
    for d in directions('F', mods)? {
        push_unique(&mut spec.hooks, d);
        push_unique(
            &mut spec.slides,
            Slide {
                dir: d,
                max: UNLIMITED,
            },
        );
    }
    Ok(())
}

/// Adds one atom (`c`, with range `max` for riders) under modifiers `mods` to `spec`.
fn atom(spec: &mut MoveSpec, c: char, max: u8, mods: &Modifiers) -> Result<(), String> {
    match c {
        'U' => spec.universal = true,
        'N' => {
            let singles: String = mods.singles.iter().collect();
            let knights: &[Offset] = match singles.as_str() {
                "" => &KNIGHT_LEAPS,
                "ff" => &[(-2, -1), (-2, 1)],
                other => return Err(format!("unsupported knight modifier {other:?}")),
            };
            for &o in knights {
                push_unique(&mut spec.leaps, o);
            }
        }
        'W' | 'F' | 'K' | 'D' | 'A' => {
            let (family, scale) = match c {
                'D' => ('W', 2),
                'A' => ('F', 2),
                other => (other, 1),
            };
            for (dr, dc) in directions(family, mods)? {
                push_unique(&mut spec.leaps, (dr * scale, dc * scale));
            }
        }
        _ => {
            let family = match c {
                'R' => 'W',
                'B' => 'F',
                _ => 'K',
            };
            for dir in directions(family, mods)? {
                match spec.slides.iter_mut().find(|s| s.dir == dir) {
                    Some(s) => s.max = s.max.max(max),
                    None => spec.slides.push(Slide { dir, max }),
                }
            }
        }
    }
    Ok(())
}

/// Drops steps that a slide already covers and fills in the derived fields.
fn finish(spec: &mut MoveSpec) {
    let slides = spec.slides.clone();
    spec.leaps.retain(|&(dr, dc)| {
        !(dr.abs() <= 1 && dc.abs() <= 1 && slides.iter().any(|s| s.dir == (dr, dc)))
    });
    spec.leaps.sort_unstable();
    spec.slides.sort_unstable();
    spec.hooks.sort_unstable();
    spec.lines.sort_unstable();
    let slide_reach = spec.slides.iter().map(|s| s.max).max().unwrap_or(0);
    let leap_reach = spec
        .leaps
        .iter()
        .map(|&(r, c)| r.unsigned_abs().max(c.unsigned_abs()))
        .max()
        .unwrap_or(0);
    let line_reach = spec.lines.iter().map(|&(_, n)| n).max().unwrap_or(0);
    spec.reach = slide_reach.max(leap_reach).max(line_reach);
    if !spec.hooks.is_empty() || spec.universal {
        spec.reach = UNLIMITED;
    }
    spec.can_pass = spec.area_lion || !spec.lines.is_empty();
    // A jump two squares along a slide's line, hooks reaching one square by two turns,
    // and lion powers next to slides or leaps can produce one effect twice.
    let jump_on_slide = spec.leaps.iter().any(|&(dr, dc)| {
        (dr.abs() == 2 || dc.abs() == 2)
            && (dr == 0 || dc == 0 || dr.abs() == dc.abs())
            && spec
                .slides
                .iter()
                .any(|s| s.dir == (dr.signum(), dc.signum()) && s.max >= 2)
    });
    spec.overlapping =
        jump_on_slide || !spec.hooks.is_empty() || spec.area_lion || !spec.lines.is_empty();
}

/// The great elephant (大象), which the seed describes only in words: slides along the
/// orthogonals and backward diagonals, up to two squares along the forward diagonals, and
/// the lion dog's three-step power along the orthogonals and backward diagonals.
pub fn great_elephant() -> MoveSpec {
    let mut spec = compile("RbBfB2").expect("valid");
    for d in [(-1, 0), (1, 0), (0, -1), (0, 1), (1, -1), (1, 1)] {
        spec.lines.push((d, 3));
    }
    finish(&mut spec);
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_atoms() {
        let gold = compile("WfF").unwrap();
        assert_eq!(
            gold.leaps,
            vec![(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, 0)]
        );
        let wolf = compile("frlK").unwrap();
        assert_eq!(
            wolf.leaps,
            vec![(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1)]
        );
        let deva = compile("f[br]FlW").unwrap();
        assert_eq!(deva.leaps, vec![(-1, -1), (-1, 1), (0, -1), (1, 1)]);
        let knight = compile("ffN").unwrap();
        assert_eq!(knight.leaps, vec![(-2, -1), (-2, 1)]);
        let dove = compile("R2B5").unwrap();
        assert_eq!(dove.slides.len(), 8);
        assert!(
            dove.slides
                .iter()
                .all(|s| s.max == if s.dir.0 == 0 || s.dir.1 == 0 { 2 } else { 5 })
        );
    }

    #[test]
    fn multi_leg_forms() {
        let lion = compile("NADaK").unwrap();
        assert!(lion.area_lion && lion.leaps.len() == 24 && lion.can_pass);
        let dog = compile("KavKafavK").unwrap();
        assert_eq!(dog.lines.len(), 8);
        assert!(dog.lines.iter().all(|&(_, n)| n == 3));
        let falcon = compile("BrlbRf[avW]fD").unwrap();
        assert_eq!(falcon.lines, vec![((-1, 0), 2)]);
        let eagle = compile("RbBf[avF]fA").unwrap();
        assert_eq!(eagle.lines, vec![((-1, -1), 2), ((-1, 1), 2)]);
        let peacock = compile("bB2fBfmasB").unwrap();
        assert_eq!(peacock.hooks, vec![(-1, -1), (-1, 1)]);
        let hook = compile("RmaR").unwrap();
        assert_eq!(hook.hooks.len(), 4);
        assert_eq!(hook.slides.len(), 4);
        let goblin = compile("WmBaB").unwrap();
        assert_eq!(
            (goblin.hooks.len(), goblin.slides.len(), goblin.leaps.len()),
            (4, 4, 4)
        );
    }

    #[test]
    fn errors_name_the_text() {
        for bad in ["X", "fR[", "R[xy]", "Wf", "[fl]W"] {
            assert!(compile(bad).is_err(), "{bad}");
        }
    }
}
