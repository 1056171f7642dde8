use shogi_rules::*;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let v = if a[1] == "mini" { Variant::Minishogi } else { Variant::Shogi };
    let p = Position::from_sfen(v, &a[2]).unwrap();
    println!("{p} check={} checkers={:?}", p.in_check(), p.checkers());
    let ms: Vec<String> = p.legal_moves().iter().map(|m| m.to_string()).collect();
    println!("{} {:?}", ms.len(), ms);
}
