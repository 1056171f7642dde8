// The rpath logic is shared with other tch-linking crates (see build_rpath.rs).
include!("build_rpath.rs");
