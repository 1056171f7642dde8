//! Self-play: [`play`] plays one game with a shared evaluator (searching every move,
//! recording visit counts and policy targets, resigning when hopeless); [`actors`] runs
//! many games on actor threads into a replay directory. The records they write, and
//! their format, are `shogi_records`'.

pub mod actors;
pub mod play;
